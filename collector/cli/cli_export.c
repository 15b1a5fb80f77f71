/* collector export --store PATH --session N --perfetto OUT.json
 * Chrome / Perfetto trace-event JSON (ui.perfetto.dev, chrome://tracing):
 *   - one process per profiled pid, one track (thread) per OpenCL queue, each
 *     command a complete event on the host timeline (device clock mapped with
 *     the offset estimated from enqueue times), critical-path commands flagged;
 *   - flow arrows for the DAG's wait-list and buffer dependencies;
 *   - CPU counter rows (counter_samples) as counter tracks.
 *   - Mali GPU counter dumps (gpu_samples) as counter tracks, per millisecond.
 * Timestamps: microseconds after the session's Hello.base_ns. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "json.h"
#include "store/store_gpu.h"
#include "log.h"
#include "query/query.h"
#include "report/cl_data.h"
#include "report/text_safe.h"
#include "views/flame_tree.h"
#include "views/folded.h"
#include "views/pprof.h"
#include "views/stacks_query.h"

#define COUNTER_PID 0

static const char export_usage[] =
	"usage: collector export --store PATH --session N --perfetto OUT.json [--check full|quick|off]\n"
	"       collector export --store PATH [--session N | filters] [--pprof OUT.pb.gz] [--folded OUT.txt]\n"
	"  --perfetto FILE  write Chrome/Perfetto trace JSON of one session (open it in ui.perfetto.dev)\n"
	"  --pprof FILE     the CPU samples as a pprof profile (gzip'd profile.proto: go tool pprof FILE)\n"
	"  --folded FILE    the CPU samples as folded stacks (FlameGraph's flamegraph.pl, speedscope)\n"
	"  FILE '-' = stdout\n" QUERY_OPTS_HELP CLI_CHECK_HELP
	"Perfetto tracks: OpenCL commands (one per queue, per process), CPU counters, Mali GPU counters (rates\n"
	"per ms), CPU samples per process and sampling interval.\n";

static void ts_us(FILE *f, int64_t ns)
{
	if (ns < 0)
		ns = 0;
	fprintf(f, "%lld.%03lld", (long long)(ns / 1000), (long long)(ns % 1000));
}

struct emit {
	FILE *f;
	bool first;
	uint64_t n;
};

static void sep(struct emit *e)
{
	fputs(e->first ? "\n" : ",\n", e->f);
	e->first = false;
	e->n++;
}

static void meta(struct emit *e, int64_t pid, int64_t tid, const char *what, const char *name)
{
	sep(e);
	fprintf(e->f, "{\"ph\":\"M\",\"pid\":%lld,\"tid\":%lld,\"name\":\"%s\",\"args\":{\"name\":", (long long)pid,
		(long long)tid, what);
	json_string(e->f, name);
	fputs("}}", e->f);
}

static void sizes(FILE *f, const char *key, const uint64_t *v, uint32_t dim)
{
	json_key(f, 0, key);
	fputc('[', f);
	for (uint32_t i = 0; i < dim; i++)
		fprintf(f, "%s%llu", i ? "," : "", (unsigned long long)v[i]);
	fputc(']', f);
}

static void emit_commands(struct emit *e, const struct cl_data *d)
{
	int32_t last_pid = 0;
	bool have_pid = false;
	/* Track names: processes, then queues as they appear (cmds are by pid, id). */
	for (size_t i = 0; i < d->n; i++) {
		const struct store_cl_command_row *r = &d->cmds[i].r;
		if (!have_pid || r->pid != last_pid) {
			char name[64];
			snprintf(name, sizeof(name), "OpenCL pid %d", r->pid);
			meta(e, r->pid, 0, "process_name", name);
			have_pid = true;
			last_pid = r->pid;
		}
		bool seen = false;
		for (size_t j = i; j-- > 0 && d->cmds[j].r.pid == r->pid;)
			if (d->cmds[j].r.queue_id == r->queue_id) {
				seen = true;
				break;
			}
		if (!seen) {
			char name[64];
			snprintf(name, sizeof(name), "queue %u", r->queue_id);
			meta(e, r->pid, r->queue_id, "thread_name", name);
		}
	}
	for (size_t i = 0; i < d->n; i++) {
		const struct cl_data_cmd *c = &d->cmds[i];
		const struct store_cl_command_row *r = &c->r;
		if (!r->start_ns || r->end_ns < r->start_ns)
			continue;
		sep(e);
		fprintf(e->f, "{\"ph\":\"X\",\"cat\":\"opencl\",\"pid\":%d,\"tid\":%u,\"name\":", r->pid, r->queue_id);
		json_string(e->f, c->name);
		fputs(",\"ts\":", e->f);
		ts_us(e->f, (int64_t)r->start_ns + d->device_to_host_ns);
		fputs(",\"dur\":", e->f);
		ts_us(e->f, (int64_t)(r->end_ns - r->start_ns));
		fputs(",\"args\":{", e->f);
		json_key(e->f, 1, "id");
		json_u64(e->f, r->id);
		json_key(e->f, 0, "type");
		json_string(e->f, cl_command_type_name(r->type));
		json_key(e->f, 0, "critical_path");
		fputs(d->dag.critical && d->dag.critical[i] ? "true" : "false", e->f);
		json_key(e->f, 0, "queued_to_start_us");
		json_double(e->f, r->start_ns >= r->queued_ns ? (double)(r->start_ns - r->queued_ns) / 1e3 : 0);
		if (r->work_dim) {
			sizes(e->f, "global", r->global_size, r->work_dim);
			if (r->local_size[0])
				sizes(e->f, "local", r->local_size, r->work_dim);
		}
		if (r->bytes) {
			json_key(e->f, 0, "bytes");
			json_u64(e->f, r->bytes);
		}
		fputs("}}", e->f);
	}
	/* Dependencies between queues (same-queue order is visible already). */
	for (size_t k = 0; k < d->dag.n_edges; k++) {
		const struct cldag_edge *ed = &d->dag.edges[k];
		const struct store_cl_command_row *a = &d->cmds[ed->from].r, *b = &d->cmds[ed->to].r;
		if (a->queue_id == b->queue_id || !a->start_ns || !b->start_ns)
			continue;
		sep(e);
		fprintf(e->f, "{\"ph\":\"s\",\"cat\":\"dep\",\"name\":\"dep\",\"id\":%zu,\"pid\":%d,\"tid\":%u,\"ts\":",
			k + 1, a->pid, a->queue_id);
		ts_us(e->f, (int64_t)a->end_ns + d->device_to_host_ns - 1);
		fputs("}", e->f);
		sep(e);
		fprintf(e->f,
			"{\"ph\":\"f\",\"bp\":\"e\",\"cat\":\"dep\",\"name\":\"dep\",\"id\":%zu,\"pid\":%d,\"tid\":%u,"
			"\"ts\":",
			k + 1, b->pid, b->queue_id);
		ts_us(e->f, (int64_t)b->start_ns + d->device_to_host_ns);
		fputs("}", e->f);
	}
}

static int emit_sample(const struct store_sample_row *row, void *arg)
{
	struct emit *e = arg;
	sep(e);
	fputs("{\"ph\":\"C\",\"pid\":" "0" ",\"name\":", e->f);
	json_string(e->f, row->name);
	fputs(",\"ts\":", e->f);
	ts_us(e->f, (int64_t)row->t_ns);
	fputs(",\"args\":{\"value\":", e->f);
	json_u64(e->f, row->value);
	fputs("}}", e->f);
	return 0;
}

#define GPU_PID 1000000

static void gpu_point(struct emit *e, const char *name, uint64_t t_ns, double v)
{
	sep(e);
	fprintf(e->f, "{\"ph\":\"C\",\"pid\":%d,\"name\":", GPU_PID);
	json_string(e->f, name);
	fputs(",\"ts\":", e->f);
	ts_us(e->f, (int64_t)t_ns);
	fputs(",\"args\":{\"per_ms\":", e->f);
	json_double(e->f, v);
	fputs("}}", e->f);
}

/* Mali counters (the ones with a role in the derived metrics) as counter
 * tracks: each dump interval's increment as a rate per millisecond, 0 where
 * no dump had counts. */
static int emit_gpu(struct emit *e, struct store *st, int64_t sid)
{
	struct store_gpu_series g;
	int rc = store_gpu_load(st, sid, &g);
	if (rc < 0 || g.nrows == 0)
		return rc;
	meta(e, GPU_PID, 0, "process_name", "Mali GPU counters (agent --gpu)");
	for (size_t c = 0; c < g.ncols; c++) {
		if (!g.cols[c].role)
			continue;
		char name[96];
		snprintf(name, sizeof(name), "GPU %s /ms", g.cols[c].name);
		for (size_t r = 0; r < g.nrows; r++) {
			if (r > 0 && g.t0[r] != g.t1[r - 1])
				gpu_point(e, name, g.t1[r - 1], 0);
			double ms = (double)(g.t1[r] - g.t0[r]) / 1e6;
			gpu_point(e, name, g.t0[r], ms > 0 ? (double)g.values[r * g.ncols + c] / ms : 0);
		}
		gpu_point(e, name, g.t1[g.nrows - 1], 0);
	}
	store_gpu_free(&g);
	return 0;
}

/* The CPU samples as a counter track of each profiled process (its real pid,
 * so the track sits beside that process's OpenCL queues): the samples of each
 * sampling interval, on the session's clock like the rest of the trace. */
static int emit_cpu(struct emit *e, const struct query_result *cpu)
{
	int32_t *seen = NULL; /* pids named so far, sorted */
	size_t nseen = 0;
	for (size_t i = 0; i < cpu->npoints; i++) {
		const struct query_point *p = &cpu->points[i];
		size_t lo = 0, hi = nseen;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (seen[mid] < p->pid)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo == nseen || seen[lo] != p->pid) {
			int32_t *ns = realloc(seen, (nseen + 1) * sizeof(*ns));
			if (!ns) {
				free(seen);
				return -ENOMEM;
			}
			seen = ns;
			memmove(seen + lo + 1, seen + lo, (nseen - lo) * sizeof(*seen));
			seen[lo] = p->pid;
			nseen++;
			char name[300];
			snprintf(name, sizeof(name), "%s (pid %d)", p->comm[0] ? p->comm : "?", p->pid);
			meta(e, p->pid, 0, "process_name", name);
		}
		sep(e);
		fprintf(e->f, "{\"ph\":\"C\",\"pid\":%d,\"name\":\"CPU samples\",\"ts\":", p->pid);
		ts_us(e->f, p->session_t_ns);
		fputs(",\"args\":{\"samples\":", e->f);
		json_u64(e->f, p->count);
		fputs("}}", e->f);
	}
	free(seen);
	return 0;
}

static int export_perfetto(struct store *st, int64_t sid, const struct query_result *cpu, FILE *f, uint64_t *events)
{
	struct cl_data d;
	int rc = cl_data_load(st, sid, &d);
	if (rc < 0)
		return rc;
	struct emit e = {.f = f, .first = true};
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	meta(&e, COUNTER_PID, 0, "process_name", "CPU counters (agent)");
	emit_commands(&e, &d);
	rc = store_list_samples(st, sid, emit_sample, &e);
	if (rc == 0)
		rc = emit_gpu(&e, st, sid);
	if (rc == 0 && cpu)
		rc = emit_cpu(&e, cpu);
	fputs("\n]}\n", f);
	*events = e.n;
	cl_data_free(&d);
	return rc;
}

static int session_exists(const struct store_session_row *row, void *arg)
{
	return 0;
}

/* Write through fn into outp ("-": stdout) via a temporary file renamed at
 * the end, so a failed export leaves no half file. */
static int write_out(const char *outp, int (*fn)(void *ctx, FILE *f), void *ctx)
{
	bool to_stdout = strcmp(outp, "-") == 0;
	char tmp[4096];
	FILE *f = stdout;
	if (!to_stdout) {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", outp, (long)getpid()) >= (int)sizeof(tmp) ||
		    !(f = fopen(tmp, "w"))) {
			log_error("cannot write %s: %s: check that the directory exists and is writable", outp,
				  strerror(errno ? errno : ENAMETOOLONG));
			return -EIO;
		}
	}
	int rc = fn(ctx, f);
	if (!to_stdout) {
		int bad = ferror(f);
		if (fclose(f) != 0 || bad)
			rc = rc < 0 ? rc : -EIO;
		if (rc == 0 && rename(tmp, outp) < 0)
			rc = -errno;
		if (rc < 0)
			unlink(tmp);
	} else if (fflush(stdout) != 0 && rc == 0) {
		rc = -EIO;
	}
	return rc;
}

struct perfetto_ctx {
	struct store *st;
	int64_t sid;
	const struct query_result *cpu;
	uint64_t events;
};

static int perfetto_fn(void *ctx, FILE *f)
{
	struct perfetto_ctx *c = ctx;
	return export_perfetto(c->st, c->sid, c->cpu, f, &c->events);
}

struct stacks_ctx {
	const struct stack_set *set;
	bool pprof;
	size_t lines;
};

static int stacks_fn(void *ctx, FILE *f)
{
	struct stacks_ctx *c = ctx;
	if (c->pprof)
		return pprof_write(c->set, f);
	struct flame_tree t;
	int rc = flame_tree_init(&t);
	if (rc < 0)
		return rc;
	struct flame_opts fo = {.process_level = true};
	rc = flame_tree_add(&t, c->set, 0, &fo);
	if (rc == 0) {
		FILE *ts = text_safe_open(f); /* names come from the agent's mappings and tasks */
		rc = folded_write(&t, 0, ts);
		int rc2 = text_safe_close(ts, f);
		if (rc == 0)
			rc = rc2;
	}
	flame_tree_free(&t);
	return rc;
}

int cli_export(int argc, char **argv)
{
	enum { OPT_STORE = 0x5300, OPT_PERFETTO, OPT_PPROF, OPT_FOLDED, OPT_CHECK };
	static const struct option opts[] = {
		QUERY_LONG_OPTIONS,
		{"store", required_argument, NULL, OPT_STORE},
		{"perfetto", required_argument, NULL, OPT_PERFETTO},
		{"pprof", required_argument, NULL, OPT_PPROF},
		{"folded", required_argument, NULL, OPT_FOLDED},
		{"help", no_argument, NULL, 'h'},
		{"check", required_argument, NULL, OPT_CHECK},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *perfetto = NULL, *pprof = NULL, *folded = NULL;
	unsigned check = CLI_CHECK_DEFAULT;
	struct query_opts qo;
	query_opts_init(&qo, 0);
	char err[256];
	int ch, rc, status = 2;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		if ((rc = query_opt(&qo, ch, optarg, err, sizeof(err))) != 0) {
			if (rc < 0) {
				fprintf(stderr, "collector export: %s\n", err);
				goto out;
			}
			continue;
		}
		switch (ch) {
		case OPT_STORE: path = optarg; break;
		case OPT_PERFETTO: perfetto = optarg; break;
		case OPT_PPROF: pprof = optarg; break;
		case OPT_FOLDED: folded = optarg; break;
		case OPT_CHECK:
			if (cli_check_arg("export", optarg, &check))
				goto out;
			break;
		case 'h': fputs(export_usage, stdout); status = 0; goto out;
		default: fputs(export_usage, stderr); goto out;
		}
	}
	if (optind != argc || !path || (!perfetto && !pprof && !folded)) {
		fprintf(stderr, "collector export: --store PATH and --perfetto, --pprof or --folded FILE are required\n%s",
			export_usage);
		goto out;
	}
	long long id = qo.f.nsessions == 1 ? qo.f.sessions[0] : 0;
	if (perfetto && (id <= 0 || query_filter_any(&qo.f))) {
		fprintf(stderr, "collector export: --perfetto exports one session: give one --session N (no other "
				"filters)\n%s",
			export_usage);
		goto out;
	}
	if (!perfetto && qo.f.nsessions == 0 && !query_filter_any(&qo.f))
		fprintf(stderr, "collector export: no --session and no filter: exporting every CPU sample of the store\n");
	if (query_opts_check(&qo, err, sizeof(err)) < 0) {
		fprintf(stderr, "collector export: %s\n", err);
		goto out;
	}
	if (perfetto)
		cli_out_ext_check("export --perfetto", perfetto, "trace-event JSON", (const char *const[]){".json", NULL});
	if (pprof)
		cli_out_ext_check("export --pprof", pprof, "a gzip'd profile.proto",
				  (const char *const[]){".pb.gz", ".pprof", NULL});
	status = 1;
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		goto out;
	for (size_t i = 0; i < qo.f.nsessions; i++)
		if (store_get_session(st, qo.f.sessions[i], session_exists, NULL) == -ENOENT) {
			log_error("no session %lld in %s: see `collector sessions --store %s`",
				  (long long)qo.f.sessions[i], path, path);
			store_close(st);
			goto out;
		}
	qo.series = perfetto != NULL;
	struct query_result *r = NULL;
	struct stack_set set;
	stack_set_init(&set);
	rc = query_run(st, &qo, &r);
	if (rc == 0)
		rc = stack_set_from_query(r, &set);
	if (rc < 0)
		log_error("export: reading the CPU samples: %s", strerror(-rc));
	if (rc == 0 && perfetto) {
		struct perfetto_ctx pc = {.st = st, .sid = id, .cpu = r};
		rc = write_out(perfetto, perfetto_fn, &pc);
		if (rc < 0)
			log_error("export of session %lld failed: %s", id, strerror(-rc));
		else if (strcmp(perfetto, "-") != 0)
			fprintf(stderr, "wrote %s: %llu trace events (open it in https://ui.perfetto.dev)\n", perfetto,
				(unsigned long long)pc.events);
	}
	for (int k = 0; k < 2 && rc == 0; k++) {
		const char *outp = k == 0 ? pprof : folded;
		if (!outp)
			continue;
		struct stacks_ctx sc = {.set = &set, .pprof = k == 0};
		rc = write_out(outp, stacks_fn, &sc);
		if (rc < 0)
			log_error("export to %s failed: %s", outp, strerror(-rc));
		else if (strcmp(outp, "-") != 0)
			fprintf(stderr, "wrote %s: %llu samples in %zu stacks%s\n", outp, (unsigned long long)set.total,
				set.nstacks, k == 0 ? " (read it with `go tool pprof -top FILE`)" : " (folded stacks)");
	}
	stack_set_free(&set);
	query_result_free(r);
	store_close(st);
	if (rc == 0)
		status = 0;
out:
	query_opts_free(&qo);
	return status;
}
