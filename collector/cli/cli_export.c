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
#include "report/cl_data.h"

#define COUNTER_PID 0

static const char export_usage[] =
	"usage: collector export --store PATH --session N --perfetto OUT.json [--check full|quick|off]\n"
	"  --perfetto FILE  write Chrome/Perfetto trace JSON (open it in ui.perfetto.dev); '-' = stdout\n"
	CLI_CHECK_HELP
	"Tracks: OpenCL commands (one per queue, per process), CPU counters, Mali GPU counters (rates per ms).\n";

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

static int export_perfetto(struct store *st, int64_t sid, FILE *f, uint64_t *events)
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
	fputs("\n]}\n", f);
	*events = e.n;
	cl_data_free(&d);
	return rc;
}

static int session_exists(const struct store_session_row *row, void *arg)
{
	return 0;
}

int cli_export(int argc, char **argv)
{
	static const struct option opts[] = {
		{"store", required_argument, NULL, 's'},
		{"session", required_argument, NULL, 'n'},
		{"perfetto", required_argument, NULL, 'p'},
		{"help", no_argument, NULL, 'h'},
		{"check", required_argument, NULL, 'K'},
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *sess = NULL, *outp = NULL;
	unsigned check = CLI_CHECK_DEFAULT;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'n': sess = optarg; break;
		case 'p': outp = optarg; break;
		case 'K': if (cli_check_arg("export", optarg, &check)) return 2; break;
		case 'h': fputs(export_usage, stdout); return 0;
		default: fputs(export_usage, stderr); return 2;
		}
	}
	long long id = cli_session_id(sess);
	if (optind != argc || !path || id <= 0 || !outp) {
		fprintf(stderr, "collector export: --store PATH, a positive --session N and --perfetto FILE are required\n%s",
			export_usage);
		return 2;
	}
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return 1;
	if (store_get_session(st, id, session_exists, NULL) == -ENOENT) {
		log_error("no session %lld in %s: see `collector sessions --store %s`", id, path, path);
		store_close(st);
		return 1;
	}
	bool to_stdout = strcmp(outp, "-") == 0;
	char tmp[4096];
	FILE *f = stdout;
	if (!to_stdout) {
		if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", outp, (long)getpid()) >= (int)sizeof(tmp) ||
		    !(f = fopen(tmp, "w"))) {
			log_error("cannot write %s: %s: check that the directory exists and is writable", outp,
				  strerror(errno ? errno : ENAMETOOLONG));
			store_close(st);
			return 1;
		}
	}
	uint64_t events = 0;
	int rc = export_perfetto(st, id, f, &events);
	if (!to_stdout) {
		int bad = ferror(f);
		if (fclose(f) != 0 || bad)
			rc = rc < 0 ? rc : -EIO;
		if (rc == 0 && rename(tmp, outp) < 0)
			rc = -errno;
		if (rc < 0)
			unlink(tmp);
	}
	store_close(st);
	if (rc < 0) {
		log_error("export of session %lld failed: %s", id, strerror(-rc));
		return 1;
	}
	if (!to_stdout)
		fprintf(stderr, "wrote %s: %llu trace events (open it in https://ui.perfetto.dev)\n", outp,
			(unsigned long long)events);
	return 0;
}
