/* Instruction-trace windows as a loop source (trace_source.h). */
#include "generated/config.h"

#ifdef CONFIG_AGENT_TRACER
#include "trace_source.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "proc_tasks.h"
#include "trace/cs_api.h"
#include "trace/decode.h"
#include "trace/encode.h"
#include "trace/window.h"

struct trace_source {
	struct trace_source_opts o;
	struct session *s;
	struct target *t;
	struct trace_decoder *dec;
	struct loop_timer timer;
	double step_ns; /* measured cost of one step */
	uint32_t windows, skipped;
	uint64_t insns, stop_ns;
	size_t next_task;
	pid_t tids[64]; /* threads traced (the first 64) */
	size_t ntids;
};

static void note_tid(struct trace_source *ts, pid_t tid)
{
	for (size_t i = 0; i < ts->ntids; i++)
		if (ts->tids[i] == tid)
			return;
	if (ts->ntids < sizeof(ts->tids) / sizeof(ts->tids[0]))
		ts->tids[ts->ntids++] = tid;
}

double trace_source_predicted_duty(const struct trace_source_opts *o)
{
	return (double)o->window * TRACE_SOURCE_STEP_GUESS_NS / (o->every_s * 1e9) * 100.0;
}

int trace_source_new(struct trace_source **out, const struct trace_source_opts *o, char *err, size_t errlen)
{
	struct trace_source *ts = calloc(1, sizeof(*ts));
	if (!ts) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	ts->o = *o;
	ts->step_ns = TRACE_SOURCE_STEP_GUESS_NS;
	int rc = trace_decoder_open(&ts->dec, trace_native_arch());
	if (rc < 0) {
		if (rc == -ELIBACC)
			snprintf(err, errlen, "%s", cs_api_error());
		else
			snprintf(err, errlen, "trace: no instruction decoder for this architecture: %s", strerror(-rc));
		free(ts);
		return rc;
	}
	*out = ts;
	return 0;
}

/* State letter of thread tid of pid (R, S, Z, ...), 0 when it is gone. */
static char thread_state(pid_t pid, pid_t tid)
{
	char path[96], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/stat", (int)pid, (int)tid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the name may hold spaces and parentheses */
	return p && p[1] == ' ' ? p[2] : 0;
}

/* Is thread tid of pid running (state R) now? */
static bool thread_running(pid_t pid, pid_t tid)
{
	return thread_state(pid, tid) == 'R';
}

/* The next thread to trace: --tid, else the target's threads in turn,
 * skipping ones that sleep while another runs (a blocked thread only ends
 * its window at the time limit). */
static pid_t pick_thread(struct trace_source *ts)
{
	if (ts->o.tid)
		return ts->o.tid;
	pid_t pid = target_pid(ts->t), *tids, tid = pid;
	size_t n;
	if (proc_list_tids(pid, &tids, &n) < 0)
		return pid;
	if (n > 0) {
		tid = tids[ts->next_task % n];
		for (size_t k = 0; k < n; k++) {
			pid_t cand = tids[(ts->next_task + k) % n];
			if (thread_running(pid, cand)) {
				tid = cand;
				ts->next_task += k;
				break;
			}
		}
		ts->next_task++;
	}
	free(tids);
	return tid;
}

static void take_window(struct trace_source *ts)
{
	uint64_t period_ns = (uint64_t)(ts->o.every_s * 1e9);
	/* Keep the stop time under the duty cap with what single steps cost here. */
	unsigned long n = ts->o.window;
	double budget_ns = ts->o.max_duty / 100.0 * (double)period_ns;
	if ((double)n * ts->step_ns > budget_ns) {
		unsigned long fit = (unsigned long)(budget_ns / ts->step_ns);
		if (fit == 0) {
			ts->skipped++;
			return;
		}
		if (ts->windows == 0 || ts->skipped == 0)
			log_warn("trace: one step costs %.1f us here: windows cut to %lu instructions to stay under "
				 "%.3g%% duty",
				 ts->step_ns / 1e3, fit, ts->o.max_duty);
		n = fit;
		ts->skipped++;
	}
	pid_t tid = pick_thread(ts);
	struct trace_window w;
	char err[256];
	uint64_t slack_ns = (uint64_t)(ts->o.block_slack_ms ? ts->o.block_slack_ms : 100) * 1000000ull;
	uint64_t budget = (uint64_t)(budget_ns * 2) + slack_ns; /* a blocked thread ends the window */
	int rc = trace_window_capture(ts->dec, tid, n, budget, &w, err, sizeof(err));
	if (rc < 0) {
		/* ptrace refuses a thread that is exiting (EPERM) or gone (ESRCH): not a permission problem */
		char st = thread_state(target_pid(ts->t), tid);
		if ((rc == -EPERM || rc == -ESRCH) && (st == 0 || st == 'Z' || st == 'X'))
			log_debug("trace: thread %d exited before its window", (int)tid);
		else
			log_warn("trace: %s", err);
		return;
	}
	if (w.reaped)
		target_child_reaped(ts->t, tid, w.exit_status);
	if (w.n > 0 && w.stop_ns > 0)
		ts->step_ns = 0.5 * ts->step_ns + 0.5 * (double)w.stop_ns / (double)w.n;
	ts->insns += w.n;
	ts->stop_ns += w.stop_ns;
	if (w.n > 0)
		note_tid(ts, tid);
	log_debug("trace: window %u of thread %d: %zu instructions, stopped %.2f ms (%s)", ts->windows, (int)tid, w.n,
		  (double)w.stop_ns / 1e6,
		  w.end == TRACE_END_COMPLETE ? "complete"
		  : w.end == TRACE_END_EXITED ? "thread exited"
		  : w.end == TRACE_END_BLOCKED ? "thread blocked"
					       : "error");
	if (w.n > 0) {
		struct trace_encode_info info = {
			.arch = trace_native_arch(),
			.pid = target_pid(ts->t),
			.t_ns = w.start_ns - session_base_ns(ts->s),
			.window_index = ts->windows,
		};
		Prof__TraceWindow tw;
		if (trace_encode_window(&w, &info, &tw) == 0) {
			Prof__Envelope env = PROF__ENVELOPE__INIT;
			env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
			env.trace_window = &tw;
			rc = session_send(ts->s, &env);
			if (rc < 0)
				log_warn("trace: window %u not sent: %s", ts->windows, strerror(-rc));
			trace_encode_free(&tw);
		}
		ts->windows++;
	}
	trace_window_free(&w);
}

static int ts_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct trace_source *ts = ctx;
	(void)pfd;
	(void)max;
	loop_timer_timeout(&ts->timer, now, timeout_ms);
	return 0;
}

static int ts_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct trace_source *ts = ctx;
	(void)pfd;
	(void)n;
	if (loop_timer_expired(&ts->timer, now))
		take_window(ts);
	return 0;
}

int trace_source_start(struct trace_source *ts, struct target *t, struct session *s, struct loop *l, uint64_t now_ns)
{
	ts->t = t;
	ts->s = s;
	loop_timer_start(&ts->timer, (uint64_t)(ts->o.every_s * 1e9), now_ns);
	struct loop_source src = {.name = "trace", .prepare = ts_prepare, .dispatch = ts_dispatch, .ctx = ts};
	return loop_add(l, &src);
}

uint32_t trace_source_windows(const struct trace_source *ts)
{
	return ts->windows;
}

void trace_source_print_summary(const struct trace_source *ts, double elapsed, FILE *out)
{
	double duty = elapsed > 0 ? (double)ts->stop_ns / 1e7 / elapsed : 0.0;
	if (ts->ntids > 1)
		fprintf(out,
			"\n trace: %u window(s), %llu instructions from %zu threads, stopped %.1f ms in %.1f s (%.2f%% "
			"summed over the threads, %.2f%% each on average; cap %g%% per thread)%s\n",
			ts->windows, (unsigned long long)ts->insns, ts->ntids, (double)ts->stop_ns / 1e6, elapsed, duty,
			duty / (double)ts->ntids, ts->o.max_duty,
			ts->skipped ? " — some windows were cut or skipped to respect the cap" : "");
	else
		fprintf(out,
			"\n trace: %u window(s), %llu instructions, thread stopped %.1f ms in %.1f s (%.2f%% duty, cap "
			"%g%%)%s\n",
			ts->windows, (unsigned long long)ts->insns, (double)ts->stop_ns / 1e6, elapsed, duty,
			ts->o.max_duty, ts->skipped ? " — some windows were cut or skipped to respect the cap" : "");
}

void trace_source_close(struct trace_source *ts)
{
	if (!ts)
		return;
	trace_decoder_close(ts->dec);
	free(ts);
}
#endif
