/* CPU sampling (agent record): samples of one event at HZ on a target,
 * aggregated per (pid, tid, user ip or call chain, kernel ip) and sent as one
 * Samples record per interval. Two back ends with the same output:
 *   bpf  - a perf_event BPF program per CPU aggregates in a kernel hash map
 *          (drained and reset every interval), plus sched_switch on/off-CPU
 *          time per task (CONFIG_AGENT_BPF, Linux >= 5.x with BTF);
 *   ring - perf mmap ring buffers read by the agent and aggregated in user
 *          space (any kernel with perf_event, Linux 3.4 included).
 * The sampler is a loop source (loop.h); records go to opts.emit. */
#ifndef AGENT_SAMPLER_H
#define AGENT_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"
#include "loop.h"
#include "perf.h"
#include "profiler.pb-c.h"

#define SAMPLER_EVENT_ID_WITH_COUNTERS 65536u /* above any counter event id (VALIDATE_MAX_EVENTS) */

enum sampler_backend { SAMPLER_AUTO = 0, SAMPLER_BPF = 1, SAMPLER_RING = 2 }; /* = Samples.backend */

struct sampler_opts {
	enum sampler_backend backend;
	unsigned freq_hz;          /* samples per second per CPU (of CPU time) */
	bool callgraph;            /* -g: user call chains */
	enum perf_target_kind kind;
	pid_t pid;                 /* PID and EXEC targets */
	uint64_t interval_ns;      /* one record per interval */
	uint64_t base_ns;          /* Hello.base_ns: record times are relative to it */
	const char *event;         /* NULL: hardware cycles when the PMU works, else cpu-clock */
	/* EventDesc id of the sampled event (0: 1). A session that also sends
	 * Counters (agent profile) gives an id its counters do not use: ids are
	 * per session, the first declaration of an id is the one stored. */
	uint32_t event_id;
	/* Where records go (e.g. session_send). The envelope is freed after the
	 * call. Return -ESTALE (without sending) to get the same record again
	 * with every mapping, stack and event it uses declared. */
	int (*emit)(void *ctx, Prof__Envelope *env);
	/* Optional: a number that changes when interned names must be declared again. */
	uint64_t (*generation)(void *ctx);
	void *ctx;
};

struct sampler_stats {
	uint64_t samples;  /* total counted */
	uint64_t lost;
	uint64_t records;  /* Samples records emitted */
	uint64_t keys;     /* aggregated keys sent */
	uint64_t mappings, stacks;
	unsigned freq_hz;  /* the rate used (below -F when the kernel's limit is lower) */
};

struct sampler;

/* Choose the event and back end and open the sampling events (a command
 * target's start at its exec; the others at once). With SAMPLER_AUTO, bpf
 * is tried first and the reason for falling back to ring is logged; an
 * explicit back end that cannot work is an error (err says why and what to
 * do). Needs root or a permissive perf_event_paranoid. */
int sampler_open(struct sampler **out, const struct sampler_opts *o, char *err, size_t errlen);
enum sampler_backend sampler_backend(const struct sampler *s);
const char *sampler_backend_name(enum sampler_backend b);
/* The event actually sampled ("cpu-clock" when the PMU is absent). */
const struct event_desc *sampler_event(const struct sampler *s);
/* The loop source: ring wakeups and the interval timer. */
void sampler_loop_source(struct sampler *s, struct loop_source *src);
/* Before the loop runs (the kernel's symbols being read): move what the kernel holds
 * into the sampler without sending (mapping/name records; the ring back end's samples:
 * the BPF back end's map keeps them), so the per-CPU rings do not fill. ctx: the sampler. */
void sampler_keep_up(void *ctx);
/* Drain what the kernel holds and emit a record now (also at the end). */
int sampler_flush(struct sampler *s, uint64_t now_ns);
void sampler_get_stats(const struct sampler *s, struct sampler_stats *st);
void sampler_close(struct sampler *s);

/* Parse "bpf", "ring", "auto". */
int sampler_parse_backend(const char *s, enum sampler_backend *out);
/* Is the bpf back end compiled in? */
bool sampler_bpf_compiled(void);

#endif
