/* Sampled instruction-trace windows as a loop source: every `every_s`
 * seconds one thread of the target (--tid, else its threads in turn, running
 * ones first) is stopped, single-stepped for up to `window` instructions
 * (agent/trace/window.h) and let go; each window goes to the session as a
 * TraceWindow record. The stop time is kept under max_duty percent of the
 * period with the measured cost of a step. Used by `agent trace` and
 * `agent profile`. Only built with CONFIG_AGENT_TRACER. */
#ifndef AGENT_TRACE_SOURCE_H
#define AGENT_TRACE_SOURCE_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "loop.h"
#include "session.h"
#include "target.h"

#define TRACE_SOURCE_WINDOW_MAX 60000u /* instructions per record: fits a 1 MiB frame */
#define TRACE_SOURCE_STEP_GUESS_NS 10000u /* before the first window: 10 us per single step */

struct trace_source_opts {
	pid_t tid;		/* 0: the target's threads in turn */
	unsigned long window;	/* instructions per window */
	double every_s;		/* seconds between windows */
	double max_duty;	/* percent of the time a thread may be stopped */
	unsigned block_slack_ms; /* a thread blocked in a system call ends its window after twice the
				    duty budget plus this (0: 100 ms); the agent's loop waits that long */
};

struct trace_source;

/* The stop share these settings predict at the guessed step cost, percent. */
double trace_source_predicted_duty(const struct trace_source_opts *o);
/* Open the instruction decoder. -ELIBACC: Capstone is missing; err says what to do. */
int trace_source_new(struct trace_source **out, const struct trace_source_opts *o, char *err, size_t errlen);
/* Take windows of t's threads through s from now on. */
int trace_source_start(struct trace_source *ts, struct target *t, struct session *s, struct loop *l, uint64_t now_ns);
/* " trace: N window(s), N instructions, thread stopped ..." */
void trace_source_print_summary(const struct trace_source *ts, double elapsed_s, FILE *out);
uint32_t trace_source_windows(const struct trace_source *ts);
void trace_source_close(struct trace_source *ts);

#endif
