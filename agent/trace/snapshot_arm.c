/* Copy-on-write snapshots on arm64 and 32-bit ARM (snapshot.h): the x86_64 clone of
 * snapshot.c, injected from an `svc #0` and stepped over with PTRACE_SYSCALL. */
#ifndef _FILE_OFFSET_BITS /* pread at addresses above 2 GiB (32-bit ARM, glibc) */
#define _FILE_OFFSET_BITS 64
#endif
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && (defined(__aarch64__) || defined(__arm__))

#include "snapshot.h"
#include "snapshot_priv.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
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
#include <unistd.h>

#include "net.h"

#ifndef NT_ARM_SYSTEM_CALL
#define NT_ARM_SYSTEM_CALL 0x404
#endif
#define SCAN_MAX (64u << 20) /* bytes of executable mappings searched for an svc, at most */

#if defined(__aarch64__)
typedef struct user_regs_struct snap_regs;
#define REG_PC(r) ((r).pc)
#define REG_RET(r) ((r).regs[0])
static int get_regs(pid_t tid, snap_regs *r)
{
	struct iovec v = {.iov_base = r, .iov_len = sizeof(*r)};
	return ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_PRSTATUS, &v) < 0 ? -errno : 0;
}
static int set_regs(pid_t tid, snap_regs *r)
{
	struct iovec v = {.iov_base = r, .iov_len = sizeof(*r)};
	return ptrace(PTRACE_SETREGSET, tid, (void *)(long)NT_PRSTATUS, &v) < 0 ? -errno : 0;
}
#else
/* r0-r15, cpsr, orig_r0 (arch/arm/include/uapi/asm/ptrace.h); GETREGS: Linux 3.4 has it */
typedef struct user_regs snap_regs;
#define REG_PC(r) ((r).uregs[15])
#define REG_RET(r) ((r).uregs[0])
#define CPSR_T 0x20ul
#define CPSR_IT 0x0600fc00ul /* IT[1:0] bits 26:25, IT[7:2] bits 15:10 */
static int get_regs(pid_t tid, snap_regs *r)
{
	return ptrace(PTRACE_GETREGS, tid, NULL, r) < 0 ? -errno : 0;
}
static int set_regs(pid_t tid, snap_regs *r)
{
	return ptrace(PTRACE_SETREGS, tid, NULL, r) < 0 ? -errno : 0;
}
#endif

/* The first `svc #0` in the part [lo, hi) of tid's memory read through fd: an aligned
 * word (arm64 d4000001, ARM ef000000) or, 32-bit ARM, a Thumb halfword df00 (used only
 * where no ARM word is found: *thumb_at keeps the first). What surrounds it does not
 * matter: the thread runs that one instruction in the instruction set it is chosen for. */
static uint64_t scan(int fd, uint64_t lo, uint64_t hi, uint64_t *thumb_at, size_t *budget)
{
	uint8_t buf[16384];
	for (uint64_t a = lo; a < hi && *budget > 0;) {
		size_t n = hi - a < sizeof(buf) ? (size_t)(hi - a) : sizeof(buf);
		ssize_t got = pread(fd, buf, n, (off_t)a);
		if (got < 4)
			return 0;
		*budget = *budget > (size_t)got ? *budget - (size_t)got : 0;
		for (size_t i = 0; i + 3 < (size_t)got; i += 2) {
			uint32_t w = (uint32_t)buf[i] | (uint32_t)buf[i + 1] << 8 | (uint32_t)buf[i + 2] << 16 |
				     (uint32_t)buf[i + 3] << 24;
#if defined(__aarch64__)
			(void)thumb_at;
			if (i % 4 == 0 && w == 0xd4000001u)
				return a + i;
#else
			if (i % 4 == 0 && w == 0xef000000u)
				return a + i;
			if (!*thumb_at && (w & 0xffffu) == 0xdf00u)
				*thumb_at = a + i;
#endif
		}
		a += (uint64_t)got & ~3ull;
	}
	return 0;
}

/* An svc #0 in tid's executable mappings, the vDSO's first: 0 when none. */
static uint64_t find_svc(pid_t tid, bool *thumb)
{
	char path[48], line[512];
	*thumb = false;
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)tid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	snprintf(path, sizeof(path), "/proc/%d/maps", (int)tid);
	FILE *f = fd < 0 ? NULL : fopen(path, "re");
	uint64_t at = 0, thumb_at = 0;
	size_t budget = SCAN_MAX;
	for (int pass = 0; f && pass < 2 && !at; pass++) {
		rewind(f);
		while (!at && fgets(line, sizeof(line), f)) {
			unsigned long long lo = 0, hi = 0;
			char perm[8] = "";
			if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3 || perm[2] != 'x' || hi <= lo)
				continue;
			if ((strstr(line, "[vdso]") != NULL) == (pass == 0))
				at = scan(fd, lo, hi, &thumb_at, &budget);
		}
	}
	if (f)
		fclose(f);
	if (fd >= 0)
		close(fd);
	if (!at && thumb_at) {
		at = thumb_at;
		*thumb = true;
	}
	return at;
}

int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	p->syscall_at = 0;
	p->thumb = false;
	trace_snapshot_refusal(tid, why, whylen);
	if (why[0])
		return -EPERM;
	p->syscall_at = find_svc(tid, &p->thumb);
	if (!p->syscall_at) {
		snprintf(why, whylen, "no svc #0 instruction found in its executable mappings");
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
	snap_regs saved, g;
	int rc = get_regs(tid, &saved);
	if (rc < 0) {
		snprintf(why, whylen, "reading its registers: %s", strerror(-rc));
		return rc;
	}
	g = saved;
#if defined(__aarch64__)
	if (saved.pstate & 0x10) { /* PSR_MODE32_BIT */
		snprintf(why, whylen, "the thread runs 32-bit code (pstate 0x%llx)", (unsigned long long)saved.pstate);
		return -EPERM;
	}
	g.regs[8] = SYS_clone;
	for (int i = 0; i < 6; i++)
		g.regs[i] = 0;
	g.regs[0] = CLONE_PARENT | CLONE_PTRACE;
#else
	g.uregs[16] &= ~(CPSR_T | CPSR_IT);
	if (p->thumb)
		g.uregs[16] |= CPSR_T;
	g.uregs[7] = SYS_clone; /* EABI: the number in r7 (svc #0) */
	for (int i = 0; i < 5; i++)
		g.uregs[i] = 0;
	g.uregs[0] = CLONE_PARENT | CLONE_PTRACE; /* as on x86_64 (snapshot.c) */
#endif
	REG_PC(g) = p->syscall_at;
	uint64_t t0 = clock_mono_ns();
	long long ret = 0;
	int stops = 0;
	rc = set_regs(tid, &g);
	if (rc < 0) {
		snprintf(why, whylen, "setting its registers: %s", strerror(-rc));
		goto out;
	}
	/* the system call's entry stop, then its exit stop (SIGTRAP, no TRACESYSGOOD: the
	 * agent's options are left as they are); a signal's stop on the way is the program's,
	 * passed on at the detach; a stop at the svc itself (a signal before it ran) goes on */
	for (int i = 0; i < 8 && stops < 2; i++) {
		int status = 0;
		int st = trace_snapshot_step(tid, PTRACE_SYSCALL, "PTRACE_SYSCALL", deadline, &status, why, whylen);
		if (st > 0) {
			*sig = status; /* its end, reaped here: the caller tells the target */
			*child = -1;   /* -ESRCH from here, not from a ptrace call on a thread gone (SIGKILL) */
			return -ESRCH;
		}
		if (st < 0) {
			rc = st;
			break;
		}
		if ((status >> 16) != 0)
			continue; /* an event or group stop */
		if ((WSTOPSIG(status) & 0x7f) != SIGTRAP) {
			*sig = WSTOPSIG(status);
			continue;
		}
		stops++;
		if (stops == 2) {
			rc = get_regs(tid, &g);
			if (rc < 0)
				snprintf(why, whylen, "reading its registers after the clone: %s", strerror(-rc));
			ret = (long long)(long)REG_RET(g); /* sign-extended from 32 bits on ARM */
		}
	}
	if (rc == 0 && stops < 2) {
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
#if defined(__aarch64__)
	if (stops == 2) { /* at the clone's exit stop: forget the system call, or a restored x0 that
			   * reads as a restart code would rewind pc on the way out (arch/arm64/kernel/
			   * signal.c do_signal(); Linux 3.19+, older answer EINVAL and keep that edge) */
		int nr = -1;
		struct iovec v = {.iov_base = &nr, .iov_len = sizeof(nr)};
		ptrace(PTRACE_SETREGSET, tid, (void *)(long)NT_ARM_SYSTEM_CALL, &v);
	}
#endif
	int rr = set_regs(tid, &saved);
	if (rr < 0 && rc == 0) {
		rc = rr;
		snprintf(why, whylen, "restoring its registers: %s", strerror(-rc));
	}
	if (rc < 0 && *child > 0) {
		trace_snapshot_drop(*child);
		*child = 0;
	}
	return rc;
}

int trace_snapshot_regs(pid_t tid, uint64_t *regs, size_t cap, size_t *n, uint32_t *arch)
{
	snap_regs g;
	*n = 0;
	int rc = get_regs(tid, &g);
	if (rc < 0)
		return rc;
#if defined(__aarch64__)
	if (cap < 34)
		return -ENOSPC;
	for (int i = 0; i < 31; i++)
		regs[i] = g.regs[i];
	regs[31] = g.sp;
	regs[32] = g.pc;
	regs[33] = g.pstate;
	*n = 34;
	*arch = 2;
#else
	if (cap < 17)
		return -ENOSPC;
	for (int i = 0; i < 17; i++)
		regs[i] = (uint32_t)g.uregs[i];
	*n = 17;
	*arch = 3;
#endif
	return 0;
}

int trace_snapshot_tls(pid_t tid, uint64_t *tls)
{
	*tls = 0;
#if defined(__aarch64__)
	uint64_t v = 0; /* tpidr_el0 (arch/arm64/kernel/ptrace.c tls_get) */
	struct iovec io = {.iov_base = &v, .iov_len = sizeof(v)};
	if (ptrace(PTRACE_GETREGSET, tid, (void *)(long)NT_ARM_TLS, &io) < 0)
		return -errno;
#else
	unsigned long v = 0; /* TPIDRURO: PTRACE_GET_THREAD_AREA (22, arch/arm/kernel/ptrace.c; 3.4 has it;
			      * glibc names it in an enum, musl not at all) */
	if (ptrace(22, tid, NULL, &v) < 0)
		return -errno;
#endif
	*tls = v;
	return 0;
}

int trace_snapshot_ready(pid_t child, const struct trace_snapshot_plan *p, char *why, size_t whylen)
{
	int status = 0;
	int rc = trace_snapshot_wait(child, clock_mono_ns() + 1000000000ull, &status);
	if (rc == 0 && !WIFSTOPPED(status))
		rc = -ESRCH;
	if (rc < 0) {
		snprintf(why, whylen, "the snapshot did not stop: %s", strerror(-rc));
		trace_snapshot_drop(child);
		return rc;
	}
	/* born in a trap stop (CLONE_PTRACE, seized like the thread): it never ran, its
	 * registers are the clone's return, 0 just past the svc */
	snap_regs g;
	uint64_t past = p->syscall_at + (p->thumb ? 2 : 4);
	if (get_regs(child, &g) < 0 || (uint64_t)REG_PC(g) != past || REG_RET(g) != 0) {
		snprintf(why, whylen, "the snapshot is not where its clone returned");
		trace_snapshot_drop(child);
		return -EIO;
	}
	ptrace(PTRACE_SETOPTIONS, child, NULL, (void *)(long)PTRACE_O_EXITKILL); /* 3.8+, see snapshot.c */
	return 0;
}

#endif
