/* Names of the sampled tasks (process comm and thread name), declared once
 * per session in Samples.new_tasks. From the kernel's records as they happen
 * (mmap_watch: COMM at exec and renames, FORK: the forking thread's name
 * inherited); a task older than the session is read from /proc once: at the
 * session's start (task_names_snapshot), else when it first shows up in the samples. A task that exited (EXIT record) is evicted
 * by the second task_names_reap() after it (the sampler reaps once per interval, after its records are
 * sent: a bpf back end's samples of a task whose EXIT came after the drain are in the next one). Bounded:
 * TASK_NAMES_MAX live tasks (128 bytes each with the previous task's names, w44a; twice that in
 * table slots: 4 MiB); past it a new task is not named and counted in dropped.
 * Functions return 0 or a negative errno.
 *
 * A pid used again within the session (pid reuse, w44a): a process started on a pid the session
 * has seen before (a FORK record, or a first sample of an unknown pid) gets the next incarnation
 * number (inc, > 0; TaskName.incarnation); its threads carry it. An entry taken over by a new task
 * keeps the previous one's names and incarnation (prev_*) until its samples are sent, with the time
 * from which the pid's samples are the new process's (boundary_ns: the previous one's EXIT). The pids
 * seen are one bit each (at most 512 KiB at the kernel's largest pid_max). */
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
	uint32_t inc;	       /* its process's incarnation in the session (0: the pid's first) */
	uint32_t first_map_id; /* (process) the session's mapping ids of the pid from here are its own (0: unknown) */
	uint64_t boundary_ns;  /* (process, prev_valid) samples from here on are this one's, before: prev's */
	/* the task this entry held before (its id used again), until its samples are sent */
	bool prev_valid, prev_declared, prev_sampled, prev_pending;
	uint32_t prev_inc, prev_first_map_id;
	char prev_comm[TASK_NAME_LEN], prev_thread[TASK_NAME_LEN];
};

struct task_names {
	struct task_name *slots;
	size_t cap, n;    /* open addressing, cap a power of two */
	size_t nexited;   /* entries marked exited */
	uint32_t rounds;  /* reaps so far */
	uint64_t dropped; /* tasks not named: TASK_NAMES_MAX live ones known */
	uint64_t evicted; /* exited tasks reaped */
	const char *proc; /* "/proc" (tests: another root) */
	uint32_t next_inc;     /* the next process incarnation number (from 1) */
	uint32_t next_map_id;  /* set by the caller before task_names_fork: the next mapping id */
	uint8_t *seen;	       /* a bit per pid whose process the session has known */
	size_t seen_bytes;
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
/* The incarnation of pid's process that a sample of (pid, tid) stamped at stamp_ns belongs to (the
 * stamp: the process's start or the sample's time, on the records' clock; 0: unknown, the current
 * one). A sample of the previous process marks the entry prev_pending. */
uint32_t task_names_inc_of(struct task_names *t, int32_t pid, uint64_t stamp_ns);
/* Mark every task undeclared (the spool dropped records, a new generation). */
void task_names_redeclare(struct task_names *t);
/* Iterate: for (size_t i = 0; i < t->cap; i++) if (t->slots[i].tid && !t->slots[i].declared) ... */

#endif
