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

#if defined(__x86_64__)

/* "Key:\tvalue" of /proc/TID/status as a number; -1 when absent. */
static long status_field(pid_t tid, const char *key)
{
	char path[48], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

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

/* The next stop or end of pid, up to deadline. 0 with *status, -ETIMEDOUT, -errno. */
static int wait_for(pid_t pid, uint64_t deadline, int *status)
{
	for (unsigned spins = 0;; spins++) {
		pid_t r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (clock_mono_ns() >= deadline)
			return -ETIMEDOUT;
		if (spins < 1000) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

/* Why a snapshot of tid must not be taken ("" when it may), from what the thread's
 * registers do not tell (those: trace_snapshot_take). */
static void refusal(pid_t tid, char *why, size_t whylen)
{
	why[0] = '\0';
	long sc = status_field(tid, "Seccomp");
	if (sc != 0) {
		snprintf(why, whylen, "%s", sc < 0 ? "its seccomp mode is unknown" : "a seccomp filter could refuse or kill on clone");
		return;
	}
	char path[48], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	int ppid = 0;
	char st;
	if (!p || sscanf(p + 1, " %c %d", &st, &ppid) != 2 || ppid != (int)getpid())
		snprintf(why, whylen, "the agent did not start the program (its parent is %d): the snapshot would be left a zombie of that parent",
			 ppid);
}

int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	p->syscall_at = 0;
	refusal(tid, why, whylen);
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
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, NULL) < 0) {
			rc = -errno;
			snprintf(why, whylen, "PTRACE_SINGLESTEP: %s", strerror(-rc));
			break;
		}
		rc = wait_for(tid, deadline, &status);
		if (rc < 0) {
			snprintf(why, whylen, "the injected clone did not return: %s", strerror(-rc));
			if (rc == -ETIMEDOUT) { /* stop it again: registers can only be restored in a stop */
				ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
				wait_for(tid, clock_mono_ns() + 1000000000ull, &status);
			}
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			snprintf(why, whylen, "the thread exited");
			return -ESRCH;
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
	int rc = wait_for(child, clock_mono_ns() + 1000000000ull, &status);
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

void trace_snapshot_drop(pid_t child)
{
	if (child <= 0)
		return;
	kill(child, SIGKILL);
	for (int i = 0; i < 16; i++) {
		int status = 0;
		pid_t r = waitpid(child, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return;
	}
}

#else

int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	(void)tid;
	p->syscall_at = 0;
	snprintf(why, whylen, "snapshots are implemented for x86_64 threads only");
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
	snprintf(why, whylen, "snapshots are implemented for x86_64 threads only");
	return -ENOTSUP;
}

int trace_snapshot_ready(pid_t child, const struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	(void)child;
	(void)p;
	snprintf(why, whylen, "snapshots are implemented for x86_64 threads only");
	return -ENOTSUP;
}

void trace_snapshot_drop(pid_t child)
{
	(void)child;
}

#endif
#endif /* CONFIG_AGENT_TRACER && CONFIG_AGENT_TRACE_REPLAY */
