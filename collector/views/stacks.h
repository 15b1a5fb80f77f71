/* The input every profile view renders: aggregated call stacks, in memory.
 * The query model (collector/query/) fills a stack_set from the store; the
 * views (flame graphs, diff, caller/callee, folded, pprof, the Perfetto CPU
 * track) only read it: no view runs SQL. Strings are interned; each stack is
 * a run of frames, root first, with its sample count and keys (process,
 * thread, agent). Bounded: STACKS_MAX_FRAMES frames a stack. */
#ifndef COLLECTOR_VIEWS_STACKS_H
#define COLLECTOR_VIEWS_STACKS_H

#include <stddef.h>
#include <stdint.h>

#include "symbols.h"

#define STACKS_MAX_FRAMES 512

struct vframe {
	uint32_t name;   /* string id: function (demangled), "[module]", "[kernel]" */
	uint32_t raw;    /* string id of the symbol as in the file (mangled), 0 if none */
	uint32_t module; /* string id: basename of the file, "[kernel]", "[unknown]" */
	uint32_t path, build_id; /* string ids: the file's path and build-id (hex), 0 if unknown */
	uint32_t src_file, src_line; /* string id of the source file (DWARF) and its line, 0 if unknown */
	uint64_t ip, file_off;
	uint8_t resolved, kernel;
};

struct vstack {
	size_t first;   /* frames[first .. first+n), root first */
	uint32_t n;
	uint64_t count; /* samples */
	uint32_t comm;  /* string id of the process name, 0 if unknown */
	uint32_t thread;
	int32_t pid, tid;
	uint32_t agent; /* string id, 0 if unknown */
	uint64_t ns;    /* CPU time of its samples: count x its session's period (sample_period_ns);
			   0: not known, count x the set's period */
};

/* CPU samples over time (the CPU-over-time chart, the Perfetto track). */
struct vpoint {
	int64_t t_ns;   /* start of the interval, ns since the epoch (or a session base) */
	int64_t dur_ns; /* its length */
	uint64_t count;
	uint32_t track; /* string id: what the point belongs to (a process, an agent) */
};

struct stack_set {
	char **strs; /* strs[0] = "" */
	size_t nstrs, capstrs;
	uint32_t *hash; /* open addressing over strs, capacity caphash */
	size_t caphash;
	struct vframe *frames;
	size_t nframes, capframes;
	struct vstack *stacks;
	size_t nstacks, capstacks;
	struct vpoint *points;
	size_t npoints, cappoints;
	uint64_t total;  /* samples over all stacks */
	int64_t freq_hz; /* sampling frequency (0: unknown or by period; several: the largest) */
	int64_t period;  /* events between samples at freq_hz (a timer: ns; 0: unknown); a stack's own
			    time is its ns where set (sessions' periods differ) */
	int64_t t0_ns, t1_ns; /* time range covered (0 unknown) */
	char event[128]; /* the sampled event ("cpu-clock", ...) */
};

struct stack_keys {
	const char *comm, *thread, *agent; /* NULL: unknown */
	int32_t pid, tid;
};

void stack_set_init(struct stack_set *s);
void stack_set_free(struct stack_set *s);
/* Intern str; its id (0 for NULL or ""), or -ENOMEM as a negative int64. */
int64_t stack_set_intern(struct stack_set *s, const char *str);
static inline const char *stack_set_str(const struct stack_set *s, uint32_t id)
{
	return id < s->nstrs ? s->strs[id] : "";
}
/* Add count samples of a stack given leaf first (as call chains come: the
 * sampled ip, then the return addresses). 0, -EINVAL (n == 0 or more than
 * STACKS_MAX_FRAMES), -ENOMEM. */
int stack_set_add(struct stack_set *s, const struct sym_frame *leaf_first, size_t n, uint64_t count,
		  const struct stack_keys *k);
/* Same with frames given by name only, root first (tests, folded input):
 * module "[unknown]", marked resolved. */
int stack_set_add_names(struct stack_set *s, const char *const *root_first, size_t n, uint64_t count,
			const struct stack_keys *k);
/* One point of the CPU-over-time series. 0 or -ENOMEM. */
int stack_set_add_point(struct stack_set *s, int64_t t_ns, int64_t dur_ns, uint64_t count, const char *track);

#endif
