/* Internals shared by sampler.c and its back ends (sampler_ring.c,
 * sampler_bpf.c). Not an API: include sampler.h. */
#ifndef AGENT_SAMPLER_PRIV_H
#define AGENT_SAMPLER_PRIV_H

#include <linux/perf_event.h>

#include "generated/config.h"

#include "mmap_watch.h"
#include "perf_map.h"
#include "proc_maps.h"
#include "sample_agg.h"
#include "task_names.h"
#include "sampler.h"

#ifdef CONFIG_AGENT_BPF
#define SAMPLER_HAVE_BPF 1
#endif

struct sampler_ops {
	enum sampler_backend id;
	/* Open and attach; started for PID/SYSTEM, on exec for EXEC. */
	int (*open)(struct sampler *s, char *err, size_t errlen);
	/* pollfds to wait on (may be 0); may lower *timeout_ms. */
	int (*fds)(struct sampler *s, struct pollfd *pfd, int max, uint64_t now_ns, int *timeout_ms);
	/* What poll said about those fds (optional). */
	void (*revents)(struct sampler *s, const struct pollfd *pfd, int n, uint64_t now_ns);
	/* Move what the kernel holds into s->agg (and s->tt). */
	int (*drain)(struct sampler *s, uint64_t now_ns);
	void (*close)(struct sampler *s);
};

struct sampler {
	struct sampler_opts o;
	const struct sampler_ops *ops;
	void *be;
	struct event_desc ev;
	uint64_t period;     /* sample_period when not by frequency */
	bool by_freq;
	struct sample_agg agg;
	struct stack_table stacks;
	struct proc_maps maps;
	struct task_names tasks; /* process and thread names, declared once */
	struct mmap_watch *mw; /* mappings as they happen (NULL: only the lazy /proc scan) */
	struct perf_maps jit; /* /tmp/perf-PID.map files read for samples in anonymous memory */
	int mw_first, mw_n;    /* its pollfds in the source's array */
	Prof__TaskTime *tt;  /* task times of the interval (bpf) */
	size_t ntt, captt;
	uint64_t lost;       /* since the last record */
	uint64_t last_emit_ns;
	uint64_t gen;
	bool event_declared;
	bool drop_warned; /* the one line about dropped tracking was said */
	bool ring_mono; /* ring back end: its samples' times on CLOCK_MONOTONIC (use_clockid) */
	struct loop_timer timer;
	struct sampler_stats st;
};

extern const struct sampler_ops sampler_ring_ops;
#ifdef SAMPLER_HAVE_BPF
extern const struct sampler_ops sampler_bpf_ops;
#endif

/* Add one sample (count) to the aggregation; emits an early record when the
 * table is full. Scans the process's mappings the first time a key appears. */
int sampler_add(struct sampler *s, const struct sample_key *k, uint64_t count, uint64_t now_ns);
/* The incarnation of pid's process for a sample stamped stamp_ns on the mapping watch's clock (the
 * process's start or the sample's time; 0: unknown, the current one): task_names_inc_of, the
 * process named first when it is new. */
uint32_t sampler_inc_of(struct sampler *s, int32_t pid, uint64_t stamp_ns);
/* Send what s->agg holds as one Samples record (two where a pid's previous process has keys beside
 * its current one's: the previous one's first), declaring what they use; the aggregation is reset
 * (sampler_emit.c). 0 or the sink's negative errno. */
int sampler_emit_record(struct sampler *s, uint64_t now_ns);
/* Add a task-time row for this interval. */
int sampler_add_task_time(struct sampler *s, int32_t pid, int32_t tid, uint64_t on_ns, uint64_t off_ns,
			  uint64_t switches);
/* perf_event_attr for the sampling event (period/freq, sample type). */
void sampler_fill_attr(const struct sampler *s, struct perf_event_attr *a, uint64_t sample_type);

#endif
