/* collector report --opencl: per-kernel (and per transfer kind) device time
 * statistics, the command DAG's critical path and parallelism, and what the
 * layer dropped. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cl_data.h"
#include "json.h"
#include "log.h"
#include "report.h"
#include "text_safe.h"

struct group {
	const char *name;
	bool kernel;
	uint64_t *dur;
	size_t n, cap;
	uint64_t total, delay_total, bytes;
	size_t ndelay, critical;
};

struct stats {
	struct group *g;
	size_t n;
};

static struct group *group_for(struct stats *s, const char *name, bool kernel)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->g[i].kernel == kernel && strcmp(s->g[i].name, name) == 0)
			return &s->g[i];
	struct group *ng = realloc(s->g, (s->n + 1) * sizeof(*ng));
	if (!ng)
		return NULL;
	s->g = ng;
	struct group *g = &s->g[s->n++];
	memset(g, 0, sizeof(*g));
	g->name = name;
	g->kernel = kernel;
	return g;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->kernel != y->kernel)
		return x->kernel ? -1 : 1;
	return x->total > y->total ? -1 : x->total < y->total;
}

/* Nearest rank. */
static uint64_t pct(const struct group *g, unsigned p)
{
	if (!g->n)
		return 0;
	size_t rank = (g->n * p + 99) / 100;
	return g->dur[rank ? rank - 1 : 0];
}

static int build_stats(const struct cl_data *d, struct stats *s)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct cl_data_cmd *c = &d->cmds[i];
		uint64_t dur = cl_data_duration(c);
		if (!dur && !c->r.end_ns)
			continue; /* not timed */
		struct group *g = group_for(s, c->name, c->r.kernel_id != 0);
		if (!g)
			return -ENOMEM;
		if (g->n == g->cap) {
			size_t cap = g->cap ? g->cap * 2 : 64;
			uint64_t *nd = realloc(g->dur, cap * sizeof(*nd));
			if (!nd)
				return -ENOMEM;
			g->dur = nd;
			g->cap = cap;
		}
		g->dur[g->n++] = dur;
		g->total += dur;
		g->bytes += c->r.bytes;
		if (c->r.queued_ns && c->r.start_ns >= c->r.queued_ns) {
			g->delay_total += c->r.start_ns - c->r.queued_ns;
			g->ndelay++;
		}
		if (d->dag.critical && d->dag.critical[i])
			g->critical++;
	}
	for (size_t i = 0; i < s->n; i++)
		if (s->g[i].n > 1)
			qsort(s->g[i].dur, s->g[i].n, sizeof(uint64_t), cmp_u64);
	if (s->n > 1) /* qsort must not see a NULL array, even empty */
		qsort(s->g, s->n, sizeof(*s->g), cmp_group);
	return 0;
}

static void free_stats(struct stats *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->g[i].dur);
	free(s->g);
}

struct drops {
	int32_t pid;
	uint64_t dropped, commands, forced, layer_events;
};

/* Per pid: the layer's drop counter (the largest dropped_before seen). */
static size_t collect_drops(const struct cl_data *d, struct drops *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < d->n; i++) {
		const struct store_cl_command_row *r = &d->cmds[i].r;
		if (n == 0 || out[n - 1].pid != r->pid) {
			if (n == max)
				break;
			memset(&out[n], 0, sizeof(out[n]));
			out[n++].pid = r->pid;
		}
		struct drops *p = &out[n - 1];
		p->commands++;
		p->forced += r->forced_profiling;
		p->layer_events += r->layer_event;
		if (r->dropped_before > p->dropped)
			p->dropped = r->dropped_before;
	}
	return n;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static void print_text(const struct cl_data *d, const struct stats *s, const struct drops *dr, size_t ndr,
		       unsigned limit, FILE *out)
{
	fprintf(out, "OpenCL: %zu commands, device busy %.3f ms (union of command intervals)\n", d->n,
		ms(d->busy_ns));
	fprintf(out, "%-28s %7s %11s %10s %10s %10s %11s %6s %5s\n", "kernel / command", "count", "total ms",
		"mean ms", "p50 ms", "p95 ms", "q->start ms", "busy%", "crit");
	for (size_t i = 0; i < s->n && i < limit; i++) {
		const struct group *g = &s->g[i];
		char name[29];
		snprintf(name, sizeof(name), "%s%s", g->name, g->kernel ? "" : " *");
		fprintf(out, "%-28s %7zu %11.3f %10.3f %10.3f %10.3f %11.3f %6.1f %5zu\n", name, g->n, ms(g->total),
			g->n ? ms(g->total) / (double)g->n : 0, ms(pct(g, 50)), ms(pct(g, 95)),
			g->ndelay ? ms(g->delay_total) / (double)g->ndelay : 0,
			d->busy_ns ? 100.0 * (double)g->total / (double)d->busy_ns : 0, g->critical);
	}
	if (s->n > limit)
		fprintf(out, "(%zu more rows: --limit)\n", s->n - limit);
	fprintf(out, "  * transfers and other commands; busy%% = share of GPU busy time; crit = on the critical path\n");
	for (size_t i = 0; i < s->n; i++)
		if (!s->g[i].kernel && s->g[i].bytes && s->g[i].total)
			fprintf(out, "  %-14s %12llu bytes  %8.3f GB/s\n", s->g[i].name,
				(unsigned long long)s->g[i].bytes, (double)s->g[i].bytes / (double)s->g[i].total);
	const struct cldag *g = &d->dag;
	fprintf(out,
		"DAG: %zu nodes, %zu edges (%zu wait-list, %zu in-order, %zu buffer RAW); work %.3f ms, critical path "
		"%.3f ms over %zu commands, parallelism %.2f\n",
		g->n_nodes, g->n_edges, g->n_wait_edges, g->n_order_edges, g->n_raw_edges, ms(g->work_ns),
		ms(g->span_ns), g->path_len, g->parallelism);
	if (g->n_unresolved)
		fprintf(out, "  %zu dependencies point at commands not in the store (dropped)\n", g->n_unresolved);
	fprintf(out, "critical path:");
	for (size_t i = 0; i < g->path_len && i < limit; i++) {
		const struct cl_data_cmd *c = &d->cmds[g->path[i]];
		fprintf(out, "%s %s#%llu (%.3f ms)", i ? " ->" : "", c->name, (unsigned long long)c->r.id,
			ms(cl_data_duration(c)));
	}
	fprintf(out, "%s\n", g->path_len > limit ? " -> ..." : "");
	for (size_t i = 0; i < ndr; i++)
		fprintf(out,
			"pid %d: %llu commands stored, %llu dropped by the layer, %llu on queues it made "
			"profiling, %llu with events it created\n",
			dr[i].pid, (unsigned long long)dr[i].commands, (unsigned long long)dr[i].dropped,
			(unsigned long long)dr[i].forced, (unsigned long long)dr[i].layer_events);
}

static void print_json(const struct cl_data *d, const struct stats *s, const struct drops *dr, size_t ndr,
		       FILE *out)
{
	fprintf(out, "{\"opencl\":{");
	json_key(out, 1, "commands");
	json_u64(out, d->n);
	json_key(out, 0, "busy_ns");
	json_u64(out, d->busy_ns);
	json_key(out, 0, "groups");
	fputc('[', out);
	for (size_t i = 0; i < s->n; i++) {
		const struct group *g = &s->g[i];
		fprintf(out, "%s{", i ? "," : "");
		json_key(out, 1, "name");
		json_string(out, g->name);
		json_key(out, 0, "kernel");
		fputs(g->kernel ? "true" : "false", out);
		json_key(out, 0, "count");
		json_u64(out, g->n);
		json_key(out, 0, "total_ns");
		json_u64(out, g->total);
		json_key(out, 0, "mean_ns");
		json_double(out, g->n ? (double)g->total / (double)g->n : 0);
		json_key(out, 0, "p50_ns");
		json_u64(out, pct(g, 50));
		json_key(out, 0, "p95_ns");
		json_u64(out, pct(g, 95));
		json_key(out, 0, "queue_to_start_mean_ns");
		json_double(out, g->ndelay ? (double)g->delay_total / (double)g->ndelay : 0);
		json_key(out, 0, "busy_share");
		json_double(out, d->busy_ns ? (double)g->total / (double)d->busy_ns : 0);
		json_key(out, 0, "bytes");
		json_u64(out, g->bytes);
		json_key(out, 0, "on_critical_path");
		json_u64(out, g->critical);
		fputc('}', out);
	}
	fputc(']', out);
	const struct cldag *g = &d->dag;
	json_key(out, 0, "dag");
	fputc('{', out);
	json_key(out, 1, "nodes");
	json_u64(out, g->n_nodes);
	json_key(out, 0, "edges");
	json_u64(out, g->n_edges);
	json_key(out, 0, "wait_edges");
	json_u64(out, g->n_wait_edges);
	json_key(out, 0, "order_edges");
	json_u64(out, g->n_order_edges);
	json_key(out, 0, "raw_edges");
	json_u64(out, g->n_raw_edges);
	json_key(out, 0, "work_ns");
	json_u64(out, g->work_ns);
	json_key(out, 0, "span_ns");
	json_u64(out, g->span_ns);
	json_key(out, 0, "parallelism");
	json_double(out, g->parallelism);
	json_key(out, 0, "critical_path");
	fputc('[', out);
	for (size_t i = 0; i < g->path_len; i++) {
		const struct cl_data_cmd *c = &d->cmds[g->path[i]];
		fprintf(out, "%s{", i ? "," : "");
		json_key(out, 1, "pid");
		json_i64(out, c->r.pid);
		json_key(out, 0, "id");
		json_u64(out, c->r.id);
		json_key(out, 0, "name");
		json_string(out, c->name);
		json_key(out, 0, "ns");
		json_u64(out, cl_data_duration(c));
		fputc('}', out);
	}
	fputs("]}", out);
	json_key(out, 0, "processes");
	fputc('[', out);
	for (size_t i = 0; i < ndr; i++) {
		fprintf(out, "%s{", i ? "," : "");
		json_key(out, 1, "pid");
		json_i64(out, dr[i].pid);
		json_key(out, 0, "commands");
		json_u64(out, dr[i].commands);
		json_key(out, 0, "dropped");
		json_u64(out, dr[i].dropped);
		fputc('}', out);
	}
	fputs("]}}\n", out);
}

int report_opencl(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	struct cl_data d;
	int rc = cl_data_load(st, sid, &d);
	if (rc < 0) {
		log_error("opencl report: cannot load the commands of session %lld: %s", (long long)sid,
			  strerror(-rc));
		return rc;
	}
	if (d.n == 0 && !o->json) {
		fprintf(out, "OpenCL: no commands in session %lld (profile with `agent run -- ./app`)\n",
			(long long)sid);
		cl_data_free(&d);
		return 0;
	}
	struct stats s = {0};
	struct drops dr[64];
	rc = build_stats(&d, &s);
	if (rc == 0) {
		size_t ndr = collect_drops(&d, dr, 64);
		if (o->json)
			print_json(&d, &s, dr, ndr, out);
		else {
			FILE *t = text_safe_open(out); /* kernel names are the agent's */
			print_text(&d, &s, dr, ndr, o->limit ? o->limit : 20, t);
			rc = text_safe_close(t, out);
		}
	}
	free_stats(&s);
	cl_data_free(&d);
	return rc;
}
