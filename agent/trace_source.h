/* Sampled instruction-trace windows as a loop source. One thread of the
 * target (--tid, else its threads in turn, running ones first) is stopped at
 * a time and let go; each window goes to the session as a TraceWindow record.
 * Two ways to take a window:
 *   replay  (CONFIG_AGENT_TRACE_REPLAY, x86_64, libunicorn.so.2 present) the
 *           thread's next `warmup` + `window` instructions run in Unicorn on
 *           copies of its memory (agent/trace/replay.h): the warm-up's lines
 *           warm the collector's cache model, the rest is recorded;
 *   step    `window` single steps with ptrace (agent/trace/window.h);
 *   snapshot (--capture snapshot, arm64 and 32-bit ARM: trace_snap.h) the thread stops
 *           for a snapshot only, the collector replays warmup + window from its pages.
 * The stop time, attach to detach, is kept under max_duty percent of the
 * elapsed time with a budget: it grows by max_duty % of the time that passes
 * and every window spends what it really stopped the thread; a window starts
 * (every every_s seconds at most) only when the budget covers its predicted
 * cost, and never runs past the budget (replay: the emulator's time limit;
 * step: windows are cut to fit). Used by `agent trace` and `agent profile`.
 * Only built with CONFIG_AGENT_TRACER. */
#ifndef AGENT_TRACE_SOURCE_H
#define AGENT_TRACE_SOURCE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "loop.h"
#include "session.h"
#include "target.h"

#define TRACE_SOURCE_WINDOW_MAX 60000u	  /* instructions per record (a window is sent in pieces): 1 MiB frame */
#define TRACE_SOURCE_STEP_GUESS_NS 10000u /* before the first window: 10 us per single step */
#define TRACE_SOURCE_REPLAY_WINDOW 200000u /* replay: recorded instructions by default */
#define TRACE_SOURCE_REPLAY_WARMUP 500000u /* replay: warm-up instructions by default */

struct trace_source;

enum trace_source_capture { TRACE_SOURCE_AUTO = 0, TRACE_SOURCE_REPLAY, TRACE_SOURCE_STEP, TRACE_SOURCE_SNAPSHOT };

struct trace_source_opts {
	pid_t tid;		 /* 0: the target's threads in turn */
	unsigned long window;	 /* recorded instructions per window (0: the capture's default) */
	unsigned long warmup;	 /* replay: warm-up instructions (ULONG_MAX: the default) */
	unsigned long step_window; /* step: the default window of this command */
	int capture;		 /* enum trace_source_capture */
	double every_s;		 /* seconds between windows, at least */
	double max_duty;	 /* percent of the time a thread may be stopped */
};

/* The options every command with trace windows takes (--window, --warmup,
 * --every, --max-duty, --capture), by long name: 0, 1 if name is not one of
 * them, or EXIT_USAGE after logging what is wrong. */
int trace_source_option(struct trace_source_opts *o, const char *name, const char *arg);
/* Their lines of --help. */
extern const char trace_source_help[];

/* The stop share single-step windows with these settings predict at the
 * guessed step cost, percent (replay windows are spaced by the budget). */
double trace_source_predicted_duty(const struct trace_source_opts *o);
/* Open the instruction decoder and pick the capture. -ELIBACC: Capstone (or,
 * with --capture replay, Unicorn) is missing; err says what to do. */
int trace_source_new(struct trace_source **out, const struct trace_source_opts *o, char *err, size_t errlen);
/* Take windows of t's threads through s from now on. */
int trace_source_start(struct trace_source *ts, struct target *t, struct session *s, struct loop *l, uint64_t now_ns);
/* " trace: N window(s), N instructions, thread stopped ..." */
void trace_source_print_summary(const struct trace_source *ts, double elapsed_s, FILE *out);
uint32_t trace_source_windows(const struct trace_source *ts);
/* The target's stop per window (attach to detach; with snapshots, the snapshot's), ns: the
 * median and the largest over the first 1024 windows (0 when none). */
void trace_source_stop_stats(const struct trace_source *ts, uint64_t *median, uint64_t *max);
/* Replay windows (else single steps)? */
int trace_source_replays(const struct trace_source *ts);
/* Percent of elapsed_s the traced threads were stopped, all windows together. */
double trace_source_duty(const struct trace_source *ts, double elapsed_s);
void trace_source_close(struct trace_source *ts);

#endif
