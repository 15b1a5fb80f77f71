/* A thread's CPU priority raised for the few milliseconds of a snapshot's stop
 * (snapshot.h), then put back. On a loaded machine the injected clone's work
 * (copying a large process's page tables) runs in the stopped thread's own
 * context at its own priority: preempted by the other runnable threads it
 * took several scheduling slices (26-46 ms at load 10-13 on 2 CPUs for a
 * 256 MiB process whose fork alone is ~3 ms), and the agent waiting for it
 * too. SCHED_FIFO priority 1 with SCHED_RESET_ON_FORK (the snapshot child
 * starts as an ordinary thread), only for threads of the ordinary classes
 * (SCHED_OTHER, BATCH, IDLE; their nice value is kept: kernel/sched/syscalls.c,
 * _sched_setscheduler() takes it from the task). Needs CAP_SYS_NICE; without
 * it nothing is changed and the stop is as long as the load makes it. The RT
 * throttle (sched_rt_runtime_us) bounds what a boosted thread can take should
 * the agent die before putting it back. */
#ifndef AGENT_TRACE_BOOST_H
#define AGENT_TRACE_BOOST_H

#include <stdbool.h>
#include <sys/types.h>

struct trace_boost {
	pid_t tid;
	int policy; /* as sched_getscheduler gave it, SCHED_RESET_ON_FORK included */
	int prio;
	bool on;
};

/* Raise thread tid (0: the calling thread). 0: raised (put it back with
 * trace_boost_off); -errno: left as it was (b->on false; -EEXIST: it already
 * has a real-time or deadline policy). */
int trace_boost_on(struct trace_boost *b, pid_t tid);

/* Put the thread back as it was (nothing when b->on is false). */
void trace_boost_off(struct trace_boost *b);

#endif
