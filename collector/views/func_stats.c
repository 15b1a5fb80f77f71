/* func_stats: per-function self/total samples of two sides and the diff table. */
#include "func_stats.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "sat.h"

void func_stats_init(struct func_stats *fs)
{
	memset(fs, 0, sizeof(*fs));
}

void func_stats_free(struct func_stats *fs)
{
	free(fs->v);
	free(fs->hash);
	memset(fs, 0, sizeof(*fs));
}

static uint32_t h2(const char *a, const char *b)
{
	uint32_t h = 2166136261u;
	for (; *a; a++)
		h = (h ^ (unsigned char)*a) * 16777619u;
	h = (h ^ 0xff) * 16777619u;
	for (; *b; b++)
		h = (h ^ (unsigned char)*b) * 16777619u;
	return h;
}

static int rehash(struct func_stats *fs, size_t cap)
{
	int32_t *h = malloc(cap * sizeof(*h));
	if (!h)
		return -ENOMEM;
	for (size_t i = 0; i < cap; i++)
		h[i] = -1;
	for (size_t i = 0; i < fs->n; i++) {
		size_t j = h2(fs->v[i].name, fs->v[i].module) & (cap - 1);
		while (h[j] >= 0)
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)i;
	}
	free(fs->hash);
	fs->hash = h;
	fs->caphash = cap;
	return 0;
}

static int32_t find(struct func_stats *fs, const char *name, const char *module)
{
	if (fs->caphash < 2 * (fs->n + 1) && rehash(fs, fs->caphash ? fs->caphash * 2 : 256) < 0)
		return -ENOMEM;
	size_t j = h2(name, module) & (fs->caphash - 1);
	for (; fs->hash[j] >= 0; j = (j + 1) & (fs->caphash - 1)) {
		const struct func_stat *f = &fs->v[fs->hash[j]];
		if (strcmp(f->name, name) == 0 && strcmp(f->module, module) == 0)
			return fs->hash[j];
	}
	if (fs->n == fs->cap) {
		size_t nc = fs->cap ? fs->cap * 2 : 256;
		struct func_stat *nv = realloc(fs->v, nc * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		fs->v = nv;
		fs->cap = nc;
	}
	fs->v[fs->n] = (struct func_stat){.name = name, .module = module};
	fs->hash[j] = (int32_t)fs->n;
	return (int32_t)fs->n++;
}

int func_stats_add(struct func_stats *fs, const struct stack_set *s, int side)
{
	side = side ? 1 : 0;
	int32_t seen[STACKS_MAX_FRAMES];
	for (size_t i = 0; i < s->nstacks; i++) {
		const struct vstack *v = &s->stacks[i];
		sat_inc_u64(&fs->samples[side], v->count);
		size_t ns = 0;
		for (uint32_t k = 0; k < v->n; k++) {
			const struct vframe *f = &s->frames[v->first + k];
			int32_t id = find(fs, stack_set_str(s, f->name), stack_set_str(s, f->module));
			if (id < 0)
				return id;
			bool dup = false;
			for (size_t q = 0; q < ns && !dup; q++)
				dup = seen[q] == id;
			if (!dup) {
				seen[ns++] = id;
				sat_inc_u64(&fs->v[id].total[side], v->count);
			}
			if (k + 1 == v->n)
				sat_inc_u64(&fs->v[id].self[side], v->count);
		}
	}
	return 0;
}

static double share(uint64_t x, uint64_t all)
{
	return all ? 100.0 * (double)x / (double)all : 0.0;
}

static double delta(const struct func_stats *fs, const struct func_stat *f)
{
	return share(f->self[1], fs->samples[1]) - share(f->self[0], fs->samples[0]);
}

static int by_delta(const void *a, const void *b, void *ctx)
{
	double x = delta(ctx, a), y = delta(ctx, b);
	if (x != y)
		return x < y ? 1 : -1;
	return strcmp(((const struct func_stat *)a)->name, ((const struct func_stat *)b)->name);
}

static void row(const struct func_stats *fs, const struct func_stat *f, int json, bool first, FILE *out)
{
	if (json) {
		fprintf(out, "%s{\"function\":", first ? "" : ",");
		json_string(out, f->name);
		fputs(",\"module\":", out);
		json_string(out, f->module);
		fprintf(out, ",\"self_a\":%llu,\"self_b\":%llu,\"total_a\":%llu,\"total_b\":%llu,\"change_pct\":",
			(unsigned long long)f->self[0], (unsigned long long)f->self[1], (unsigned long long)f->total[0],
			(unsigned long long)f->total[1]);
		json_double(out, delta(fs, f));
		fputc('}', out);
		return;
	}
	fprintf(out, "  %+8.2f%% %7.2f%% %7.2f%% %9llu %9llu  %-20s %s\n", delta(fs, f), share(f->self[0], fs->samples[0]),
		share(f->self[1], fs->samples[1]), (unsigned long long)f->self[0], (unsigned long long)f->self[1],
		f->module, f->name);
}

int func_stats_diff_table(struct func_stats *fs, unsigned limit, int json, FILE *out)
{
	if (!limit)
		limit = 15;
	if (fs->n > 1)
		qsort_r(fs->v, fs->n, sizeof(*fs->v), by_delta, fs);
	/* the hash indexes are stale after sorting: rebuild */
	if (fs->n && rehash(fs, fs->caphash) < 0)
		return -ENOMEM;
	size_t ng = 0, nl = 0;
	while (ng < fs->n && ng < limit && delta(fs, &fs->v[ng]) > 0)
		ng++;
	while (nl < fs->n - ng && nl < limit && delta(fs, &fs->v[fs->n - 1 - nl]) < 0)
		nl++;
	if (json) {
		fprintf(out, "{\"samples_a\":%llu,\"samples_b\":%llu,\"gains\":[", (unsigned long long)fs->samples[0],
			(unsigned long long)fs->samples[1]);
		for (size_t i = 0; i < ng; i++)
			row(fs, &fs->v[i], 1, i == 0, out);
		fputs("],\"losses\":[", out);
		for (size_t i = 0; i < nl; i++)
			row(fs, &fs->v[fs->n - 1 - i], 1, i == 0, out);
		fputs("]}\n", out);
	} else {
		fprintf(out, "A: %llu samples, B: %llu samples; change = B's self share - A's\n",
			(unsigned long long)fs->samples[0], (unsigned long long)fs->samples[1]);
		const char *hdr = "  %9s %8s %8s %9s %9s  %-20s %s\n";
		fprintf(out, "gains:\n");
		fprintf(out, hdr, "change", "A self", "B self", "A", "B", "module", "function");
		for (size_t i = 0; i < ng; i++)
			row(fs, &fs->v[i], 0, i == 0, out);
		if (!ng)
			fputs("  none\n", out);
		fprintf(out, "losses:\n");
		fprintf(out, hdr, "change", "A self", "B self", "A", "B", "module", "function");
		for (size_t i = 0; i < nl; i++)
			row(fs, &fs->v[fs->n - 1 - i], 0, i == 0, out);
		if (!nl)
			fputs("  none\n", out);
	}
	return ferror(out) ? -EIO : 0;
}
