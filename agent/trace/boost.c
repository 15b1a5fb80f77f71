/* CPU priority for a snapshot's stop (boost.h). Raw system calls: musl's
 * sched_setscheduler() answers ENOSYS by design. */
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && defined(CONFIG_AGENT_TRACE_REPLAY)

#include "boost.h"

#include <errno.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SCHED_RESET_ON_FORK
#define SCHED_RESET_ON_FORK 0x40000000
#endif
#ifndef SCHED_BATCH
#define SCHED_BATCH 3
#endif
#ifndef SCHED_IDLE
#define SCHED_IDLE 5
#endif

int trace_boost_on(struct trace_boost *b, pid_t tid)
{
	b->on = false;
	b->tid = tid;
	long pol = syscall(SYS_sched_getscheduler, tid);
	struct sched_param p = {0};
	if (pol < 0 || syscall(SYS_sched_getparam, tid, &p) < 0)
		return -errno;
	int base = (int)pol & ~SCHED_RESET_ON_FORK;
	if (base != SCHED_OTHER && base != SCHED_BATCH && base != SCHED_IDLE)
		return -EEXIST;
	b->policy = (int)pol;
	b->prio = p.sched_priority;
	struct sched_param fifo = {.sched_priority = 1};
	if (syscall(SYS_sched_setscheduler, tid, SCHED_FIFO | SCHED_RESET_ON_FORK, &fifo) < 0)
		return -errno;
	b->on = true;
	return 0;
}

void trace_boost_off(struct trace_boost *b)
{
	if (!b->on)
		return;
	struct sched_param p = {.sched_priority = b->prio};
	syscall(SYS_sched_setscheduler, b->tid, b->policy, &p);
	b->on = false;
}

#endif /* CONFIG_AGENT_TRACER && CONFIG_AGENT_TRACE_REPLAY */
