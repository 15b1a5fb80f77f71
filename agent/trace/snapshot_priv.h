/* Shared by the snapshot's architectures (snapshot.c: x86_64, snapshot_arm.c: arm64 and
 * 32-bit ARM); their common part is snapshot_common.c. */
#ifndef AGENT_TRACE_SNAPSHOT_PRIV_H
#define AGENT_TRACE_SNAPSHOT_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The next stop or end of pid, up to deadline. 0 with *status, -ETIMEDOUT, -errno. */
int trace_snapshot_wait(pid_t pid, uint64_t deadline, int *status);

/* Resume the stopped tid with ptrace request req (named reqname in why) and wait for its next
 * stop up to deadline: 0 with *status, 1 when the thread ended, -errno (why set; on a timeout the
 * thread is stopped again so its registers can be restored). */
int trace_snapshot_step(pid_t tid, int req, const char *reqname, uint64_t deadline, int *status,
			char *why, size_t whylen);

/* Why a snapshot of tid must not be taken ("" when it may), from what the thread's
 * registers do not tell: a seccomp filter, the agent not the program's parent. */
void trace_snapshot_refusal(pid_t tid, char *why, size_t whylen);

/* Whether a kernel of this release (uname -r) can hold seccomp filters: mode 2 came in 3.5
 * (kernel/seccomp.c, "seccomp: add system call filtering using BPF"), /proc/PID/status's
 * "Seccomp:" line in 3.8. A thread without that line on an older kernel (the Arndale's 3.4)
 * has none, so the snapshot may be taken there; strict mode (1), which 3.4 has and would
 * kill the clone, cannot be told from outside on those kernels (and is all but unused).
 * An unreadable release: true. */
bool trace_snapshot_release_has_filters(const char *release);

#endif
