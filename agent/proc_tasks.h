/* Threads of a process, from /proc/PID/task. */
#ifndef AGENT_PROC_TASKS_H
#define AGENT_PROC_TASKS_H

#include <stddef.h>
#include <sys/types.h>

/* Thread ids of pid (malloc'd array in *out, count in *n). Returns 0 or
 * -errno (-ENOENT: no such process). */
int proc_list_tids(pid_t pid, pid_t **out, size_t *n);

#endif
