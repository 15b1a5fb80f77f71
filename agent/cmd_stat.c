/* agent stat: count perf events of a target and stream one Counters row per
 * interval (the default subcommand). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "counter_source.h"
#include "gpu/gpu_cli.h"
#include "log.h"
#include "net.h"
#include "session.h"
#include "target.h"

#define OPT_EVENTS 'e'
#define OPT_INTERVAL 'I'

static const char stat_usage[] =
	"usage: agent [stat] --collector HOST:PORT [-p PID | -a | -- CMD [ARGS...]] [-e EVENTS] [-I MS] [--gpu]\n"
	"                    [--duration S] [--spool DIR] [--spool-max MB] [--agent-id ID]\n"
	"                    [--flush-timeout S] [-v|-q]\n"
	"\n"
	"Counts perf events of one target and streams them to the collector.\n"
	"  -e EVENTS              comma list (default: cycles,instructions,cache-misses,branch-misses,\n"
	"                         task-clock,page-faults,context-switches,cpu-migrations; software\n"
	"                         events only when the hardware PMU is missing)\n"
	"  -I MS                  interval between readings (default 1000, min 10)\n";

struct stat_cmd {
	struct agent_cli cli;
	struct gpu_cli gpu;
	struct counter_source_opts co;
	bool interval_given;
};

static int stat_option(void *ctx, int opt, const char *arg)
{
	struct stat_cmd *c = ctx;
	int g = gpu_cli_option(&c->gpu, opt, arg);
	if (g <= 0 || g == EXIT_USAGE)
		return g;
	switch (opt) {
	case OPT_EVENTS:
		c->co.events = arg;
		return 0;
	case OPT_INTERVAL:
		c->interval_given = true;
		return agent_cli_interval_ms(arg, &c->co.interval_ms);
	default:
		return EXIT_USAGE;
	}
}

int cmd_stat(int argc, char **argv)
{
	struct stat_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"events", required_argument, NULL, OPT_EVENTS},
		{"interval", required_argument, NULL, OPT_INTERVAL},
		GPU_CLI_OPTIONS,
		{NULL, 0, NULL, 0},
	};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", stat_usage, gpu_cli_help, agent_cli_target_help,
		 agent_cli_common_help);
	c->co.interval_ms = 1000;
	c->cli.need_target = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "e:I:", stat_option, c);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	if (c->interval_given && c->cli.verbose >= 0)
		c->co.interval_out = stderr; /* -I: one line per event and interval, as perf stat -I */
	char err[1536];
	struct counter_source *cs = NULL;
	if (counter_source_new(&cs, &c->co, err, sizeof(err)) < 0) {
		log_error("-e: %s", err);
		free(c);
		return EXIT_USAGE;
	}

	struct target *t = NULL;
	struct session *s = NULL;
	struct loop *l = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	int rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
#ifdef CONFIG_AGENT_OPENCL
	c->cli.so.opencl_probe = true;
#endif
	rc = session_open(&s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	if (counter_source_open(cs, t, s, err, sizeof(err)) < 0) {
		log_error("%s", err);
		goto out;
	}
	uint64_t start_ns = clock_mono_ns();
	rc = target_release(t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	if (loop_create(&l) < 0)
		goto out;
	if (session_attach(s, l) < 0 || target_attach(t, l) < 0 || counter_source_start(cs, l, start_ns) < 0)
		goto out;
	gpu_cli_start(&c->gpu, s, l);

	rc = loop_run(l);
	uint64_t end_ns = clock_mono_ns();
	if (session_fatal(s) || rc < 0)
		goto out;
	counter_source_finish(cs, end_ns); /* the final row */
	gpu_cli_finish(&c->gpu);
	session_flush(s);
	counter_source_print_summary(cs, end_ns, target_describe(t), stderr);
	gpu_cli_print_summary(&c->gpu, stderr);
	session_print_summary(s, stderr);
	exit_code = agent_cli_exit_status(s, target_exit_code(t));
out:
	gpu_cli_close(&c->gpu);
	counter_source_close(cs);
	session_close(s);
	loop_destroy(l);
	target_close(t);
	free(c);
	return exit_code;
}
