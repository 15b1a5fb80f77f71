/* collector report --opencl: per-kernel (and per transfer kind) device time
 * statistics, the command DAG's critical path and parallelism, what the
 * layer dropped, and what became of the program (crashed, why no command).
 * A kernel row is what a user means by a kernel: one declaration (name,
 * program hash, build options: CLBlast's tuned variants are separate
 * declarations) launched with one NDRange shape (work dimension, global and
 * local sizes); transfers are grouped by command type. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "cl_data.h"
#include "json.h"
#include "log.h"
#include "report.h"
#include "signame.h"
#include "store/store_target.h"
#include "text_safe.h"

#define NAME_COL_MIN 16
#define NAME_COL_MAX 40 /* longer names get a line of their own */

struct group {
	const char *name;
	bool kernel;
	uint32_t kernel_id, type, work_dim;
	uint64_t global[3], local[3]; /* local all 0: chosen by the runtime */
	uint64_t program_hash;
	const char *options;
	uint64_t *dur;
	size_t n, cap;
	uint64_t total, delay_total, bytes;
	size_t ndelay, critical;
};

struct stats {
	struct group *g;
	size_t n, last; /* last: the group found last (commands come in runs) */
};

static bool same_group(const struct group *g, const struct cl_data_cmd *c)
{
	const struct store_cl_command_row *r = &c->r;
	if (g->kernel != (r->kernel_id != 0))
		return false;
	if (!g->kernel)
		return strcmp(g->name, c->name) == 0;
	return g->kernel_id == r->kernel_id && g->work_dim == r->work_dim &&
	       memcmp(g->global, r->global_size, sizeof(g->global)) == 0 &&
	       memcmp(g->local, r->local_size, sizeof(g->local)) == 0;
}

static struct group *group_for(struct stats *s, const struct cl_data *d, const struct cl_data_cmd *c)
{
	if (s->last < s->n && same_group(&s->g[s->last], c))
		return &s->g[s->last];
	for (size_t i = 0; i < s->n; i++)
		if (same_group(&s->g[i], c)) {
			s->last = i;
			return &s->g[i];
		}
	struct group *ng = realloc(s->g, (s->n + 1) * sizeof(*ng));
	if (!ng)
		return NULL;
	s->g = ng;
	s->last = s->n;
	struct group *g = &s->g[s->n++];
	memset(g, 0, sizeof(*g));
	const struct store_cl_command_row *r = &c->r;
	g->name = c->name;
	g->kernel = r->kernel_id != 0;
	g->type = r->type;
	if (g->kernel) {
		g->kernel_id = r->kernel_id;
		g->work_dim = r->work_dim;
		memcpy(g->global, r->global_size, sizeof(g->global));
		memcpy(g->local, r->local_size, sizeof(g->local));
		if (r->kernel_id < d->n_kernels) {
			g->program_hash = d->kernels[r->kernel_id].program_hash;
			g->options = d->kernels[r->kernel_id].options;
		}
	}
	return g;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static enum report_sort sort_by;

static int cmp_group(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->kernel != y->kernel)
		return x->kernel ? -1 : 1;
	switch (sort_by) {
	case REPORT_SORT_COUNT:
		if (x->n != y->n)
			return x->n > y->n ? -1 : 1;
		break;
	case REPORT_SORT_MEAN: {
		double mx = (double)x->total / (double)x->n, my = (double)y->total / (double)y->n;
		if (mx != my)
			return mx > my ? -1 : 1;
		break;
	}
	case REPORT_SORT_NAME: {
		int c = strcmp(x->name, y->name);
		if (c)
			return c;
		break;
	}
	case REPORT_SORT_TOTAL:
		break;
	}
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	return x->kernel_id < y->kernel_id ? -1 : x->kernel_id > y->kernel_id;
}

/* Nearest rank. */
static uint64_t pct(const struct group *g, unsigned p)
{
	if (!g->n)
		return 0;
	size_t rank = (g->n * p + 99) / 100;
	return g->dur[rank ? rank - 1 : 0];
}

static int build_stats(const struct cl_data *d, struct stats *s, enum report_sort sort)
{
	for (size_t i = 0; i < d->n; i++) {
		const struct cl_data_cmd *c = &d->cmds[i];
		uint64_t dur = cl_data_duration(c);
		if (!dur && !c->r.end_ns)
			continue; /* not timed */
		struct group *g = group_for(s, d, c);
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
	sort_by = sort;
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

/* Map and unmap hand the host a pointer (zero-copy where host and device share memory): their
 * bytes are the region's size, not data moved, so bytes / time is no bandwidth. CL_COMMAND_MAP_BUFFER,
 * CL_COMMAND_MAP_IMAGE, CL_COMMAND_UNMAP_MEM_OBJECT, CL_COMMAND_SVM_MAP, CL_COMMAND_SVM_UNMAP
 * (OpenCL 3.0 cl.h values). */
static bool moves_no_data(uint32_t type)
{
	return type == 0x11FB || type == 0x11FC || type == 0x11FD || type == 0x120C || type == 0x120D;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

/* "4096", "64x64", "-" (none). */
static void dims(char *buf, size_t len, uint32_t dim, const uint64_t *v)
{
	size_t off = 0;
	buf[0] = 0;
	for (uint32_t i = 0; i < dim && i < 3 && v[0]; i++)
		off += (size_t)snprintf(buf + off, off < len ? len - off : 0, "%s%" PRIu64, i ? "x" : "", v[i]);
	if (!buf[0])
		snprintf(buf, len, "-");
}

static const char *inside_words(uint32_t v)
{
	return v == 1 ? "no" : v == 2 ? "forwarding" : v == 3 ? "own" : "unknown";
}

/* What became of the program: one line when a signal ended it. */
static void print_program_text(const struct store_target_end_row *te, FILE *out)
{
	if (!te->signal)
		return;
	fprintf(out, "program: %s signal %u (%s%s), exit code %d\n",
		sig_is_crash((int)te->signal) ? "CRASHED by" : "killed by", te->signal, sig_name((int)te->signal),
		te->core_dumped ? ", core dumped" : "", te->exit_code);
	if (te->capture_inside == 3)
		fprintf(out, "  the capture library was in a call of its own then: %s (may be the profiler's fault)\n",
			te->capture_detail);
	else if (te->capture_inside == 2)
		fprintf(out, "  the capture library was only forwarding the program's calls then: %s\n",
			te->capture_detail);
	else if (te->capture_inside == 1)
		fprintf(out, "  the capture library was not inside any call then\n");
}

static void print_program_json(const struct store_target_end_row *te, FILE *out)
{
	json_key(out, 0, "program");
	fputc('{', out);
	json_i64_key(out, 1, "pid", te->pid);
	json_i64_key(out, 0, "exit_code", te->exit_code);
	json_u64_key(out, 0, "signal", te->signal);
	json_str_key(out, 0, "signal_name", te->signal ? sig_name((int)te->signal) : "");
	json_key(out, 0, "crashed");
	fputs(te->signal && sig_is_crash((int)te->signal) ? "true" : "false", out);
	if (te->signal) { /* what the capture library was doing when the signal came */
		json_str_key(out, 0, "capture_inside", inside_words(te->capture_inside));
		json_str_key(out, 0, "capture_detail", te->capture_detail);
	}
	fputc('}', out);
}

static void print_row(const struct group *g, int w, const struct cl_data *d, FILE *out)
{
	char name[NAME_COL_MAX + 3], prog[12], gl[48], lo[48];
	snprintf(name, sizeof(name), "%s%s", g->name, g->kernel ? "" : " *");
	if ((int)strlen(name) > w) { /* the whole name on its own line, the numbers under it */
		fprintf(out, "%s%s\n", g->name, g->kernel ? "" : " *");
		name[0] = 0;
	}
	snprintf(prog, sizeof(prog), g->kernel ? "%08" PRIx64 : "-", g->program_hash >> 32);
	dims(gl, sizeof(gl), g->kernel ? g->work_dim : 0, g->global);
	dims(lo, sizeof(lo), g->kernel ? g->work_dim : 0, g->local);
	fprintf(out, "%-*s %-8s %14s %11s %7zu %11.3f %10.3f %10.3f %10.3f %11.3f %6.1f %5zu\n", w, name, prog, gl, lo,
		g->n, ms(g->total), g->n ? ms(g->total) / (double)g->n : 0, ms(pct(g, 50)), ms(pct(g, 95)),
		g->ndelay ? ms(g->delay_total) / (double)g->ndelay : 0,
		d->busy_ns ? 100.0 * (double)g->total / (double)d->busy_ns : 0, g->critical);
}

static void print_text(const struct cl_data *d, const struct stats *s, const struct drops *dr, size_t ndr,
		       unsigned limit, const struct store_target_end_row *te, FILE *out)
{
	fprintf(out, "OpenCL: %zu commands, device busy %.3f ms (union of command intervals)\n", d->n,
		ms(d->busy_ns));
	print_program_text(te, out);
	if (te->opencl_note[0]) /* what the session lacks: commands never timed */
		fprintf(out, "note: %s\n", te->opencl_note);
	int w = NAME_COL_MIN;
	for (size_t i = 0; i < s->n && i < limit; i++) {
		int len = (int)strlen(s->g[i].name) + (s->g[i].kernel ? 0 : 2);
		if (len > w)
			w = len > NAME_COL_MAX ? NAME_COL_MAX : len;
	}
	fprintf(out, "%-*s %-8s %14s %11s %7s %11s %10s %10s %10s %11s %6s %5s\n", w, "kernel / command", "program",
		"global", "local", "count", "total ms", "mean ms", "p50 ms", "p95 ms", "q->start ms", "busy%", "crit");
	for (size_t i = 0; i < s->n && i < limit; i++)
		print_row(&s->g[i], w, d, out);
	if (s->n > limit)
		fprintf(out, "(%zu more rows: --limit)\n", s->n - limit);
	fprintf(out, "  * transfers and other commands; one row per kernel, program (hash; build options in --json)\n"
		     "  and NDRange shape; busy%% = share of GPU busy time; crit = on the critical path\n");
	for (size_t i = 0; i < s->n; i++)
		if (!s->g[i].kernel && s->g[i].bytes && s->g[i].total) {
			if (moves_no_data(s->g[i].type)) /* bytes mapped, not moved: no bandwidth to speak of */
				fprintf(out, "  %-14s %12llu bytes  (mapped, not copied: no bandwidth)\n", s->g[i].name,
					(unsigned long long)s->g[i].bytes);
			else
				fprintf(out, "  %-14s %12llu bytes  %8.3f GB/s\n", s->g[i].name,
					(unsigned long long)s->g[i].bytes,
					(double)s->g[i].bytes / (double)s->g[i].total);
		}
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

static void json_dims(FILE *out, const char *key, uint32_t dim, const uint64_t *v, bool null_if_zero)
{
	json_key(out, 0, key);
	if (null_if_zero && (!dim || !v[0])) {
		fputs("null", out);
		return;
	}
	fputc('[', out);
	for (uint32_t i = 0; i < dim && i < 3; i++) {
		if (i)
			fputc(',', out);
		json_u64(out, v[i]);
	}
	fputc(']', out);
}

static void print_group_json(const struct group *g, const struct cl_data *d, FILE *out)
{
	fputc('{', out);
	json_str_key(out, 1, "name", g->name);
	json_key(out, 0, "kernel");
	fputs(g->kernel ? "true" : "false", out);
	if (g->kernel) {
		char hash[24];
		snprintf(hash, sizeof(hash), "0x%016" PRIx64, g->program_hash);
		json_u64_key(out, 0, "kernel_id", g->kernel_id);
		json_str_key(out, 0, "program_hash", hash);
		json_str_key(out, 0, "build_options", g->options ? g->options : "");
		json_u64_key(out, 0, "work_dim", g->work_dim);
		json_dims(out, "global", g->work_dim, g->global, false);
		json_dims(out, "local", g->work_dim, g->local, true);
	}
	json_u64_key(out, 0, "count", g->n);
	json_u64_key(out, 0, "total_ns", g->total);
	json_num_key(out, 0, "mean_ns", g->n ? (double)g->total / (double)g->n : 0);
	json_u64_key(out, 0, "p50_ns", pct(g, 50));
	json_u64_key(out, 0, "p95_ns", pct(g, 95));
	json_num_key(out, 0, "queue_to_start_mean_ns", g->ndelay ? (double)g->delay_total / (double)g->ndelay : 0);
	json_num_key(out, 0, "busy_share", d->busy_ns ? (double)g->total / (double)d->busy_ns : 0);
	json_u64_key(out, 0, "bytes", g->bytes);
	json_u64_key(out, 0, "on_critical_path", g->critical);
	fputc('}', out);
}

static void print_json(const struct cl_data *d, const struct stats *s, const struct drops *dr, size_t ndr,
		       const struct store_target_end_row *te, bool have_te, FILE *out)
{
	fprintf(out, "{\"opencl\":{");
	json_u64_key(out, 1, "commands", d->n);
	json_u64_key(out, 0, "busy_ns", d->busy_ns);
	if (have_te) {
		print_program_json(te, out);
		if (!d->n)
			json_str_key(out, 0, "why_no_commands", te->opencl_note);
		else if (te->opencl_note[0])
			json_str_key(out, 0, "note", te->opencl_note);
	}
	json_key(out, 0, "groups");
	fputc('[', out);
	for (size_t i = 0; i < s->n; i++) {
		if (i)
			fputc(',', out);
		print_group_json(&s->g[i], d, out);
	}
	fputc(']', out);
	const struct cldag *g = &d->dag;
	json_key(out, 0, "dag");
	fputc('{', out);
	json_u64_key(out, 1, "nodes", g->n_nodes);
	json_u64_key(out, 0, "edges", g->n_edges);
	json_u64_key(out, 0, "wait_edges", g->n_wait_edges);
	json_u64_key(out, 0, "order_edges", g->n_order_edges);
	json_u64_key(out, 0, "raw_edges", g->n_raw_edges);
	json_u64_key(out, 0, "work_ns", g->work_ns);
	json_u64_key(out, 0, "span_ns", g->span_ns);
	json_num_key(out, 0, "parallelism", g->parallelism);
	json_key(out, 0, "critical_path");
	fputc('[', out);
	for (size_t i = 0; i < g->path_len; i++) {
		const struct cl_data_cmd *c = &d->cmds[g->path[i]];
		fprintf(out, "%s{", i ? "," : "");
		json_i64_key(out, 1, "pid", c->r.pid);
		json_u64_key(out, 0, "id", c->r.id);
		json_str_key(out, 0, "name", c->name);
		json_u64_key(out, 0, "ns", cl_data_duration(c));
		fputc('}', out);
	}
	fputs("]}", out);
	json_key(out, 0, "processes");
	fputc('[', out);
	for (size_t i = 0; i < ndr; i++) {
		fprintf(out, "%s{", i ? "," : "");
		json_i64_key(out, 1, "pid", dr[i].pid);
		json_u64_key(out, 0, "commands", dr[i].commands);
		json_u64_key(out, 0, "dropped", dr[i].dropped);
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
	struct store_target_end_row *te = calloc(1, sizeof(*te));
	int have_te = te ? store_target_end(st, sid, te) : -ENOMEM;
	if (have_te < 0) {
		log_error("opencl report: cannot load what became of the program of session %lld: %s", (long long)sid,
			  strerror(-have_te));
		cl_data_free(&d);
		free(te);
		return have_te;
	}
	if (d.n == 0 && !o->json) {
		FILE *t = text_safe_open(out); /* the note and the detail are the agent's */
		fprintf(t, "OpenCL: no commands in session %lld: %s\n", (long long)sid,
			have_te && te->opencl_note[0] ? te->opencl_note : "profile with `agent run -- ./app`");
		if (have_te)
			print_program_text(te, t);
		cl_data_free(&d);
		free(te);
		return text_safe_close(t, out);
	}
	struct stats s = {0};
	struct drops dr[64];
	rc = build_stats(&d, &s, o->sort);
	if (rc == 0) {
		size_t ndr = collect_drops(&d, dr, 64);
		if (o->json)
			print_json(&d, &s, dr, ndr, te, have_te == 1, out);
		else {
			FILE *t = text_safe_open(out); /* kernel names are the agent's */
			print_text(&d, &s, dr, ndr, o->limit ? o->limit : 20, te, t);
			rc = text_safe_close(t, out);
		}
	}
	free_stats(&s);
	cl_data_free(&d);
	free(te);
	return rc;
}
