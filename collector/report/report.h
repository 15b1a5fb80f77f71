/* Sections of `collector report`. Each section renders one aspect of a stored
 * session; computation lives in the analysis libraries, this is the glue. */
#ifndef COLLECTOR_REPORT_REPORT_H
#define COLLECTOR_REPORT_REPORT_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "query/query.h"
#include "store/store.h"

enum report_sort { REPORT_SORT_TOTAL, REPORT_SORT_COUNT, REPORT_SORT_MEAN, REPORT_SORT_NAME };

struct report_opts {
	bool json;
	const char *symfs;     /* --symfs DIR: where to look for binaries with symbols */
	const char *debug_dir; /* --debug-dir DIR: separate debug files, besides /usr/lib/debug */
	const char *kallsyms;  /* --kallsyms FILE: kernel functions (instead of the agents' tables) */
	unsigned limit;        /* --limit N: rows per table (0 = default) */
	enum report_sort sort; /* --sort: the OpenCL table's order (kernels first, then transfers) */
};

/* Top functions from CPU samples (--top). */
int report_top(struct store *st, int64_t sid, const struct report_opts *o, FILE *out);
/* CPU samples of the function named func (leaf samples, resolved as --top does, symfs as there),
 * the session's sampling frequency (0: sampled by period; several: the largest) and their CPU time
 * in ns: each sample at its session's period (a timer's: a little longer than 1/freq_hz,
 * agent/sampler.c; none: 1 s / freq_hz; where the session's own records' periods differ, an
 * agent upgraded within one boot: their samples' mean, query_session_info.sample_ns). 0 or -errno. */
int report_function_samples(struct store *st, int64_t sid, const char *symfs, const char *func, uint64_t *count,
			    int64_t *freq_hz, uint64_t *ns);
/* The top table of a query (collector report without --session, or with filters): rows grouped by `by`,
 * self and total, process, pid and agent columns; text or JSON. */
int report_query_top(const struct query_result *r, enum query_group by, unsigned limit, bool json, FILE *out);
/* Wall time on and off the CPU per process and thread (--offcpu), from the BPF back end's
 * sched_switch accounting (task_times). */
int report_offcpu(struct store *st, int64_t sid, const struct report_opts *o, FILE *out);
/* OpenCL command table (--opencl). */
int report_opencl(struct store *st, int64_t sid, const struct report_opts *o, FILE *out);

#endif
