/* On/off-CPU time per task (the task_times rows the BPF back end's sched_switch
 * accounting sends with its samples), summed over a session. Which of a reused pid's
 * processes a row is (pid reuse, w44a) is the query model's to say (query_task_times,
 * query.h): read through it, not through this. */
#ifndef COLLECTOR_STORE_TASK_TIMES_H
#define COLLECTOR_STORE_TASK_TIMES_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct store_task_time_row {
	int32_t pid, tid;
	int64_t seq; /* by_seq and pid has a later process (sample_task_incs): the record's; else -1 */
	uint64_t on_ns, off_ns, switches;
	const char *comm, *thread; /* from sample_tasks ("" when the task was never sampled) */
};
typedef int (*store_task_time_cb)(const struct store_task_time_row *row, void *arg);

/* Every task of session sid with its summed times, by (pid, tid); with by_seq, the tasks of a pid
 * that sample_task_incs names a later process of are summed per record instead (by (pid, tid, seq)),
 * so the caller can tell the pid's processes apart (the table must exist). cb's error stops it.
 * 0 or -errno. */
int store_task_times(struct store *s, int64_t sid, bool by_seq, store_task_time_cb cb, void *arg);

#endif
