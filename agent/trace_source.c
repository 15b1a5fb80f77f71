/* Instruction-trace windows as a loop source (trace_source.h). */
#include "generated/config.h"

#ifdef CONFIG_AGENT_TRACER
#include "trace_source.h"

#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "cli_opts.h"
#include "log.h"
#include "net.h"
#include "proc_tasks.h"
#include "trace/cs_api.h"
#include "trace/decode.h"
#include "trace/encode.h"
#include "trace/window.h"
#include "trace_snap.h"
#ifdef CONFIG_AGENT_TRACE_REPLAY
#include "trace/replay.h"
#endif

#define REPLAY_GUESS_NS 50.0	    /* per emulated instruction, before the first window (learnt after) */
#define OVERHEAD_GUESS_NS 2000000.0 /* attach, registers, detach */
/* A replay window starts when the budget holds this many times its predicted cost, and may
 * use all of it: taken as soon as the budget reached one cost, its stop-time limit sat just
 * under the prediction and any slowdown of the agent (a loaded machine) cut it; a cut
 * window gives no vote (collector/edag EDAG_END_TIME). The budget then holds up to one
 * cost more. The duty over a run is unchanged: what a window spends is its real stop time. */
#define REPLAY_HEADROOM 2.0
#define NENDS (TRACE_END_IN_SYSCALL + 1)
/* A window replayed from a snapshot runs at most this long (the program runs on meanwhile) */
#define REPLAY_MAX_NS 10000000000ull

struct trace_source {
	struct trace_source_opts o;
	struct session *s;
	struct target *t;
	struct trace_decoder *dec;
	struct loop_timer timer;
	bool replay;
	unsigned long window, warmup;
	double step_ns;	  /* measured cost of one step */
	double overhead_ns; /* single steps: measured cost of attach + detach (OVERHEAD_GUESS_NS before) */
	bool step_measured; /* false: step_ns is still TRACE_SOURCE_STEP_GUESS_NS */
	double insn_ns;	  /* replay: measured cost of one emulated instruction */
	double budget_ns; /* stop time the duty cap allows now */
	uint64_t last_ns;
	uint32_t windows, waited, cut, lost;
	uint32_t unsent; /* attempts that recorded nothing and were not sent: not windows */
	uint32_t lost_sent; /* replay windows cut in their warm-up, sent empty (the collector discards them) */
	uint64_t insns, warm_insns, stop_ns;
	unsigned ends[NENDS];
	size_t next_task;
	pid_t tids[64]; /* threads traced (the first 64) */
	size_t ntids;
	struct trace_rec *buf; /* replay: the records of every window (touched once) */
	size_t buf_cap;
	pid_t no_replay[8]; /* threads whose last replay met an instruction the emulator lacks */
	uint32_t fallbacks; /* single-step windows taken in their place */
	/* replay from snapshots (trace/snapshot.h): the thread stops only for the snapshot */
	bool snap_off;	      /* a snapshot was refused: windows replay in place from then on */
	char snap_why[160];   /* why */
	double snap_ns;	      /* measured stop of one snapshot window */
	uint32_t snapshots, in_place;
	uint64_t stops[1024]; /* the target's stop of each window (the first 1024) */
	size_t nstops;
	char off[320];	    /* non-empty: why no window can be taken here (the kernel cannot single-step) */
	/* --capture snapshot (boards, trace_snap.h): snapshots the collector replays */
	bool board;
	struct trace_snap snap;
	uint32_t no_conn, board_failed; /* periods without a collector connection; snapshots not taken */
	uint32_t conn_wait; /* periods skipped while the first connection was still being made */
	/* the default capture on a board: snapshots while the collector is connected; without it
	 * single steps of step_n instructions (arm64) or no window (32-bit ARM), said once */
	bool board_auto, said_fail;
	unsigned long step_n;
	uint32_t stepped; /* single-stepped windows taken while the collector was not connected */
};

static bool replay_failed(const struct trace_source *ts, pid_t tid)
{
	for (size_t i = 0; i < sizeof(ts->no_replay) / sizeof(ts->no_replay[0]); i++)
		if (ts->no_replay[i] == tid)
			return true;
	return false;
}

static void note_replay(struct trace_source *ts, pid_t tid, bool failed)
{
	size_t n = sizeof(ts->no_replay) / sizeof(ts->no_replay[0]);
	for (size_t i = 0; i < n; i++)
		if (ts->no_replay[i] == tid) {
			if (!failed)
				ts->no_replay[i] = 0;
			return;
		}
	if (!failed)
		return;
	for (size_t i = 0; i < n; i++)
		if (!ts->no_replay[i]) {
			ts->no_replay[i] = tid;
			return;
		}
	ts->no_replay[ts->fallbacks % n] = tid;
}

const char trace_source_help[] =
	"  --window N      instructions recorded per window (replay: default 200000; single steps: see\n"
	"                  above; max 1000000, sent in records of 60000)\n"
	"  --warmup N      replay: instructions run before them only to warm the cache model (default\n"
	"                  500000, max 4000000; 0: none)\n"
	"  --capture M     auto (default), replay, step or snapshot. auto: x86_64 replays in Unicorn where it\n"
	"                  can, else single steps; arm64 and 32-bit ARM take snapshots the collector replays\n"
	"                  while it is connected, else single steps (arm64: cache figures upper bounds) or\n"
	"                  none (32-bit ARM cannot single-step). snapshot: snapshots only (boards)\n"
	"  --every S       seconds between windows at least (the duty budget may space them more)\n"
	"  --max-duty PCT  stop the traced threads at most PCT % of the time, attach to detach\n";

int trace_source_option(struct trace_source_opts *o, const char *name, const char *arg)
{
	unsigned long v;
	if (strcmp(name, "window") == 0) {
		if (agent_cli_ulong(arg, TRACE_WINDOW_MAX, &v) < 0 || v == 0) {
			log_error("--window: expected 1..%u instructions (got '%s')", TRACE_WINDOW_MAX, arg);
			return EXIT_USAGE;
		}
		o->window = v;
	} else if (strcmp(name, "warmup") == 0) {
		if (agent_cli_ulong(arg, 4000000, &v) < 0) {
			log_error("--warmup: expected 0..4000000 instructions (got '%s')", arg);
			return EXIT_USAGE;
		}
		o->warmup = v;
	} else if (strcmp(name, "every") == 0) {
		if (agent_cli_seconds(arg, 0.01, &o->every_s) < 0) {
			log_error("--every: expected seconds from 0.01 to %.0f (got '%s')", AGENT_CLI_MAX_SECONDS, arg);
			return EXIT_USAGE;
		}
	} else if (strcmp(name, "max-duty") == 0) {
		if (agent_cli_double(arg, &o->max_duty) < 0 || o->max_duty <= 0 || o->max_duty > 100) {
			log_error("--max-duty: expected a percentage in (0, 100] (got '%s')", arg);
			return EXIT_USAGE;
		}
	} else if (strcmp(name, "capture") == 0) {
		if (strcmp(arg, "auto") == 0)
			o->capture = TRACE_SOURCE_AUTO;
		else if (strcmp(arg, "replay") == 0)
			o->capture = TRACE_SOURCE_REPLAY;
		else if (strcmp(arg, "step") == 0)
			o->capture = TRACE_SOURCE_STEP;
		else if (strcmp(arg, "snapshot") == 0)
			o->capture = TRACE_SOURCE_SNAPSHOT;
		else {
			log_error("--capture: expected auto, replay, step or snapshot (got '%s')", arg);
			return EXIT_USAGE;
		}
	} else {
		return 1;
	}
	return 0;
}

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
	unsigned long n = o->window ? o->window : o->step_window;
	return (double)n * TRACE_SOURCE_STEP_GUESS_NS / (o->every_s * 1e9) * 100.0;
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
	ts->overhead_ns = OVERHEAD_GUESS_NS;
	ts->insn_ns = REPLAY_GUESS_NS;
	ts->snap_ns = OVERHEAD_GUESS_NS;
	int rc = trace_decoder_open(&ts->dec, trace_native_arch());
	if (rc < 0) {
		if (rc == -ELIBACC)
			snprintf(err, errlen, "%s", cs_api_error());
		else
			snprintf(err, errlen, "trace: no instruction decoder for this architecture: %s", strerror(-rc));
		free(ts);
		return rc;
	}
#if defined(__aarch64__) || defined(__arm__)
	if (o->capture == TRACE_SOURCE_SNAPSHOT || o->capture == TRACE_SOURCE_AUTO) {
		ts->board = true; /* the thread stops for the snapshot only: no step, no emulator here */
		ts->board_auto = o->capture == TRACE_SOURCE_AUTO;
		ts->step_n = o->window ? o->window : o->step_window;
		ts->window = o->window ? o->window : TRACE_SOURCE_REPLAY_WINDOW;
		ts->warmup = o->warmup == ULONG_MAX ? TRACE_SOURCE_REPLAY_WARMUP : o->warmup;
		*out = ts;
		return 0;
	}
#else
	if (o->capture == TRACE_SOURCE_SNAPSHOT) {
		snprintf(err, errlen, "trace: --capture snapshot: built for arm64 and 32-bit ARM boards only (here: "
				      "--capture replay or step)");
		trace_decoder_close(ts->dec);
		free(ts);
		return -ENOTSUP;
	}
#endif
	if (o->capture != TRACE_SOURCE_STEP) {
		char why[320];
#ifdef CONFIG_AGENT_TRACE_REPLAY
		rc = trace_replay_supported(why, sizeof(why));
#else
		snprintf(why, sizeof(why), "replay windows are not compiled in (CONFIG_AGENT_TRACE_REPLAY)");
		rc = -ENOTSUP;
#endif
		if (rc == 0) {
			ts->replay = true;
		} else if (o->capture == TRACE_SOURCE_REPLAY) {
			snprintf(err, errlen, "trace: --capture replay: %s", why);
			trace_decoder_close(ts->dec);
			free(ts);
			return rc;
		} else {
			log_info("trace: single-stepped windows (%s); with a cache model they start cold, and the "
				 "report marks their cache figures as upper bounds",
				 why);
		}
	}
	ts->window = o->window ? o->window : ts->replay ? TRACE_SOURCE_REPLAY_WINDOW : o->step_window;
	ts->warmup = !ts->replay ? 0 : o->warmup == ULONG_MAX ? TRACE_SOURCE_REPLAY_WARMUP : o->warmup;
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
		/* running ones first; replay: those whose last window the emulator could run first */
		for (int pass = ts->replay ? 0 : 1; pass < 2; pass++) {
			size_t k = 0;
			for (; k < n; k++) {
				pid_t cand = tids[(ts->next_task + k) % n];
				if (thread_running(pid, cand) && (pass || !replay_failed(ts, cand))) {
					tid = cand;
					ts->next_task += k;
					break;
				}
			}
			if (k < n)
				break;
		}
		ts->next_task++;
	}
	free(tids);
	return tid;
}

/* The window as TraceWindow records of at most TRACE_SOURCE_WINDOW_MAX
 * instructions (a 1 MiB frame): pieces after the first continue it
 * (trace_pos 1, 1 + n1, ...: the collector joins them into one stream) and
 * carry no warm-up lines or stop time of their own. */
static void send_window(struct trace_source *ts, const struct trace_window *w)
{
	/* a replay window lost in its warm-up goes as one record of no instructions: the
	 * collector counts it among the discarded (its end_reason says why) */
	for (size_t off = 0; off < w->n || (off == 0 && w->n == 0); off += TRACE_SOURCE_WINDOW_MAX) {
		struct trace_window piece = *w;
		piece.rec = w->rec + off;
		piece.n = w->n - off < TRACE_SOURCE_WINDOW_MAX ? w->n - off : TRACE_SOURCE_WINDOW_MAX;
		if (off) {
			piece.nwarm = 0;
			piece.warm_insns = 0;
			piece.stop_ns = 0;
		}
		struct trace_encode_info info = {
			.arch = trace_native_arch(),
			.pid = target_pid(ts->t),
			.t_ns = w->start_ns - session_base_ns(ts->s),
			.window_index = ts->windows,
			.trace_pos = w->n > TRACE_SOURCE_WINDOW_MAX ? 1 + off : 0,
		};
		Prof__TraceWindow tw;
		if (trace_encode_window(&piece, &info, &tw) < 0) {
			log_warn("trace: window %u not sent: out of memory", ts->windows);
			break;
		}
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
		env.trace_window = &tw;
		int rc = session_send(ts->s, &env);
		trace_encode_free(&tw);
		if (rc < 0) {
			log_warn("trace: window %u not sent: %s", ts->windows, strerror(-rc));
			break;
		}
	}
	ts->windows++; /* an empty one too: its own window_index, one count with the store's */
}

/* Grow the budget by the duty share of the time since the last call; it holds
 * at most the larger of one window's predicted cost and one period's share. */
static void budget_accrue(struct trace_source *ts, uint64_t now, double cost)
{
	double add = ts->o.max_duty / 100.0 * (double)(now - ts->last_ns);
	ts->last_ns = now;
	/* a slow window (a loaded machine) may finish: the overspend delays the next */
	double cap = cost * (ts->replay ? REPLAY_HEADROOM + 1 : 2);
	double period = ts->o.max_duty / 100.0 * ts->o.every_s * 1e9;
	if (cap < period)
		cap = period;
	ts->budget_ns += add;
	if (ts->budget_ns > cap)
		ts->budget_ns = cap;
}

/* Single steps of the first window, before any step was timed: under an emulator one step
 * can cost 100x the guess (issue 30, 8: 44 % duty under TCG against a 5 % cap), so the first
 * window is a short probe that measures it; the next windows are sized from that. */
#define FIRST_PROBE_STEPS 200ul

/* A board window: the snapshot, its TraceSnapshot sent live; the collector replays it. */
static void take_board_window(struct trace_source *ts)
{
	uint64_t now = clock_mono_ns();
	trace_snap_expire(&ts->snap, now);
	budget_accrue(ts, now, ts->snap_ns);
	if (ts->budget_ns < ts->snap_ns) {
		ts->waited++;
		return;
	}
	pid_t tid = pick_thread(ts);
	struct trace_snap_req r = {.pid = target_pid(ts->t), .tid = tid, .window_index = ts->windows,
				   .warmup = ts->warmup, .record = ts->window, .t_ns = now - session_base_ns(ts->s)};
	uint64_t stop = 0;
	char why[320];
	int rc = trace_snap_window(&ts->snap, &r, &stop, why, sizeof(why));
	ts->budget_ns -= (double)stop;
	ts->stop_ns += stop;
	if (rc == -ENOTCONN) {
		if (ts->no_conn++ == 0)
			log_warn("trace: no window: %s (on this board the collector replays the windows: they are "
				 "taken while it is connected)",
				 why);
		return;
	}
	if (r.reaped) /* the thread's end was taken while stopping it: the target needs its status */
		target_child_reaped(ts->t, tid, r.exit_status);
	if (rc < 0) {
		ts->board_failed++;
		if (rc == -ESRCH)
			log_debug("trace: thread %d exited before its window", (int)tid);
		else if (rc != -EBUSY && !ts->said_fail) { /* once; then counted in the summary (-v: each) */
			ts->said_fail = true;
			log_warn("trace: no snapshot of thread %d: %s", (int)tid, why);
		} else
			log_debug("trace: no snapshot of thread %d: %s", (int)tid, why);
		return;
	}
	ts->snapshots++;
	ts->snap_ns = 0.5 * ts->snap_ns + 0.5 * (double)stop;
	if (ts->nstops < sizeof(ts->stops) / sizeof(ts->stops[0]))
		ts->stops[ts->nstops++] = stop;
	note_tid(ts, tid);
	log_info("trace: window %u of thread %d: snapshot sent, target stopped %.2f ms", ts->windows, (int)tid,
		 (double)stop / 1e6);
	ts->windows++;
}

/* The default capture on a board while the collector is not connected (its first connection
 * still being made: wait): true to take a single-stepped window instead (arm64), false for
 * none (32-bit ARM Linux cannot single-step: kernel/ptrace.c ptrace_resume, EIO). */
static bool board_offline_steps(struct trace_source *ts)
{
	if (session_connect_pending(ts->s)) {
		ts->conn_wait++;
		return false;
	}
	bool step = trace_native_arch() != TRACE_ARCH_ARM;
	if (ts->no_conn++ == 0)
		log_warn("trace: no collector connection: %s until it connects (the windows here are snapshots the "
			 "collector replays, which needs it connected%s)",
			 step ? "single-stepped windows, their cache figures upper bounds," : "no windows",
			 step ? "" : "; 32-bit ARM Linux cannot single-step");
	return step;
}

static void take_window(struct trace_source *ts)
{
	if (ts->board && (!ts->board_auto || session_streaming(ts->s))) {
		take_board_window(ts);
		return;
	}
	if ((ts->board && !board_offline_steps(ts)) || ts->off[0])
		return;
	unsigned long n = ts->board ? ts->step_n : ts->window;
	if (!ts->replay && !ts->step_measured && n > FIRST_PROBE_STEPS)
		n = FIRST_PROBE_STEPS;
	double cost = ts->replay && !ts->snap_off ? ts->snap_ns
		      : ts->replay ? (double)(ts->warmup + n) * ts->insn_ns + OVERHEAD_GUESS_NS
				   : (double)n * ts->step_ns + ts->overhead_ns;
	budget_accrue(ts, clock_mono_ns(), cost);
	if (ts->replay && ts->budget_ns < cost * REPLAY_HEADROOM) {
		ts->waited++; /* the budget is still growing */
		return;
	}
	if (!ts->replay && ts->budget_ns < cost) {
		/* cut the window to what the budget pays for, with what single steps cost here; below
		 * half the asked length wait instead (the budget grows to twice a window's cost), so
		 * that windows keep their length where attaching is slow (an emulator: issue 30) */
		double fit = (ts->budget_ns - ts->overhead_ns) / ts->step_ns;
		if (fit < 1 || fit < (double)n / 2) {
			ts->waited++;
			return;
		}
		if (ts->cut++ == 0)
			log_warn("trace: one step costs %.1f us here: windows cut to %lu instructions to stay under "
				 "%.3g%% duty",
				 ts->step_ns / 1e3, (unsigned long)fit, ts->o.max_duty);
		n = (unsigned long)fit;
	}
	pid_t tid = pick_thread(ts);
	struct trace_window w;
	char err[320];
	/* what the budget allows, less a margin for detaching and the emulator's stop latency
	 * (replay), or for the detach (single steps: half the measured attach + detach; the
	 * window was taken because the budget pays for it, so the limit must not undercut that:
	 * a 5 ms floor used to leave 1 ms, less than attaching takes under QEMU TCG, and every
	 * window ended after one step) */
	double margin = ts->replay ? (ts->budget_ns * 0.1 > 5e6 ? ts->budget_ns * 0.1 : 5e6) : ts->overhead_ns / 2;
	uint64_t max_ns = ts->budget_ns > margin + 1e6 ? (uint64_t)(ts->budget_ns - margin) : 1000000;
	int rc;
#ifdef CONFIG_AGENT_TRACE_REPLAY
	if (ts->replay) {
		if (ts->buf_cap < n) {
			free(ts->buf);
			ts->buf = malloc(n * sizeof(*ts->buf));
			ts->buf_cap = ts->buf ? n : 0;
			if (ts->buf) /* its pages faulted in now, not while a thread waits */
				memset(ts->buf, 0, n * sizeof(*ts->buf));
		}
		struct trace_replay_opts ro = {.warm = ts->warmup,
					       .n = n,
					       .max_ns = max_ns,
					       .buf = ts->buf,
					       .buf_cap = ts->buf_cap,
					       .snapshot = !ts->snap_off,
					       .replay_max_ns = REPLAY_MAX_NS,
					       .boost = true};
		rc = trace_replay_capture(ts->dec, tid, &ro, &w, err, sizeof(err));
		if (rc == 0 && ro.snapshot && !w.snapshot && w.snap_why[0]) {
			/* replayed in place (the thread stopped all along): said once */
			ts->snap_off = true;
			snprintf(ts->snap_why, sizeof(ts->snap_why), "%s", w.snap_why);
			log_warn("trace: no snapshot of thread %d (%s): windows replay in place, the thread stopped "
				 "while they run",
				 (int)tid, w.snap_why);
		}
		if (rc == 0 && w.snapshot) {
			ts->snapshots++;
			ts->snap_ns = 0.5 * ts->snap_ns + 0.5 * (double)w.stop_ns;
		} else if (rc == 0 && w.snap_why[0]) {
			ts->in_place++;
		}
	} else
#endif
		rc = trace_window_capture(ts->dec, tid, n, max_ns, &w, err, sizeof(err));
	if (rc == -ENOTSUP) {
		snprintf(ts->off, sizeof(ts->off), "%s", err); /* said once; no more windows */
		log_warn("trace: %s", err);
		return;
	}
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
	if (ts->nstops < sizeof(ts->stops) / sizeof(ts->stops[0]))
		ts->stops[ts->nstops++] = w.stop_ns;
	ts->budget_ns -= (double)w.stop_ns;
	if (ts->replay)
		note_replay(ts, tid, w.end == TRACE_END_UNSUPPORTED && w.n == 0);
	if (ts->replay && w.end == TRACE_END_UNSUPPORTED && w.n == 0) {
		/* code the emulator cannot run (AVX): single steps of what is left of the budget, a
		 * window the report marks as cold (its cache figures are upper bounds) */
		ts->stop_ns += w.stop_ns;
		ts->unsent++;
		trace_window_free(&w);
		double left = ts->budget_ns - OVERHEAD_GUESS_NS;
		unsigned long steps = left > 0 ? (unsigned long)(left / ts->step_ns) : 0;
		if (steps > ts->o.step_window)
			steps = ts->o.step_window;
		if (steps < 100)
			return;
		rc = trace_window_capture(ts->dec, tid, steps, (uint64_t)left, &w, err, sizeof(err));
		if (rc < 0)
			return;
		ts->fallbacks++;
		if (w.reaped)
			target_child_reaped(ts->t, tid, w.exit_status);
		ts->budget_ns -= (double)w.stop_ns;
		if (w.n > 0 && w.steps_ns > 0)
			ts->step_ns = 0.5 * ts->step_ns + 0.5 * (double)w.steps_ns / (double)w.n;
		ts->stop_ns += w.stop_ns;
		if (w.n > 0) {
			if (w.end < NENDS)
				ts->ends[w.end]++;
			ts->insns += w.n;
			note_tid(ts, tid);
			send_window(ts, &w);
		} else {
			ts->unsent++;
		}
		trace_window_free(&w);
		return;
	}
	ts->stop_ns += w.stop_ns;
	/* A replay window cut in its warm-up is sent as a record of no instructions: the collector
	 * counts it among the discarded with its reason (issue 36). How the windows sent ended:
	 * one count of windows everywhere (issue 42); what was not sent is counted apart. */
	bool lost = w.n == 0 && w.end != TRACE_END_EXITED && w.end != TRACE_END_IN_SYSCALL;
	bool sent = w.n > 0 || (lost && ts->replay && w.end == TRACE_END_TIME);
	if (sent && w.end < NENDS)
		ts->ends[w.end]++;
	else if (!sent)
		ts->unsent++;
	/* what an instruction costs here (a loaded machine, a program whose memory the emulator
	 * maps slowly), from what this window ran, also when it ran out of time */
	uint64_t ran = ts->replay ? w.emulated : w.n;
	if (!ts->replay && w.n > 0 && w.stop_ns > 0) {
		/* single steps: attach + detach and the steps apart (a window that ends after a few
		 * steps still measures the attach; the steps need 16 to be worth learning from) */
		double over = w.stop_ns > w.steps_ns ? (double)(w.stop_ns - w.steps_ns) : 0;
		ts->overhead_ns = ts->step_measured ? 0.5 * ts->overhead_ns + 0.5 * over : over;
	}
	if (!ts->replay && !ts->step_measured && w.n >= 16 && w.steps_ns > 0) {
		/* the probe: its time per step */
		ts->step_ns = (double)w.steps_ns / (double)w.n;
		ts->step_measured = true;
		log_debug("trace: one single step costs %.1f us here, attach and detach %.2f ms (first window, %zu "
			  "steps)",
			  ts->step_ns / 1e3, ts->overhead_ns / 1e6, w.n);
	} else if (!ts->replay && !ts->step_measured) {
		/* no measurement yet: keep the guess */
	} else if (ran > 1000 && (ts->replay ? w.replay_ns : w.steps_ns) > 0) {
		double per = (double)(ts->replay ? w.replay_ns : w.steps_ns) / (double)ran;
		if (ts->replay)
			ts->insn_ns = 0.5 * ts->insn_ns + 0.5 * per;
		else
			ts->step_ns = 0.5 * ts->step_ns + 0.5 * per;
	} else if (!ts->replay && w.n > 0 && w.steps_ns > 0) {
		ts->step_ns = 0.5 * ts->step_ns + 0.5 * (double)w.steps_ns / (double)w.n;
	}
	log_debug("trace: window %u of thread %d: %llu + %zu instructions, stopped %.2f ms (%s)", ts->windows,
		  (int)tid, (unsigned long long)w.warm_insns, w.n, (double)w.stop_ns / 1e6, trace_end_name(w.end));
	if (w.snapshot)
		log_debug("trace: window %u stop %.2f ms: attach %.2f, registers %.2f, clone %.2f, restore and detach "
			  "%.2f ms%s; off the stop: checks %.2f ms before, snapshot's first stop %.2f ms after, "
			  "replay %.0f ms",
			  ts->windows, (double)w.stop_ns / 1e6, (double)w.parts.attach / 1e6, (double)w.parts.regs / 1e6,
			  (double)w.parts.clone / 1e6, (double)w.parts.restore / 1e6,
			  w.parts.boosted ? " (real-time priority)" : "", (double)w.parts.checks / 1e6,
			  (double)w.parts.child / 1e6, (double)w.replay_ns / 1e6);
	if (w.n > 0) {
		ts->insns += w.n;
		ts->warm_insns += w.warm_insns;
		ts->stepped += ts->board;
		note_tid(ts, tid);
		send_window(ts, &w);
	} else if (lost) {
		ts->lost++; /* ended in the warm-up */
		if (sent) {
			ts->lost_sent++;
			send_window(ts, &w);
		}
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
	ts->last_ns = now_ns;
	if (ts->board) {
		int rc = trace_snap_open(&ts->snap, s);
		if (rc < 0)
			return rc;
	}
	loop_timer_start(&ts->timer, (uint64_t)(ts->o.every_s * 1e9), now_ns);
	struct loop_source src = {.name = "trace", .prepare = ts_prepare, .dispatch = ts_dispatch, .ctx = ts};
	return loop_add(l, &src);
}

uint32_t trace_source_windows(const struct trace_source *ts)
{
	return ts->windows;
}

int trace_source_replays(const struct trace_source *ts)
{
	return ts->replay || ts->board;
}

double trace_source_duty(const struct trace_source *ts, double elapsed_s)
{
	return elapsed_s > 0 ? (double)ts->stop_ns / 1e7 / elapsed_s : 0.0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

void trace_source_stop_stats(const struct trace_source *ts, uint64_t *median, uint64_t *max)
{
	*median = *max = 0;
	if (!ts->nstops)
		return;
	uint64_t v[sizeof(ts->stops) / sizeof(ts->stops[0])];
	memcpy(v, ts->stops, ts->nstops * sizeof(v[0]));
	qsort(v, ts->nstops, sizeof(v[0]), cmp_u64);
	*median = v[ts->nstops / 2];
	*max = v[ts->nstops - 1];
}

void trace_source_print_summary(const struct trace_source *ts, double elapsed, FILE *out)
{
	double duty = trace_source_duty(ts, elapsed);
	fprintf(out, "\n trace: %u window(s) (%s), %llu instructions recorded", ts->windows,
		ts->board && ts->stepped == ts->windows && ts->stepped ? "single steps, no collector connection"
		: ts->board && ts->stepped ? "snapshots the collector replays; single steps without it"
		: ts->board	 ? "snapshots the collector replays"
		: ts->replay	 ? "replayed in Unicorn"
				 : "single steps",
		(unsigned long long)ts->insns);
	if (ts->board)
		fprintf(out, " here (%lu + %lu asked of the collector each)", ts->warmup, ts->window);
	if (ts->replay)
		fprintf(out, " after %llu of warm-up", (unsigned long long)ts->warm_insns);
	if (ts->ntids > 1)
		fprintf(out, " from %zu threads", ts->ntids);
	fprintf(out, "; threads stopped %.1f ms in %.1f s: %.2f%% duty (cap %g%%, attach to detach)\n",
		(double)ts->stop_ns / 1e6, elapsed, duty, ts->o.max_duty);
	if (ts->nstops) {
		uint64_t med, max;
		trace_source_stop_stats(ts, &med, &max);
		fprintf(out, "  target stopped per window: median %.2f ms, max %.2f ms", (double)med / 1e6, (double)max / 1e6);
		if (ts->replay)
			fprintf(out, " (%u replayed from a snapshot, %u in place%s%s)", ts->snapshots, ts->in_place,
				ts->snap_why[0] ? ": " : "", ts->snap_why);
		fputc('\n', out);
	}
	unsigned other = 0;
	for (int e = 0; e < NENDS; e++)
		other += e != TRACE_END_COMPLETE ? ts->ends[e] : 0;
	if (other) {
		fprintf(out, "  windows ended: %u complete", ts->ends[TRACE_END_COMPLETE]);
		for (int e = 1; e < NENDS; e++)
			if (ts->ends[e])
				fprintf(out, ", %u %s", ts->ends[e], trace_end_name((enum trace_end)e));
		fputc('\n', out);
	}
	if (ts->lost_sent)
		fprintf(out, "  %u of the windows were cut in their warm-up: sent empty, the collector discards them\n",
			ts->lost_sent);
	if (ts->unsent)
		fprintf(out, "  %u attempt(s) recorded nothing and are no window (%u ended in the warm-up)\n", ts->unsent,
			ts->lost - ts->lost_sent);
	if (ts->off[0]) /* the reason was logged once when it was met */
		fprintf(out, "  no windows: single steps are unavailable on this kernel%s\n",
			trace_native_arch() == TRACE_ARCH_ARM ? " (the default capture takes snapshots the collector replays)"
							      : "");
	if (ts->board)
		fprintf(out, "  snapshots: %u sent, %u let go after the collector's replay, %u not taken, %u period(s) "
			     "without a collector connection, %u waiting for its first connection\n",
			ts->snap.sent, ts->snap.done, ts->board_failed, ts->no_conn, ts->conn_wait);
	if (ts->stepped)
		fprintf(out, "  %u single-stepped window(s) while the collector was not connected (cold: their cache "
			     "figures are upper bounds)\n",
			ts->stepped);
	if (ts->fallbacks)
		fprintf(out, "  %u single-stepped window(s) where the emulator met an instruction it lacks (cold: their "
			     "cache figures are upper bounds)\n",
			ts->fallbacks);
	if (ts->waited || ts->cut)
		fprintf(out, "  %u period(s) without a window and %u window(s) cut, to keep the duty cap\n", ts->waited,
			ts->cut);
}

void trace_source_close(struct trace_source *ts)
{
	if (!ts)
		return;
	if (ts->board)
		trace_snap_close(&ts->snap);
	trace_decoder_close(ts->dec);
	free(ts->buf);
	free(ts);
}
#endif
