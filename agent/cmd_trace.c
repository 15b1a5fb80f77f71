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
#include "proc_tasks.h"
#include "session.h"
#include "target.h"
#include "trace/cs_api.h"
#include "trace/decode.h"
#include "trace/encode.h"
#include "trace/window.h"

#define OPT_TID 1000
#define OPT_WINDOW 1001
#define OPT_EVERY 1002
#define OPT_MAX_DUTY 1003
#define WINDOW_WIRE_MAX 60000u    /* instructions per record: fits a 1 MiB frame */
#define STEP_COST_GUESS_NS 10000u /* before the first window: 10 us per single step */

static const char trace_usage[] =
	"usage: agent trace --collector HOST:PORT (-p PID [--tid TID] | --tid TID | -- CMD [ARGS...])\n"
	"                   [--window N] [--every S] [--max-duty PCT] [--duration S] [...]\n"
	"\n"
	"Every S seconds, stops one thread, single-steps N instructions recording\n"
	"registers and memory addresses, and lets it go; the windows go to the\n"
	"collector for `collector edag`. Threads of -p are taken in turn unless --tid.\n"
	"  --window N      instructions per window (default 2000, max 60000)\n"
	"  --every S       seconds between windows (default 1)\n"
	"  --max-duty PCT  refuse settings that stop the thread more than PCT %% of the time (default 2)\n";

struct trace_cmd {
	struct agent_cli cli;
	pid_t tid;
	unsigned long window;
	double every_s;
	double max_duty;
	struct session *s;
	struct target *t;
	struct trace_decoder *dec;
	struct loop_timer timer;
	double step_ns; /* measured cost of one step */
	uint32_t windows, skipped;
	uint64_t insns, stop_ns;
	size_t next_task;
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
		c->tid = (pid_t)v;
		return 0;
	case OPT_WINDOW:
		if (agent_cli_ulong(arg, WINDOW_WIRE_MAX, &v) < 0 || v == 0) {
			log_error("--window: expected 1..%u instructions (got '%s')", WINDOW_WIRE_MAX, arg);
			return EXIT_USAGE;
		}
		c->window = v;
		return 0;
	case OPT_EVERY:
		if (agent_cli_double(arg, &c->every_s) < 0 || c->every_s < 0.01) {
			log_error("--every: expected seconds >= 0.01 (got '%s')", arg);
			return EXIT_USAGE;
		}
		return 0;
	case OPT_MAX_DUTY:
		if (agent_cli_double(arg, &c->max_duty) < 0 || c->max_duty <= 0 || c->max_duty > 100) {
			log_error("--max-duty: expected a percentage in (0, 100] (got '%s')", arg);
			return EXIT_USAGE;
		}
		return 0;
	default:
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

/* The next thread of the target to trace (threads in turn). */
static pid_t pick_thread(struct trace_cmd *c)
{
	if (c->tid)
		return c->tid;
	pid_t pid = target_pid(c->t), *tids, tid = pid;
	size_t n;
	if (proc_list_tids(pid, &tids, &n) < 0)
		return pid;
	if (n > 0)
		tid = tids[c->next_task++ % n];
	free(tids);
	return tid;
}

static void take_window(struct trace_cmd *c, uint64_t now)
{
	uint64_t period_ns = (uint64_t)(c->every_s * 1e9);
	/* Keep the stop time under the duty cap with what single steps cost here. */
	unsigned long n = c->window;
	double budget_ns = c->max_duty / 100.0 * (double)period_ns;
	if ((double)n * c->step_ns > budget_ns) {
		unsigned long fit = (unsigned long)(budget_ns / c->step_ns);
		if (fit == 0) {
			c->skipped++;
			return;
		}
		if (c->windows == 0 || c->skipped == 0)
			log_warn("trace: one step costs %.1f us here: windows cut to %lu instructions to stay under "
				 "%.3g%% duty",
				 c->step_ns / 1e3, fit, c->max_duty);
		n = fit;
		c->skipped++;
	}
	pid_t tid = pick_thread(c);
	struct trace_window w;
	char err[256];
	uint64_t budget = (uint64_t)(budget_ns * 2) + 100000000ull; /* a blocked thread ends the window */
	int rc = trace_window_capture(c->dec, tid, n, budget, &w, err, sizeof(err));
	if (rc < 0) {
		log_warn("trace: %s", err);
		return;
	}
	if (w.reaped)
		target_child_reaped(c->t, tid, w.exit_status);
	if (w.n > 0 && w.stop_ns > 0)
		c->step_ns = 0.5 * c->step_ns + 0.5 * (double)w.stop_ns / (double)w.n;
	c->insns += w.n;
	c->stop_ns += w.stop_ns;
	log_debug("trace: window %u of thread %d: %zu instructions, stopped %.2f ms (%s)", c->windows, (int)tid, w.n,
		  (double)w.stop_ns / 1e6,
		  w.end == TRACE_END_COMPLETE ? "complete"
		  : w.end == TRACE_END_EXITED ? "thread exited"
		  : w.end == TRACE_END_BLOCKED ? "thread blocked"
					       : "error");
	if (w.n > 0) {
		struct trace_encode_info info = {
			.arch = trace_native_arch(),
			.pid = target_pid(c->t),
			.t_ns = w.start_ns - session_base_ns(c->s),
			.window_index = c->windows,
		};
		Prof__TraceWindow tw;
		if (trace_encode_window(&w, &info, &tw) == 0) {
			Prof__Envelope env = PROF__ENVELOPE__INIT;
			env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
			env.trace_window = &tw;
			rc = session_send(c->s, &env);
			if (rc < 0)
				log_warn("trace: window %u not sent: %s", c->windows, strerror(-rc));
			trace_encode_free(&tw);
		}
		c->windows++;
	}
	trace_window_free(&w);
	(void)now;
}

static int trace_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct trace_cmd *c = ctx;
	loop_timer_timeout(&c->timer, now, timeout_ms);
	return 0;
}

static int trace_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct trace_cmd *c = ctx;
	if (loop_timer_expired(&c->timer, now))
		take_window(c, now);
	return 0;
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
		{"window", required_argument, NULL, OPT_WINDOW},
		{"every", required_argument, NULL, OPT_EVERY},
		{"max-duty", required_argument, NULL, OPT_MAX_DUTY},
		{NULL, 0, NULL, 0},
	};
	char usage[4096];
	snprintf(usage, sizeof(usage), "%s%s%s", trace_usage, agent_cli_target_help, agent_cli_common_help);
	c->window = 2000;
	c->every_s = 1;
	c->max_duty = 2;
	c->step_ns = STEP_COST_GUESS_NS;
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
	if (c->tid) {
		pid_t tgid = tgid_of(c->tid);
		if (tgid < 0) {
			log_error("--tid %d: no such thread", (int)c->tid);
			free(c);
			return EXIT_AGENT_ERROR;
		}
		if (c->cli.to.pid && c->cli.to.pid != tgid) {
			log_error("--tid %d belongs to process %d, not -p %d", (int)c->tid, (int)tgid, (int)c->cli.to.pid);
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
	/* Refuse what would stop the program too much, before touching it. */
	double predicted = (double)c->window * STEP_COST_GUESS_NS / (c->every_s * 1e9) * 100.0;
	if (predicted > c->max_duty) {
		log_error("trace: %lu instructions every %g s would stop the thread about %.2g%% of the time "
			  "(at ~%u us a step), above --max-duty %g%%: use a smaller --window or a larger --every",
			  c->window, c->every_s, predicted, STEP_COST_GUESS_NS / 1000, c->max_duty);
		free(c);
		return EXIT_USAGE;
	}

	struct loop *l = NULL;
	int exit_code = EXIT_AGENT_ERROR;
	char err[1024];
	int rc = trace_decoder_open(&c->dec, trace_native_arch());
	if (rc == -ELIBACC) {
		log_error("%s", cs_api_error());
		goto out;
	}
	if (rc < 0) {
		log_error("trace: no instruction decoder for this architecture: %s", strerror(-rc));
		goto out;
	}
	rc = target_prepare(&c->t, &c->cli.to, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	c->cli.so.target = target_describe(c->t);
	rc = session_open(&c->s, &c->cli.so, err, sizeof(err));
	if (rc < 0) {
		log_error("%s", err);
		goto out;
	}
	rc = target_release(c->t);
	if (rc != 0) {
		exit_code = rc;
		goto out;
	}
	if (loop_create(&l) < 0)
		goto out;
	struct loop_source src = {.name = "trace", .prepare = trace_prepare, .dispatch = trace_dispatch, .ctx = c};
	loop_timer_start(&c->timer, (uint64_t)(c->every_s * 1e9), clock_mono_ns());
	if (session_attach(c->s, l) < 0 || target_attach(c->t, l) < 0 || loop_add(l, &src) < 0)
		goto out;
	uint64_t start = clock_mono_ns();
	rc = loop_run(l);
	double elapsed = (double)(clock_mono_ns() - start) / 1e9;
	if (session_fatal(c->s) || rc < 0)
		goto out;
	session_flush(c->s);
	fprintf(stderr,
		"\n trace: %u window(s), %llu instructions, thread stopped %.1f ms in %.1f s (%.2f%% duty, cap %g%%)%s\n",
		c->windows, (unsigned long long)c->insns, (double)c->stop_ns / 1e6, elapsed,
		elapsed > 0 ? (double)c->stop_ns / 1e7 / elapsed : 0.0, c->max_duty,
		c->skipped ? " — some windows were cut or skipped to respect the cap" : "");
	session_print_summary(c->s, stderr);
	exit_code = target_exit_code(c->t);
out:
	session_close(c->s);
	loop_destroy(l);
	target_close(c->t);
	trace_decoder_close(c->dec);
	free(c);
	return exit_code;
}
#endif
