/* The wall-clock flame of `collector flame --offcpu`: each task's time on and
 * off the CPU from the BPF back end's sched_switch accounting (task_times),
 * in milliseconds, as stacks process > "thread (tid N)" > either "[off-CPU]"
 * or, for the on-CPU time, the functions of the thread's sampled stacks (the
 * on-CPU time split in proportion to their samples; "[on-CPU]" for a thread
 * never sampled). So a thread asleep half of its time is half "[off-CPU]". */
#ifndef COLLECTOR_VIEWS_OFFCPU_FLAME_H
#define COLLECTOR_VIEWS_OFFCPU_FLAME_H

#include "query/query.h"
#include "stacks.h"

#define OFFCPU_FRAME "[off-CPU]"
#define ONCPU_FRAME "[on-CPU]"

/* The sessions qo names (--session; else those its filters select samples
 * of), their tasks filtered by qo's --comm and --pid, into out (counts: ms).
 * 0 or -errno. */
int offcpu_flame_set(struct store *st, const struct query_opts *qo, struct stack_set *out);

#endif
