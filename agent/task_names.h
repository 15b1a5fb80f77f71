/* Names of the sampled tasks (process comm and thread name), read from
 * /proc once per (pid, tid) when the task first shows up in the samples, and
 * declared once per session in Samples.new_tasks. Bounded: when
 * TASK_NAMES_MAX tasks are known the table starts over (names are read and
 * declared again). Functions return 0 or a negative errno. */
#ifndef AGENT_TASK_NAMES_H
#define AGENT_TASK_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TASK_NAMES_MAX 16384u
#define TASK_NAME_LEN 16 /* TASK_COMM_LEN */

struct task_name {
	int32_t pid, tid; /* tid 0: free slot */
	char comm[TASK_NAME_LEN], thread[TASK_NAME_LEN];
	bool declared;
};

struct task_names {
	struct task_name *slots;
	size_t cap, n;    /* open addressing, cap a power of two */
	const char *proc; /* "/proc" (tests: another root) */
};

int task_names_init(struct task_names *t, const char *proc_root);
void task_names_free(struct task_names *t);
/* Know (pid, tid): reads its names the first time (a task that is gone keeps
 * empty names). 1 new, 0 known, -ENOMEM. */
int task_names_ensure(struct task_names *t, int32_t pid, int32_t tid);
/* What a COMM record says: tid of pid is now named comm (tid == pid: the
 * process, at its exec). 0 or -ENOMEM. */
int task_names_set(struct task_names *t, int32_t pid, int32_t tid, const char *comm);
/* The entry of (pid, tid), NULL if unknown. */
struct task_name *task_names_find(struct task_names *t, int32_t pid, int32_t tid);
/* Mark every task undeclared (the spool dropped records, a new generation). */
void task_names_redeclare(struct task_names *t);
/* Iterate: for (size_t i = 0; i < t->cap; i++) if (t->slots[i].tid && !t->slots[i].declared) ... */

#endif
