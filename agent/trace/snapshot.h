/* A copy-on-write snapshot of one stopped thread's process (x86_64): a
 * clone(CLONE_PARENT) system call injected into the thread, run from a
 * `syscall` instruction the process already has (its vDSO: nothing of the
 * program is written), with PTRACE_O_TRACECLONE so the child starts stopped
 * and attached to us and never runs a user instruction. CLONE_PARENT makes the
 * child a sibling of the program, not its child: the program cannot wait() for
 * it and gets no SIGCHLD; its parent, this agent (the snapshot is only taken
 * when the agent started the program), kills and reaps it. The thread's
 * registers are restored before it is let go. A replay then reads the child's
 * memory (process_vm_readv) while the program runs on.
 *
 * Refused (the caller replays in place, saying why) where the thread runs
 * 32-bit code, a seccomp filter could refuse or kill on clone, the agent is not
 * the program's parent (the child would stay a zombie of someone else), the
 * vDSO has no syscall instruction, or the clone fails. */
#ifndef AGENT_TRACE_SNAPSHOT_H
#define AGENT_TRACE_SNAPSHOT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Thread tid is in a ptrace stop (seized by us) and not inside a system call.
 * 0: *child is the snapshot, stopped and traced; *sig is a signal for tid that
 * arrived meanwhile (pass it on when detaching, 0: none). -errno with the
 * reason in why: no snapshot, tid is as it was (-ESRCH: tid exited). */
int trace_snapshot_take(pid_t tid, uint64_t deadline, pid_t *child, int *sig, char *why, size_t whylen);

/* Kill the snapshot and reap it. */
void trace_snapshot_drop(pid_t child);

#endif
