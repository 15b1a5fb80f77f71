/* collector report --store PATH [--since T] [--until T] [--agent ID] [--comm NAME | --pid N] [--by G]:
 *   the top table of the samples the filters select, across sessions and agents (collector/query/);
 * collector report --store PATH --session N [--top] [--opencl] [--json] [--symfs DIR] [--limit N] [--sort K]
 *                  [--format text|json|html] [--machine FILE] [--kernel-model FILE] */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "fail.h"
#include "log.h"
#include "query/query.h"
#include "report/fleet_sens.h"
#include "report/overview.h"
#include "report/gpu.h"
#include "report/report.h"

static const char report_usage[] =
	"usage: collector report --store PATH [--since T] [--until T] [--agent ID] [--comm NAME | --pid N]\n"
	"                        [--by function|module|process|thread|agent|stack] [--json] [--limit N]\n"
	"       collector report --store PATH --sensitivity [filters] [--by function|module] [--machine FILE]\n"
	"                        [--json] [--limit N]\n"
	"       collector report --store PATH --session N [--top] [--offcpu] [--opencl] [--gpu] [--json] [--symfs DIR]\n"
	"                        [--limit N]\n"
	"                        [--debug-dir DIR] [--kallsyms FILE]\n"
	"                        [--format text|json|html] [--machine FILE] [--kernel-model FILE] [--check full|quick|off]\n"
	"                        [--sort KEY]\n"
	"  --top      functions with the most CPU samples (symbols resolved on this host)\n"
	"  --offcpu   wall time on and off the CPU per process and thread (off% = off / (on + off)), from the\n"
	"             bpf back end's sched_switch accounting\n"
	"  --opencl   OpenCL kernels: count, total, mean, p50/p95 device time, queue delay, GPU share; one row\n"
	"             per kernel, program and NDRange shape (global / local work sizes); whether the program\n"
	"             crashed, and why a session has no commands\n"
	"  --sort     order of the --opencl rows: total (default), count, mean or name\n"
	"  --gpu      Mali GPU counters per kernel (agent run --gpu) and the counter-derived roofline dot\n"
	"  --symfs    look for the profiled binaries under DIR (like perf --symfs)\n"
	"  --limit    rows per table (default 20)\n"
	"Without a section flag: the overview (board and kernel, top functions, OpenCL kernels, roofline,\n"
	"latency sensitivity, calibration summary) in --format text (default), json or html (one\n"
	"self-contained page with the charts inline; --json is --format json).\n"
	"  --machine FILE       a machine model (collector calibrate --model); overrides the calibration the\n"
	"                       session would use (its own, else its board's latest)\n"
	"  --kernel-model FILE  per-kernel 'NAME ops=N bytes=N' (per work-item) for the roofline dots\n"
	"Without --session, with a list of sessions (--session 3,4) or with any filter: the top table of\n"
	"the CPU samples the filters select across the store's sessions and agents, with self and total\n"
	"counts and process, pid, agent and module columns.\n"
	"  --sensitivity  instead: latency sensitivity (Lambda*a0) per function (or module) over the trace\n"
	"             windows the filters select across sessions and agents (window start in --since/--until,\n"
	"             its pid in --pid, --comm the traced program's name), each window weighed by its\n"
	"             instructions, with the windows, sessions and agents each row rests on; each session\n"
	"             with its own calibration, or --machine FILE for all\n" QUERY_OPTS_HELP CLI_CHECK_HELP;

static int overview(struct store *st, long long id, const struct report_opts *ro, const char *format,
		    const char *machine, const char *kmodel)
{
	struct overview_opts oo = {.machine = machine, .kernel_model = kmodel, .symfs = ro->symfs,
				   .debug_dir = ro->debug_dir, .kallsyms = ro->kallsyms,
				   .limit = ro->limit, .sections = true, .json = strcmp(format, "json") == 0};
	struct overview ov;
	int rc = overview_load(st, id, &oo, &ov);
	if (rc == -ENOENT)
		log_error("no session %lld in the store (list them with collector sessions)", id);
	else if (rc < 0 && rc != -EINVAL)
		log_error("cannot load session %lld: %s", id, strerror(-rc));
	if (rc < 0)
		return rc;
	if (strcmp(format, "json") == 0)
		rc = overview_json(&ov, stdout);
	else if (strcmp(format, "html") == 0)
		rc = overview_html(&ov, stdout);
	else
		rc = overview_text(&ov, stdout);
	overview_free(&ov);
	return rc;
}

static int fleet_sensitivity(struct store *st, const struct query_opts *qo, const struct report_opts *ro,
			     const char *machine)
{
	struct fleet_sens fs;
	int rc = fleet_sens_load(st, qo, machine, NULL, &fs);
	if (rc < 0)
		log_error("report: cannot load the trace windows' sensitivity: %s", strerror(-rc));
	else
		rc = ro->json ? fleet_sens_json(&fs, qo, ro->limit, stdout) : fleet_sens_text(&fs, qo, ro->limit, stdout);
	fleet_sens_free(&fs);
	return rc;
}

static int fleet_report(const char *path, unsigned check, const struct query_opts *qo,
			const struct report_opts *ro, bool sensitivity, const char *machine)
{
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return 1;
	if (sensitivity) {
		int rc = fleet_sensitivity(st, qo, ro, machine);
		store_close(st);
		return rc < 0 ? 1 : 0;
	}
	struct query_result *r;
	struct query_opts q = *qo;
	/* the rows show a pid only where all of theirs is one: a process name's stacks merged across its
	 * pids and tids (a board's programs restarted under new pids), except --by thread's (tid rows) */
	q.merge_tasks = qo->by != QUERY_BY_THREAD;
	/* --by thread reads no frame: one stack per task, not per task and chain (its rows, not "[other]",
	 * over a store of many short-lived processes) */
	q.tasks_only = qo->by == QUERY_BY_THREAD;
	int rc = query_run(st, &q, &r);
	if (rc < 0) {
		log_error("report: cannot query the store: %s", strerror(-rc));
	} else {
		rc = report_query_top(r, qo->by, ro->limit, ro->json, stdout);
		query_result_free(r);
	}
	store_close(st);
	return rc < 0 ? 1 : 0;
}

int cli_report(int argc, char **argv)
{
	static const struct option opts[] = {
		{"store", required_argument, NULL, 's'}, {"session", required_argument, NULL, 'n'},
		{"top", no_argument, NULL, 't'},         {"opencl", no_argument, NULL, 'o'},
		{"json", no_argument, NULL, 'j'},        {"symfs", required_argument, NULL, 'f'},
		{"limit", required_argument, NULL, 'l'}, {"help", no_argument, NULL, 'h'},
		{"format", required_argument, NULL, 'F'}, {"machine", required_argument, NULL, 'M'},
		{"kernel-model", required_argument, NULL, 'k'}, {"gpu", no_argument, NULL, 'g'},
		{"check", required_argument, NULL, 'K'}, {"sort", required_argument, NULL, 'S'},
		{"debug-dir", required_argument, NULL, 'D'}, {"kallsyms", required_argument, NULL, 'Y'},
		{"offcpu", no_argument, NULL, 'C'}, {"sensitivity", no_argument, NULL, 'V'},
		QUERY_LONG_OPTIONS_FILTERS,
		{NULL, 0, NULL, 0},
	};
	const char *path = NULL, *sess = NULL, *format = NULL, *machine = NULL, *kmodel = NULL;
	bool top = false, opencl = false, gpu = false, offcpu = false, sensitivity = false;
	unsigned check = CLI_CHECK_DEFAULT;
	struct report_opts ro = {.limit = 20};
	int ch;
	struct query_opts qo;
	query_opts_init(&qo, 0);
	bool query = false;
	char err[256];
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int q = query_opt(&qo, ch, optarg, err, sizeof(err));
		if (q < 0) {
			fprintf(stderr, "collector report: %s\n", err);
			query_opts_free(&qo);
			return 2;
		}
		if (q > 0) {
			query = true;
			continue;
		}
		switch (ch) {
		case 's': path = optarg; break;
		case 'n': sess = optarg; break;
		case 't': top = true; break;
		case 'o': opencl = true; break;
		case 'g': gpu = true; break;
		case 'C': offcpu = true; break;
		case 'V': sensitivity = true; break;
		case 'j': ro.json = true; break;
		case 'f': ro.symfs = optarg; break;
		case 'D': ro.debug_dir = optarg; break;
		case 'Y': ro.kallsyms = optarg; break;
		case 'l': ro.limit = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'F': format = optarg; break;
		case 'M': machine = optarg; break;
		case 'k': kmodel = optarg; break;
		case 'K': if (cli_check_arg("report", optarg, &check)) return 2; break;
		case 'S':
			if (strcmp(optarg, "total") == 0)
				ro.sort = REPORT_SORT_TOTAL;
			else if (strcmp(optarg, "count") == 0)
				ro.sort = REPORT_SORT_COUNT;
			else if (strcmp(optarg, "mean") == 0)
				ro.sort = REPORT_SORT_MEAN;
			else if (strcmp(optarg, "name") == 0)
				ro.sort = REPORT_SORT_NAME;
			else {
				fprintf(stderr, "collector report: --sort wants total, count, mean or name, not '%s'\n%s",
					optarg, report_usage);
				return 2;
			}
			break;
		case 'h': fputs(report_usage, stdout); query_opts_free(&qo); return 0;
		default: fputs(report_usage, stderr); query_opts_free(&qo); return 2;
		}
	}
	/* No --session, a list of sessions, or filters: the top table of a query over the store. */
	if (optind == argc && path && ro.limit && (query || !sess || strchr(sess, ',') || sensitivity)) {
		int rc = sess ? query_opt(&qo, QUERY_OPT_SESSION, sess, err, sizeof(err)) : 1;
		if (rc > 0)
			rc = query_opts_check(&qo, err, sizeof(err));
		if (rc >= 0 && sensitivity && !fleet_sens_groups_by(qo.by))
			rc = fail(err, sizeof(err), "--sensitivity groups by function or module, not %s",
				  query_group_name(qo.by));
		if (rc < 0) {
			fprintf(stderr, "collector report: %s\n", err);
			query_opts_free(&qo);
			return 2;
		}
		if (ro.symfs)
			qo.symfs = ro.symfs;
		if (ro.debug_dir)
			qo.debug_dir = ro.debug_dir;
		if (ro.kallsyms)
			qo.kallsyms = ro.kallsyms;
		rc = fleet_report(path, check, &qo, &ro, sensitivity, machine);
		query_opts_free(&qo);
		return rc;
	}
	query_opts_free(&qo);
	long long id = cli_session_id(sess);
	if (optind != argc || !path || id <= 0 || ro.limit == 0) {
		fprintf(stderr, "collector report: --store PATH and a positive --session N are required\n%s",
			report_usage);
		return 2;
	}
	if (format && strcmp(format, "text") != 0 && strcmp(format, "json") != 0 && strcmp(format, "html") != 0) {
		fprintf(stderr, "collector report: --format wants text, json or html, not '%s'\n%s", format,
			report_usage);
		return 2;
	}
	if (format && strcmp(format, "json") == 0)
		ro.json = true; /* the sections too */
	struct store *st;
	if (cli_open_store(path, check, &st) < 0)
		return 1;
	int rc = 0;
	if (!top && !opencl && !gpu && !offcpu) {
		rc = overview(st, id, &ro, format ? format : ro.json ? "json" : "text", machine, kmodel);
		store_close(st);
		return rc < 0 ? 1 : 0;
	}
	if (top)
		rc = report_top(st, id, &ro, stdout);
	if (rc == 0 && offcpu)
		rc = report_offcpu(st, id, &ro, stdout);
	if (rc == 0 && opencl)
		rc = report_opencl(st, id, &ro, stdout);
	if (rc == 0 && gpu) {
		if (ro.json)
			fputs("{\"gpu\":", stdout);
		rc = report_gpu(st, id, &ro, stdout);
		if (rc < 0)
			log_error("cannot load the GPU counters of session %lld: %s", id, strerror(-rc));
		else if (ro.json)
			fputs("}\n", stdout);
	}
	store_close(st);
	return rc < 0 ? 1 : 0;
}
