/* agent calibrate: run the calibration microbenchmarks (agent/calib/), stream
 * one Calibration record per benchmark to the collector and optionally write
 * the machine model as JSON (-o). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "calib/calib_run.h"
#include "cli_opts.h"
#include "commands.h"
#include "log.h"
#include "session.h"

enum { OPT_DEVICE = 1000, OPT_QUICK, OPT_ONLY, OPT_REPS };

static const char calibrate_usage[] =
	"usage: agent calibrate --collector HOST:PORT [--device N] [--quick] [-o OUT.json] [--only LIST] [--reps N]\n"
	"                       [--spool DIR] [--agent-id ID] [--flush-timeout S] [-v|-q]\n"
	"\n"
	"Measures the machine: arithmetic latency/throughput, compute units, registers, parallel\n"
	"granularity, caches (OpenCL device), roofline ceilings (device and CPU), memory latency and\n"
	"issue slots (CPU). Each benchmark is sent as one Calibration record as soon as it ends.\n"
	"  --device N     OpenCL device index over all platforms (default: the first GPU, else device 0)\n"
	"  --quick        fewer points and repetitions (about a minute on 2 cores)\n"
	"  -o FILE        also write the machine model as JSON (collector/calib/README.md)\n"
	"  --only LIST    comma list of benchmarks: device,arith,compute_units,registers,granularity,\n"
	"                 cache,peak,cpu_peak,mem_slots\n"
	"  --reps N       repetitions per measurement (default 3 with --quick, else 5; max 9)\n";

struct cal_cmd {
	struct agent_cli cli;
	struct calib_run_opts ro;
	const char *out;
	struct session *s;
	struct loop *l;
	unsigned sent, failed;
};

static int cal_option(void *ctx, int opt, const char *arg)
{
	struct cal_cmd *c = ctx;
	unsigned long v;
	switch (opt) {
	case OPT_DEVICE:
		if (agent_cli_ulong(arg, 63, &v) < 0) {
			log_error("--device: expected an index 0..63 (got '%s')", arg);
			return EXIT_USAGE;
		}
		c->ro.device = (int)v;
		return 0;
	case OPT_QUICK:
		c->ro.quick = true;
		return 0;
	case OPT_ONLY:
		c->ro.only = arg;
		return 0;
	case OPT_REPS:
		if (agent_cli_ulong(arg, CR_MAX_REPS, &v) < 0 || v == 0) {
			log_error("--reps: expected 1..%d (got '%s')", CR_MAX_REPS, arg);
			return EXIT_USAGE;
		}
		c->ro.reps = (unsigned)v;
		return 0;
	case 'o': {
		size_t n = strlen(arg);
		if (n < 6 || strcmp(arg + n - 5, ".json") != 0)
			log_warn("-o: %s is written as JSON (the machine model), but its name does not end in .json", arg);
		c->out = arg;
		return 0;
	}
	default:
		return EXIT_USAGE;
	}
}

/* Send one benchmark's record and let the transport move it along. */
static int cal_sink(void *arg, const struct calib_result *r)
{
	struct cal_cmd *c = arg;
	Prof__Calibration *rec;
	if (calib_record_build(r, c->ro.device < 0 ? 0 : (unsigned)c->ro.device, &rec) < 0) {
		c->failed++;
		return -ENOMEM;
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
	env.calibration = rec;
	int rc = session_send(c->s, &env);
	calib_record_free(rec);
	if (rc < 0) {
		log_warn("calibration record %s not sent: %s", r->benchmark, strerror(-rc));
		c->failed++;
		return rc;
	}
	c->sent++;
	for (int i = 0; i < 8; i++) /* non-blocking: connect, write, read acks */
		loop_step(c->l, 0);
	return 0;
}

static int write_json(const struct calib_model *m, const char *path)
{
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof(tmp))
		return -ENAMETOOLONG;
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -errno;
	int rc = calib_model_write_json(m, f);
	if (fclose(f) != 0 && rc == 0)
		rc = -EIO;
	if (rc == 0 && rename(tmp, path) < 0)
		rc = -errno;
	if (rc < 0)
		unlink(tmp);
	return rc;
}

int cmd_calibrate(int argc, char **argv)
{
	struct cal_cmd *c = calloc(1, sizeof(*c));
	struct calib_model *model = calloc(1, sizeof(*model));
	if (!c || !model) {
		free(c);
		free(model);
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"device", required_argument, NULL, OPT_DEVICE},
		{"quick", no_argument, NULL, OPT_QUICK},
		{"only", required_argument, NULL, OPT_ONLY},
		{"reps", required_argument, NULL, OPT_REPS},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	char usage[4096];
	snprintf(usage, sizeof(usage), "%s%s", calibrate_usage, agent_cli_common_help);
	c->ro.device = -1;
	c->ro.progress = stderr;
	c->cli.need_target = false;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "o:", cal_option, c);
	if (ex >= 0)
		goto done;
	if (c->cli.verbose < 0)
		c->ro.progress = NULL;
	for (const char *s = c->ro.only; s && *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		bool known = false;
		for (size_t i = 0; calib_bench_names[i]; i++)
			known |= strlen(calib_bench_names[i]) == len && strncmp(calib_bench_names[i], s, len) == 0;
		if (!known) {
			log_error("--only: unknown benchmark '%.*s' (see agent calibrate --help)", (int)len, s);
			ex = EXIT_USAGE;
			goto done;
		}
		s += len + (e ? 1 : 0);
	}
	char err[1536];
	ex = EXIT_AGENT_ERROR;
	c->cli.so.target = c->ro.quick ? "calibrate --quick" : "calibrate";
	if (session_open(&c->s, &c->cli.so, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto done;
	}
	if (loop_create(&c->l) < 0 || session_attach(c->s, c->l) < 0)
		goto done;
	snprintf(model->source, sizeof(model->source), "agent calibrate%s", c->ro.quick ? " --quick" : "");
	int n = calib_run_all(&c->ro, model, cal_sink, c);
	if (n < 0) {
		log_error("no calibration benchmark could run (%s)", strerror(-n));
		goto done;
	}
	uint64_t left = session_flush(c->s);
	if (c->out) {
		int rc = write_json(model, c->out);
		if (rc < 0) {
			log_error("cannot write %s: %s", c->out, strerror(-rc));
			goto done;
		}
		fprintf(stderr, "calibrate: machine model written to %s\n", c->out);
	}
	fprintf(stderr, "calibrate: %d benchmark(s), %zu parameters, %u record(s) sent%s\n", n, model->nparams, c->sent,
		left ? " (some not yet acknowledged: they stay in the spool)" : "");
	session_print_summary(c->s, stderr);
	ex = agent_cli_exit_status(c->s, c->failed ? EXIT_AGENT_ERROR : 0);
done:
	session_close(c->s);
	loop_destroy(c->l);
	free(model);
	free(c);
	return ex;
}
