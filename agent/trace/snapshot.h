/* A copy-on-write snapshot of one stopped thread's process (x86_64): a
 * clone(CLONE_PARENT) system call injected into the thread, run from a
 * `syscall` instruction the process already has (its vDSO: nothing of the
 * program is written), with CLONE_PTRACE: the thread is traced by us, so the
 * child is too (seized like it: it starts in a trap stop, kernel/ptrace.c
 * ptrace_init_task()) and never runs a user instruction; no clone event stop,
 * so the thread stops once more only, after the system call. CLONE_PARENT makes the
 * child a sibling of the program, not its child: the program cannot wait() for
 * it and gets no SIGCHLD; its parent, this agent (the snapshot is only taken
 * when the agent started the program), kills and reaps it. The thread's
 * registers are restored before it is let go. Everything else is done before
 * the stop (trace_snapshot_plan) or after it (trace_snapshot_ready): the stop
 * is the attach, the clone (the page tables' copy) and two register writes. A
 * replay then reads the child's memory and maps while the program runs on.
 *
 * Refused (the caller replays in place, saying why) where the thread runs
 * 32-bit code, a seccomp filter could refuse or kill on clone, the agent is not
 * the program's parent (the child would stay a zombie of someone else), the
 * vDSO has no syscall instruction, or the clone fails.
 *
 * arm64 and 32-bit ARM (snapshot_arm.c, for the boards, whose agent has no
 * emulator): the same clone, from an `svc #0` (arm64: in the vDSO; 32-bit ARM,
 * whose kernels before 4.1 have no vDSO: any `svc #0` word, or Thumb halfword,
 * in the process's executable mappings, run in that instruction set), stepped
 * over with PTRACE_SYSCALL (its entry and exit stops: 32-bit ARM kernels have
 * no PTRACE_SINGLESTEP); registers through PTRACE_GETREGSET (arm64) or
 * PTRACE_GETREGS (32-bit ARM, as Linux 3.4 has it). */
#ifndef AGENT_TRACE_SNAPSHOT_H
#define AGENT_TRACE_SNAPSHOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* What a snapshot of tid needs, found before the thread is stopped (none of it
 * is stop time): where the vDSO's syscall instruction is, and whether a
 * snapshot may be taken (seccomp, the agent the program's parent). */
struct trace_snapshot_plan {
	uint64_t syscall_at;
	bool thumb; /* 32-bit ARM: the svc at syscall_at is Thumb's (2 bytes), else ARM's (4) */
};

/* Thread tid is running (or stopped). 0 with *p filled; -errno with the
 * reason in why: no snapshot (replay in place). A seccomp filter installed
 * between this and the stop is not seen (a filter that kills on clone would
 * then kill the program; the window before a program's sandbox is set up). */
int trace_snapshot_plan(pid_t tid, struct trace_snapshot_plan *p, char *why, size_t whylen);

/* Thread tid is in a ptrace stop (seized by us) and not inside a system call.
 * 0: *child is the snapshot (traced by us; call trace_snapshot_ready once tid
 * has been let go); *sig is a signal for tid that arrived meanwhile (pass it on
 * when detaching, 0: none); *clone_ns what the injected clone took. -errno with the reason in why: no snapshot, tid is
 * as it was (-ESRCH with *child -1: tid exited, its end reaped here: *sig is then its wait status;
 * -ESRCH with *child 0: a ptrace call found tid gone, not reaped). */
int trace_snapshot_take(pid_t tid, const struct trace_snapshot_plan *p, uint64_t deadline, pid_t *child, int *sig,
			uint64_t *clone_ns, char *why, size_t whylen);

/* After the thread went on: the snapshot's first stop (it never ran an
 * instruction: its registers are checked to be where the clone returned), and
 * killed with the agent. 0; -errno with the reason in why and
 * the snapshot dropped. */
int trace_snapshot_ready(pid_t child, const struct trace_snapshot_plan *p, char *why, size_t whylen);

#if defined(__aarch64__) || defined(__arm__)
/* Thread tid (in a ptrace stop) registers in the wire's order (proto/snapshot.proto
 * TraceSnapshot.regs): arm64 x0..x30, sp, pc, pstate (34, *arch 2); 32-bit ARM r0..r15,
 * cpsr (17, *arch 3). 0 with *n; -errno. */
int trace_snapshot_regs(pid_t tid, uint64_t *regs, size_t cap, size_t *n, uint32_t *arch);
/* Its thread pointer (TraceSnapshot.tls): arm64 tpidr_el0, 32-bit ARM TPIDRURO. 0; -errno. */
int trace_snapshot_tls(pid_t tid, uint64_t *tls);
#endif

/* Kill the snapshot and reap it. */
void trace_snapshot_drop(pid_t child);

#endif
