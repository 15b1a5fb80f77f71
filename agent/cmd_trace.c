/* agent trace: sampled instruction-trace windows of one thread (ptrace +
 * Capstone), streamed as TraceWindow records for the eDAG analysis. */
#include "generated/config.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "log.h"

#ifndef CONFIG_AGENT_TRACER
int cmd_trace(int argc, char **argv)
{
	log_error("trace: the instruction tracer is not compiled in (CONFIG_AGENT_TRACER)");
	return EXIT_USAGE;
}
#else

#include "net.h"
#include "session.h"
#include "target.h"
#include "trace_source.h"

#define OPT_TID 1000
#define OPT_TRACE 1001 /* --window, --warmup, --every, --max-duty, --capture: trace_source_option */

static const char trace_usage[] =
	"usage: agent trace --collector HOST:PORT (-p PID [--tid TID] | --tid TID | -- CMD [ARGS...])\n"
	"                   [--window N] [--warmup N] [--capture auto|replay|step|snapshot] [--every S]\n"
	"                   [--max-duty PCT] [--duration S] [...]\n"
	"\n"
	"Every S seconds at most, stops one thread and records its next instructions (registers and\n"
	"memory addresses): replayed in Unicorn on a copy of its memory after a cache warm-up, or\n"
	"single-stepped (2000 a window by default); on arm64 and 32-bit ARM a snapshot the collector\n"
	"replays. The windows go to the collector for `collector edag`. Threads of -p are taken in\n"
	"turn unless --tid.\n"
	"Defaults here: --every 1 --max-duty 2.\n";

struct trace_cmd {
	struct agent_cli cli;
	struct trace_source_opts to;
};

static int trace_option(void *ctx, int opt, const char *arg)
{
	struct trace_cmd *c = ctx;
	unsigned long v;
	switch (opt) {
	case OPT_TID:
		if (agent_cli_ulong(arg, INT_MAX, &v) < 0 || v == 0) {
			log_error("--tid: '%s' is not a thread id", arg);
			return EXIT_USAGE;
		}
		c->to.tid = (pid_t)v;
		return 0;
	default:
		if (opt >= OPT_TRACE && opt < OPT_TRACE + 5) {
			static const char *const names[] = {"window", "warmup", "every", "max-duty", "capture"};
			return trace_source_option(&c->to, names[opt - OPT_TRACE], arg);
		}
		return EXIT_USAGE;
	}
}

/* The thread group of a thread, from /proc. */
static pid_t tgid_of(pid_t tid)
{
	char path[64], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	pid_t tgid = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "Tgid: %d", &tgid) == 1)
			break;
	fclose(f);
	return tgid;
}

int cmd_trace(int argc, char **argv)
{
	struct trace_cmd *c = calloc(1, sizeof(*c));
	if (!c) {
		log_error("out of memory");
		return EXIT_AGENT_ERROR;
	}
	static const struct option extra[] = {
		{"tid", required_argument, NULL, OPT_TID},
		{"window", required_argument, NULL, OPT_TRACE},
		{"warmup", required_argument, NULL, OPT_TRACE + 1},
		{"every", required_argument, NULL, OPT_TRACE + 2},
		{"max-duty", required_argument, NULL, OPT_TRACE + 3},
		{"capture", required_argument, NULL, OPT_TRACE + 4},
		{NULL, 0, NULL, 0},
	};
	char usage[6144];
	snprintf(usage, sizeof(usage), "%s%s%s%s", trace_usage, trace_source_help, agent_cli_target_help,
		 agent_cli_common_help);
	c->to.step_window = 2000;
	c->to.warmup = ULONG_MAX;
	c->to.every_s = 1;
	c->to.max_duty = 2;
	c->cli.need_target = true;
	c->cli.target_optional = true;
	int ex = agent_cli_parse(argc, argv, &c->cli, usage, extra, "", trace_option, c);
	if (ex >= 0) {
		free(c);
		return ex;
	}
	if (c->cli.to.all) {
		log_error("trace: -a is not supported: trace one process (-p PID, --tid TID or -- CMD)");
		free(c);
		return EXIT_USAGE;
	}
	if (c->to.tid) {
		pid_t tgid = tgid_of(c->to.tid);
		if (tgid < 0) {
			log_error("--tid %d: no such thread", (int)c->to.tid);
			free(c);
			return EXIT_AGENT_ERROR;
		}
		if (c->cli.to.pid && c->cli.to.pid != tgid) {
			log_error("--tid %d belongs to process %d, not -p %d", (int)c->to.tid, (int)tgid, (int)c->cli.to.pid);
			free(c);
			return EXIT_USAGE;
		}
		if (c->cli.to.cmd) {
			log_error("--tid and a command exclude each other");
			free(c);
			return EXIT_USAGE;
		}
		c->cli.to.pid = tgid;
	} else if (!c->cli.to.pid && !c->cli.to.cmd) {
		log_error("trace: give -p PID, --tid TID or -- CMD [ARGS...]");
		free(c);
		return EXIT_USAGE;
	}
	struct loop *l = NULL;
	struct target *t = NULL;
	struct session *s = NULL;
	struct trace_source *ts = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	char err[1024];
	int rc = trace_source_new(&ts, &c->to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		exit_code = rc == -ENOTSUP || rc == -ELIBACC ? EXIT_USAGE : EXIT_AGENT_ERROR;
		goto out;
	}
	/* Refuse single steps that would stop the program too much, before touching it
	 * (replay windows are spaced by the duty budget). */
	double predicted = trace_source_predicted_duty(&c->to);
	if (!trace_source_replays(ts) && predicted > c->to.max_duty) {
		log_error("trace: %lu instructions every %g s would stop the thread about %.2g%% of the time "
			  "(at ~%u us a step), above --max-duty %g%%: use a smaller --window or a larger --every",
			  c->to.window ? c->to.window : c->to.step_window, c->to.every_s, predicted,
			  TRACE_SOURCE_STEP_GUESS_NS / 1000, c->to.max_duty);
		exit_code = EXIT_USAGE;
		goto out;
	}
	rc = target_prepare(&t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(t);
	rc = session_open(&s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	rc = target_release(t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	if (loop_create(&l) < 0)
		goto out;
	if (session_attach(s, l) < 0 || target_attach(t, l) < 0 || trace_source_start(ts, t, s, l, clock_mono_ns()) < 0)
		goto out;
	uint64_t start = clock_mono_ns();
	rc = loop_run(l);
	double elapsed = (double)(clock_mono_ns() - start) / 1e9;
	if (session_fatal(s) || rc < 0)
		goto out;
	session_flush(s);
	trace_source_print_summary(ts, elapsed, stderr);
	session_print_summary(s, stderr);
	exit_code = agent_cli_exit_status(s, target_exit_code(t));
out:
	session_close(s);
	loop_destroy(l);
	target_close(t);
	trace_source_close(ts);
	free(c);
	return exit_code;
}
#endif
