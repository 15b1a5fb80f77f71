/* The agent's single-threaded poll loop. Everything the agent waits on — the
 * collector connection, the profiled target, interval timers, a sampler's
 * ring buffers, the OpenCL layer's socket — is a source with a prepare and a
 * dispatch function. The loop never blocks past the nearest deadline any
 * source asked for, and nothing in it may block. */
#ifndef AGENT_LOOP_H
#define AGENT_LOOP_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#define LOOP_MAX_SOURCES 32
#define LOOP_MAX_FDS 256 /* pollfds over all sources */

struct loop;

struct loop_source {
	const char *name;
	/* Fill up to max pollfds (an fd of -1 is ignored by poll) and return how
	 * many entries were used; lower *timeout_ms (initially -1 = none) to the
	 * milliseconds until this source's next deadline. */
	int (*prepare)(void *ctx, struct pollfd *pfd, int max, uint64_t now_ns, int *timeout_ms);
	/* After poll: the same entries with revents set (all 0 when only a
	 * deadline passed). Return 0, or a negative errno to stop the loop with it. */
	int (*dispatch)(void *ctx, struct pollfd *pfd, int n, uint64_t now_ns);
	void *ctx;
};

int loop_create(struct loop **out);
void loop_destroy(struct loop *l);
/* Register a source (copied). Returns 0, -ENOSPC. */
int loop_add(struct loop *l, const struct loop_source *src);
/* Unregister the source whose ctx is ctx. */
void loop_remove(struct loop *l, void *ctx);
/* Ask loop_run to return code after the current iteration. */
void loop_stop(struct loop *l, int code);
bool loop_stopping(const struct loop *l);
/* Poll and dispatch until loop_stop or a dispatch error; returns the code. */
int loop_run(struct loop *l);
/* One iteration, waiting at most max_wait_ms (-1: the sources' deadlines). */
int loop_step(struct loop *l, int max_wait_ms);

/* A periodic deadline for sources that need one (no fd, no timerfd). */
struct loop_timer {
	uint64_t period_ns;
	uint64_t next_ns; /* 0: not armed */
};
void loop_timer_start(struct loop_timer *t, uint64_t period_ns, uint64_t now_ns);
/* Lower *timeout_ms to this timer's deadline (for prepare). */
void loop_timer_timeout(const struct loop_timer *t, uint64_t now_ns, int *timeout_ms);
/* True once per expiry (for dispatch); re-arms for the next period. */
bool loop_timer_expired(struct loop_timer *t, uint64_t now_ns);

#endif
