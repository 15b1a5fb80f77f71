/* Copy-on-write snapshots of a stopped thread's process (snapshot.h). */
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && defined(CONFIG_AGENT_TRACE_REPLAY)

#include "snapshot.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "snapshot_priv.h"

#if defined(__x86_64__)

/* Address of the bytes 0f 05 (syscall) in tid's [vdso], 0 when none. */
static uint64_t vdso_syscall(pid_t tid)
{
	char path[48], line[512];
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	unsigned long long lo = 0, hi = 0;
	bool found = false;
	while (!found && fgets(line, sizeof(line), f))
		found = strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &lo, &hi) == 2;
	fclose(f);
	if (!found || hi <= lo || hi - lo > (1u << 20))
		return 0;
	size_t len = (size_t)(hi - lo);
	uint8_t *buf = malloc(len);
	uint64_t at = 0;
	struct iovec l = {.iov_base = buf, .iov_len = len};
	struct iovec r = {.iov_base = (void *)(uintptr_t)lo, .iov_len = len};
	if (buf && process_vm_readv(tid, &l, 1, &r, 1, 0) == (ssize_t)len)
		for (size_t i = 0; i + 1 < len && !at; i++)
			if (buf[i] == 0x0f && buf[i + 1] == 0x05)
				at = lo + i;
	free(buf);
	return at;
}

int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	p->syscall_at = 0;
	trace_snapshot_refusal(tid, why, whylen);
	if (why[0])
		return -EPERM;
	p->syscall_at = vdso_syscall(tid);
	if (!p->syscall_at) {
		snprintf(why, whylen, "no syscall instruction found in its vDSO");
		return -ENOENT;
	}
	return 0;
}

int trace_snapshot_take(pid_t tid, const struct trace_snapshot_plan *p, uint64_t deadline, pid_t *child, int *sig,
			uint64_t *clone_ns, char *why, size_t whylen)
{
	*child = 0;
	*sig = 0;
	*clone_ns = 0;
	why[0] = '\0';
	struct user_regs_struct saved, g;
	if (ptrace(PTRACE_GETREGS, tid, NULL, &saved) < 0) {
		int e = errno;
		snprintf(why, whylen, "reading its registers: %s", strerror(e));
		return -e;
	}
	if (saved.cs != 0x33) {
		snprintf(why, whylen, "the thread runs 32-bit code (cs 0x%llx)", (unsigned long long)saved.cs);
		return -EPERM;
	}
	uint64_t t0 = clock_mono_ns();
	g = saved;
	g.rip = p->syscall_at;
	g.orig_rax = (unsigned long long)-1;
	g.rax = SYS_clone;
	/* exit signal 0 and CLONE_PARENT: the child gets the program's own exit signal
	 * (kernel/fork.c, copy_process()), which goes to its parent, us. CLONE_PTRACE: traced
	 * by us from birth, in a trap stop before any user instruction (ptrace_init_task():
	 * PT_SEIZED, JOBCTL_TRAP_STOP); no PTRACE_EVENT_CLONE stop of the thread on the way */
	g.rdi = CLONE_PARENT | CLONE_PTRACE;
	g.rsi = 0;	      /* the same stack, copied */
	g.rdx = g.r10 = g.r8 = 0;
	int rc = 0;
	long long ret = 0;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &g) < 0) {
		rc = -errno;
		snprintf(why, whylen, "PTRACE_SETREGS: %s", strerror(-rc));
		goto out;
	}
	/* step over the syscall: the next stop past it (the step's trap, or a signal's stop
	 * first) ends it; one still at the syscall (restarted for a signal) steps again */
	bool past = false;
	for (int i = 0; i < 8 && !past; i++) {
		int status = 0;
		int st = trace_snapshot_step(tid, PTRACE_SINGLESTEP, "PTRACE_SINGLESTEP", deadline, &status, why, whylen);
		if (st > 0) {
			*sig = status; /* its end, reaped here: the caller tells the target */
			*child = -1;   /* -ESRCH from here, not from a ptrace call on a thread gone (SIGKILL) */
			return -ESRCH;
		}
		if (st < 0) {
			rc = st;
			break;
		}
		if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
			*sig = WSTOPSIG(status); /* the program's: passed on at the detach */
		if (ptrace(PTRACE_GETREGS, tid, NULL, &g) < 0) {
			rc = -errno;
			snprintf(why, whylen, "reading its registers after the clone: %s", strerror(-rc));
			break;
		}
		if (g.rip != p->syscall_at) {
			past = true;
			ret = (long long)g.rax;
		}
	}
	if (rc == 0 && !past) {
		rc = -EIO;
		snprintf(why, whylen, "the injected clone did not complete");
	}
	if (rc == 0 && ret <= 0) {
		rc = ret < 0 ? (int)ret : -EIO;
		snprintf(why, whylen, "clone: %s", strerror(-rc));
	}
	if (rc == 0)
		*child = (pid_t)ret;
out:
	*clone_ns = clock_mono_ns() - t0;
	if (ptrace(PTRACE_SETREGS, tid, NULL, &saved) < 0 && rc == 0) {
		rc = -errno;
		snprintf(why, whylen, "restoring its registers: %s", strerror(-rc));
	}
	if (rc < 0 && *child > 0) {
		trace_snapshot_drop(*child);
		*child = 0;
	}
	return rc;
}

int trace_snapshot_ready(pid_t child, const struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	int status = 0;
	/* its first stop (a trap stop, from birth): it never ran an instruction, its
	 * registers are the clone's return (rax 0, just past the syscall) */
	int rc = trace_snapshot_wait(child, clock_mono_ns() + 1000000000ull, &status);
	if (rc == 0 && !WIFSTOPPED(status))
		rc = -ESRCH;
	if (rc < 0) {
		snprintf(why, whylen, "the snapshot did not stop: %s", strerror(-rc));
		trace_snapshot_drop(child);
		return rc;
	}
	struct user_regs_struct g;
	if (ptrace(PTRACE_GETREGS, child, NULL, &g) < 0 || g.rip != p->syscall_at + 2 || g.rax != 0) {
		snprintf(why, whylen, "the snapshot is not where its clone returned");
		trace_snapshot_drop(child);
		return -EIO;
	}
	/* killed with us should the agent die first: let go, it would run the program's code a
	 * second time (Linux 3.8+; 3.4 answers EINVAL and keeps that risk) */
	ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(long)PTRACE_O_EXITKILL);
	return 0;
}

#elif !defined(__aarch64__) && !defined(__arm__) /* those: snapshot_arm.c */

int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	(void)tid;
	p->syscall_at = 0;
	snprintf(why, whylen, "snapshots are implemented for x86_64, arm64 and 32-bit ARM threads only");
	return -ENOTSUP;
}

int trace_snapshot_take(pid_t tid, const struct trace_snapshot_plan *p, uint64_t deadline, pid_t *child, int *sig,
			uint64_t *clone_ns, char *why, size_t whylen)
{
	(void)tid;
	(void)p;
	(void)deadline;
	*child = 0;
	*sig = 0;
	*clone_ns = 0;
	snprintf(why, whylen, "snapshots are implemented for x86_64, arm64 and 32-bit ARM threads only");
	return -ENOTSUP;
}

int trace_snapshot_ready(pid_t child, const struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	(void)child;
	(void)p;
	snprintf(why, whylen, "snapshots are implemented for x86_64, arm64 and 32-bit ARM threads only");
	return -ENOTSUP;
}

#endif
#endif /* CONFIG_AGENT_TRACER && CONFIG_AGENT_TRACE_REPLAY */
