#include "generated/config.h"
#ifdef CONFIG_AGENT_TRACER

#include "window.h"

#include <elf.h>
#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#if defined(__aarch64__)
#include <asm/ptrace.h> /* struct user_pt_regs */
#endif

#include "net.h"

struct regs {
#if defined(__x86_64__)
	struct user_regs_struct r;
#elif defined(__aarch64__)
	struct user_pt_regs r;
#elif defined(__arm__)
	struct user_regs r;
#endif
};

enum trace_arch trace_native_arch(void)
{
#if defined(__x86_64__)
	return TRACE_ARCH_X86_64;
#elif defined(__aarch64__)
	return TRACE_ARCH_AARCH64;
#elif defined(__arm__)
	return TRACE_ARCH_ARM;
#else
	return 0;
#endif
}

static int get_regs(pid_t tid, struct regs *r)
{
#if defined(__aarch64__)
	struct iovec iov = {.iov_base = &r->r, .iov_len = sizeof(r->r)};
	return ptrace(PTRACE_GETREGSET, tid, (void *)NT_PRSTATUS, &iov) < 0 ? -errno : 0;
#elif defined(__x86_64__) || defined(__arm__)
	return ptrace(PTRACE_GETREGS, tid, NULL, &r->r) < 0 ? -errno : 0;
#else
	(void)tid;
	(void)r;
	return -ENOTSUP;
#endif
}

static uint64_t reg_pc(const struct regs *r)
{
#if defined(__x86_64__)
	return r->r.rip;
#elif defined(__aarch64__)
	return r->r.pc;
#elif defined(__arm__)
	return (uint32_t)r->r.uregs[15];
#else
	(void)r;
	return 0;
#endif
}

/* Register number (decode.h) → value. */
static uint64_t reg_value(void *ctx, uint8_t reg)
{
	const struct regs *r = ctx;
#if defined(__x86_64__)
	const unsigned long long v[16] = {r->r.rax, r->r.rcx, r->r.rdx, r->r.rbx, r->r.rsp, r->r.rbp,
					  r->r.rsi, r->r.rdi, r->r.r8,  r->r.r9,  r->r.r10, r->r.r11,
					  r->r.r12, r->r.r13, r->r.r14, r->r.r15};
	if (reg >= 1 && reg <= 16)
		return v[reg - 1];
	if (reg == 144)
		return r->r.fs_base;
	if (reg == 145)
		return r->r.gs_base;
	return 0;
#elif defined(__aarch64__)
	if (reg >= 1 && reg <= 31)
		return r->r.regs[reg - 1];
	if (reg == 32)
		return r->r.sp;
	return 0;
#elif defined(__arm__)
	return reg >= 1 && reg <= 16 ? (uint32_t)r->r.uregs[reg - 1] : 0;
#else
	(void)r;
	(void)reg;
	return 0;
#endif
}

/* Wait for the next stop of tid, up to deadline. 0 with *status, -ETIMEDOUT, -errno. */
static int wait_stop(pid_t tid, uint64_t deadline, int *status)
{
	for (unsigned spins = 0;; spins++) {
		pid_t r = waitpid(tid, status, __WALL | WNOHANG);
		if (r == tid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (clock_mono_ns() >= deadline)
			return -ETIMEDOUT;
		if (spins < 2000) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

/* State letter of thread tid (R running or runnable, S/D sleeping in the kernel, t traced
 * stop, ...; /proc/TID/stat, after the name's closing parenthesis), 0 when it is gone. */
static char task_state(pid_t tid)
{
	char path[48], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	return p && p[1] == ' ' ? p[2] : 0;
}

/* How long a single step still runnable at the stop-time limit may take to finish: under
 * an emulator (QEMU TCG, one vCPU shared with the tracer) one step can take milliseconds. */
#define STEP_GRACE_NS 50000000ull

/* SIGTRAP among tid's own pending signals (/proc/TID/status, SigPnd: a hex mask, bit
 * SIGTRAP - 1). */
static bool trap_pending(pid_t tid)
{
	char path[48], line[128];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return false;
	bool pending = false;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "SigPnd:", 7) == 0) {
			pending = (strtoull(line + 7, NULL, 16) >> (SIGTRAP - 1)) & 1;
			break;
		}
	}
	fclose(f);
	return pending;
}

/* A SIGTRAP the kernel raised for our single step (not the program's own int3/brk or
 * kill): x86 sends TRAP_BRKPT/TRAP_TRACE; the generic user_single_step_report()
 * (include/linux/ptrace.h, arm64 and arm) sends SI_USER with si_pid 0. */
static bool trap_is_ours(pid_t tid)
{
	siginfo_t si;
	if (ptrace(PTRACE_GETSIGINFO, tid, NULL, &si) < 0)
		return true;
	return si.si_code == TRAP_BRKPT || si.si_code == TRAP_TRACE || (si.si_code == SI_USER && si.si_pid == 0);
}

/* Let go of tid, which is in a ptrace stop, passing sig on. When a single step was
 * outstanding (its trap not seen: the stepped instruction was a system call that blocked,
 * or the thread was slow, and our PTRACE_INTERRUPT stopped it first), the step's SIGTRAP
 * may already be queued to the thread: kernel/entry/syscall-common.c, syscall_exit_work()
 * -> ptrace_report_syscall_exit(regs, step) -> user_single_step_report() queues it on the
 * way out of the system call, and get_signal() (kernel/signal.c) reports the pending
 * jobctl trap (our interrupt) before it dequeues signals. Detached with that SIGTRAP
 * pending, the thread takes it untraced and its default action kills the program with a
 * core dump (seen: 5 of 10 `agent profile` runs of cl_matmul). So take it while still
 * attached: resume the thread, which dequeues the pending SIGTRAP before running any
 * instruction and reports it as a signal-delivery stop, and detach suppressing it.
 * Returns 0, or 1 when the thread exited meanwhile (*status its wait status). */
static int detach_clean(pid_t tid, int sig, bool step_outstanding, int *status)
{
	for (int i = 0; step_outstanding && i < 4 && trap_pending(tid); i++) {
		if (ptrace(PTRACE_CONT, tid, NULL, (void *)(long)sig) < 0)
			break;
		sig = 0;
		if (wait_stop(tid, clock_mono_ns() + 1000000000ull, status) < 0)
			break; /* did not stop within 1 s: let it go as it is */
		if (WIFEXITED(*status) || WIFSIGNALED(*status))
			return 1;
		if (WIFSTOPPED(*status) && (*status >> 16) == 0) {
			int s = WSTOPSIG(*status);
			if (s == SIGTRAP && trap_is_ours(tid))
				break; /* consumed: detach with no signal */
			sig = s; /* the program's own signal came first: pass it on */
		}
	}
	ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
	return 0;
}

int trace_seize(pid_t tid, uint64_t deadline, struct trace_window *w, int *sig, char *err, size_t errlen)
{
	*sig = 0;
	if (ptrace(PTRACE_SEIZE, tid, NULL, NULL) < 0) {
		int e = errno;
		snprintf(err, errlen, "ptrace(SEIZE) thread %d: %s%s", (int)tid, strerror(e),
			 e == EPERM ? " (run as root, or lower /proc/sys/kernel/yama/ptrace_scope)" : "");
		return -e;
	}
	int status = 0;
	ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
	int rc = wait_stop(tid, deadline + 1000000000ull, &status);
	if (rc < 0) {
		snprintf(err, errlen, "thread %d did not stop for tracing: %s", (int)tid, strerror(-rc));
		ptrace(PTRACE_DETACH, tid, NULL, NULL);
		return rc;
	}
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		w->end = TRACE_END_EXITED;
		w->exit_status = status;
		w->reaped = true;
		w->stop_ns = clock_mono_ns() - w->start_ns;
		return 1;
	}
	if (WIFSTOPPED(status) && (status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP) {
		*sig = WSTOPSIG(status); /* a signal arrived before our interrupt: pass it on */
		w->signals_redelivered++;
	}
	return 0;
}

static int record_step(struct trace_decoder *d, pid_t tid, const struct regs *r, struct trace_window *w)
{
	uint64_t pc = reg_pc(r);
	uint8_t code[16];
	struct iovec local = {.iov_base = code, .iov_len = sizeof(code)};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)pc, .iov_len = sizeof(code)};
	ssize_t got = process_vm_readv(tid, &local, 1, &remote, 1, 0);
	if (got <= 0) {
		/* The last bytes of a mapping: read what is there, word by word. */
		got = 0;
		for (size_t off = 0; off < sizeof(code); off += sizeof(long)) {
			errno = 0;
			long word = ptrace(PTRACE_PEEKTEXT, tid, (void *)(uintptr_t)(pc + off), NULL);
			if (errno)
				break;
			memcpy(code + off, &word, sizeof(word) < sizeof(code) - off ? sizeof(word) : sizeof(code) - off);
			got = (ssize_t)(off + sizeof(long));
		}
	}
	struct trace_rec *rec = &w->rec[w->n];
	memset(rec, 0, sizeof(*rec));
	rec->pc = pc;
	const struct trace_decoded *ins;
	if (got <= 0 || trace_decode(d, pc, code, (size_t)got, &ins) < 0) {
		w->undecodable++;
		w->n++;
		return 0;
	}
	rec->iclass = ins->iclass;
	rec->nread = ins->nread;
	rec->nwrite = ins->nwrite;
	memcpy(rec->read, ins->read, sizeof(ins->read));
	memcpy(rec->written, ins->written, sizeof(ins->written));
	rec->nmem = ins->nmem;
	for (uint8_t i = 0; i < ins->nmem; i++) {
		rec->addr[i] = trace_memop_address(ins, &ins->mem[i], reg_value, (void *)r);
		rec->size[i] = ins->mem[i].size;
		rec->rw[i] = (uint8_t)((ins->mem[i].read ? 1 : 0) | (ins->mem[i].write ? 2 : 0));
	}
	w->n++;
	return 0;
}

int trace_window_capture(struct trace_decoder *d, pid_t tid, size_t n, uint64_t max_ns, struct trace_window *w,
			 char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->tid = tid;
	if (n == 0 || n > TRACE_WINDOW_MAX) {
		snprintf(err, errlen, "window of %zu instructions (allowed 1..%u)", n, TRACE_WINDOW_MAX);
		return -EINVAL;
	}
	w->rec = malloc(n * sizeof(*w->rec));
	if (!w->rec) {
		snprintf(err, errlen, "out of memory for a %zu-instruction window", n);
		return -ENOMEM;
	}
	w->cap = n;
	w->capture = TRACE_CAPTURE_STEP;
	w->start_ns = clock_mono_ns();
	uint64_t deadline = w->start_ns + max_ns;
	int status = 0, rc = 0, sig = 0;
	rc = trace_seize(tid, deadline, w, &sig, err, errlen);
	if (rc != 0) {
		if (rc < 0)
			trace_window_free(w);
		return rc < 0 ? rc : 0;
	}
	w->end = TRACE_END_COMPLETE;
	bool stepping = false; /* a PTRACE_SINGLESTEP whose stop we have not seen */
	uint64_t steps_from = clock_mono_ns();
	while (w->n < n) {
		if (w->n > 0 && clock_mono_ns() >= deadline) {
			w->end = TRACE_END_TIME; /* the stop time the caller allowed is spent */
			break;
		}
		struct regs r;
		rc = get_regs(tid, &r);
		if (rc < 0) {
			w->end = rc == -ESRCH ? TRACE_END_EXITED : TRACE_END_ERROR;
			break;
		}
		record_step(d, tid, &r, w);
		if (ptrace(PTRACE_SINGLESTEP, tid, NULL, (void *)(long)sig) < 0) {
			int e = errno;
			if (e == EIO && w->n == 1) {
				/* kernel/ptrace.c, ptrace_resume(): PTRACE_SINGLESTEP answers EIO where
				 * arch_has_single_step() is false: 32-bit ARM Linux (no
				 * user_enable_single_step() in arch/arm since 3.x; 3.4 included) */
				ptrace(PTRACE_DETACH, tid, NULL, (void *)(long)sig);
				snprintf(err, errlen,
					 "this kernel cannot single-step (PTRACE_SINGLESTEP: %s%s): no single-stepped "
					 "trace windows here",
					 strerror(e),
					 trace_native_arch() == TRACE_ARCH_ARM ? "; 32-bit ARM Linux has no hardware "
										  "single step for ptrace; the default capture takes "
										  "snapshots the collector replays"
									    : "");
				trace_window_free(w);
				return -ENOTSUP;
			}
			w->end = e == ESRCH ? TRACE_END_EXITED : TRACE_END_ERROR;
			break;
		}
		sig = 0;
		stepping = true;
		rc = wait_stop(tid, deadline, &status);
		char st = rc == -ETIMEDOUT ? task_state(tid) : 0;
		if (rc == -ETIMEDOUT && st != 'S' && st != 'D' && st != 0) {
			/* Out of time with the step not asleep in a system call: still runnable (R: a
			 * slow step, an emulator or a loaded machine) or just stopped after it (t: its
			 * trap not yet collected). Let it finish; the window ends at the stop-time
			 * limit, not as a blocked thread. */
			rc = wait_stop(tid, clock_mono_ns() + STEP_GRACE_NS, &status);
			if (rc == 0 && WIFSTOPPED(status) && (status >> 16) == 0 && WSTOPSIG(status) == SIGTRAP) {
				stepping = false;
				w->end = TRACE_END_TIME;
				break;
			}
		}
		if (rc == -ETIMEDOUT) {
			/* Blocked (a system call that waits): stop it where it is and let go. */
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			status = 0;
			bool stopped = wait_stop(tid, clock_mono_ns() + 1000000000ull, &status) == 0;
			if (stopped && (WIFEXITED(status) || WIFSIGNALED(status))) {
				w->end = TRACE_END_EXITED; /* it exited instead of stopping */
				w->exit_status = status;
				w->reaped = true;
				w->stop_ns = clock_mono_ns() - w->start_ns;
				return 0;
			}
			if (stopped && WIFSTOPPED(status) && (status >> 16) == 0) {
				if (WSTOPSIG(status) == SIGTRAP)
					stepping = false; /* the step ended after all: its trap */
				else
					sig = WSTOPSIG(status); /* the program's signal: pass it on */
			}
			w->end = TRACE_END_BLOCKED;
			break;
		}
		if (rc < 0) {
			w->end = TRACE_END_ERROR;
			break;
		}
		if (WIFEXITED(status) || WIFSIGNALED(status)) {
			w->end = TRACE_END_EXITED;
			w->exit_status = status;
			w->reaped = true;
			w->stop_ns = clock_mono_ns() - w->start_ns;
			return 0; /* nothing to detach from */
		}
		if (WIFSTOPPED(status) && (status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP) {
			sig = WSTOPSIG(status); /* a signal for the tracee: deliver it with the next step */
			w->signals_redelivered++;
			w->n--; /* this stop did not execute an instruction: trace it again */
		} else if (WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP) {
			w->n--; /* group-stop or interrupt: nothing executed */
		} else {
			stepping = false; /* the step's own trap */
		}
	}
	w->steps_ns = clock_mono_ns() - steps_from;
	if (w->end != TRACE_END_EXITED && detach_clean(tid, sig, stepping, &status) == 1) {
		w->end = TRACE_END_EXITED;
		w->exit_status = status;
		w->reaped = true;
	}
	w->stop_ns = clock_mono_ns() - w->start_ns;
	return 0;
}

void trace_window_free(struct trace_window *w)
{
	if (!w->rec_borrowed)
		free(w->rec);
	free(w->warm_lines);
	w->rec = NULL;
	w->warm_lines = NULL;
	w->n = w->cap = w->nwarm = 0;
}

const char *trace_end_name(enum trace_end e)
{
	switch (e) {
	case TRACE_END_COMPLETE: return "complete";
	case TRACE_END_EXITED: return "thread exited";
	case TRACE_END_BLOCKED: return "thread blocked";
	case TRACE_END_SYSCALL: return "system call";
	case TRACE_END_UNSUPPORTED: return "instruction the emulator lacks";
	case TRACE_END_FAULT: return "unreadable memory";
	case TRACE_END_TIME: return "stop-time limit";
	case TRACE_END_IN_SYSCALL: return "stopped in a system call";
	case TRACE_END_ERROR: break;
	}
	return "error";
}

#endif /* CONFIG_AGENT_TRACER */
