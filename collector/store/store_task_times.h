/* On/off-CPU time per task (the task_times rows the BPF back end's sched_switch
 * accounting sends with its samples), summed over a session. */
#ifndef COLLECTOR_STORE_TASK_TIMES_H
#define COLLECTOR_STORE_TASK_TIMES_H

#include <stdint.h>

#include "store.h"

struct store_task_time_row {
	int32_t pid, tid;
	uint64_t on_ns, off_ns, switches;
	const char *comm, *thread; /* from sample_tasks ("" when the task was never sampled) */
};
typedef int (*store_task_time_cb)(const struct store_task_time_row *row, void *arg);

/* Every task of session sid with its summed times; cb's error stops it. 0 or -errno. */
int store_task_times(struct store *s, int64_t sid, store_task_time_cb cb, void *arg);

#endif
