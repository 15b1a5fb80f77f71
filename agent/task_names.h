/* Names of the sampled tasks (process comm and thread name), declared once
 * per session in Samples.new_tasks. From the kernel's records as they happen
 * (mmap_watch: COMM at exec and renames, FORK: the forking thread's name
 * inherited); a task older than the session is read from /proc once: at the
 * session's start (task_names_snapshot), else when it first shows up in the samples. A task that exited (EXIT record) is evicted
 * by the second task_names_reap() after it (reaps follow sent records). Bounded:
 * TASK_NAMES_MAX live tasks (about 48 bytes each, twice that in table slots:
 * 1.5 MiB); past it a new task is not named and counted in dropped.
 * Functions return 0 or a negative errno. */
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
	bool exited; /* EXIT record seen: evicted at the next reap */
	uint64_t exit_ns;    /* its time */
	uint32_t exit_round; /* reaps before it: evicted by the second reap after it */
	bool sampled; /* in a record's samples: declared (again when its name changes) */
};

struct task_names {
	struct task_name *slots;
	size_t cap, n;    /* open addressing, cap a power of two */
	size_t nexited;   /* entries marked exited */
	uint32_t rounds;  /* reaps so far */
	uint64_t dropped; /* tasks not named: TASK_NAMES_MAX live ones known */
	uint64_t evicted; /* exited tasks reaped */
	const char *proc; /* "/proc" (tests: another root) */
};

int task_names_init(struct task_names *t, const char *proc_root);
void task_names_free(struct task_names *t);
/* Know (pid, tid): reads its names the first time (a task that is gone keeps
 * empty names). 1 new, 0 known, -ENOMEM. */
int task_names_ensure(struct task_names *t, int32_t pid, int32_t tid);
/* The tasks alive now (pid 0: every process; else pid's threads), named from /proc as perf
 * names them when it starts (its synthesized COMM records): a task older than the session that
 * is first sampled as it exits is still named. Call once the COMM/FORK records are watched. At
 * most TASK_NAMES_MAX / 2 (the rest read at their first sample). Returns how many. */
size_t task_names_snapshot(struct task_names *t, int32_t pid);
/* What a COMM record says: tid of pid is now named comm (tid == pid: the
 * process, at its exec). 0 or -ENOMEM. */
int task_names_set(struct task_names *t, int32_t pid, int32_t tid, const char *comm);
/* A FORK record: (pid, tid) was created by (ppid, ptid) and carries its name
 * (a thread: its process's comm too). 0, -ENOSPC (over the bound). */
int task_names_fork(struct task_names *t, int32_t pid, int32_t tid, int32_t ppid, int32_t ptid, uint64_t time_ns);
/* An EXIT record: (pid, tid) is gone; evicted at the next reap. Times are the
 * records' (perf clock): a FORK older than the EXIT of its task is a late one
 * from another CPU's ring, not a new task with the same id. */
void task_names_exit(struct task_names *t, int32_t pid, int32_t tid, uint64_t time_ns);
/* Drop the tasks that exited before the previous call (call after a record
 * was sent: one round of grace for records from rings drained later). Returns how many. */
size_t task_names_reap(struct task_names *t);
/* The entry of (pid, tid), NULL if unknown. */
struct task_name *task_names_find(struct task_names *t, int32_t pid, int32_t tid);
/* Mark every task undeclared (the spool dropped records, a new generation). */
void task_names_redeclare(struct task_names *t);
/* Iterate: for (size_t i = 0; i < t->cap; i++) if (t->slots[i].tid && !t->slots[i].declared) ... */

#endif
