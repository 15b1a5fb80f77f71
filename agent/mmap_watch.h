/* Executable mappings of the sampled processes as they happen: a
 * PERF_COUNT_SW_DUMMY event per CPU with mmap2 (mmap on kernels before 3.16)
 * on the sampler's target, whose ring carries the kernel's MMAP2/MMAP
 * records, COMM records (task names at exec and renames) and FORK/EXIT
 * records (names inherited at fork; processes that exited are evicted), each ending with its
 * time (sample_id_all) so that the CPUs' rings are read merged in time order, as perf reads
 * them. So a program that exits before the agent reads /proc/PID/maps
 * (lazily, at the first sample of an unknown address) is still symbolized.
 * Used by the sampler for both back ends. */
#ifndef AGENT_MMAP_WATCH_H
#define AGENT_MMAP_WATCH_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "perf.h"
#include "proc_maps.h"
#include "task_names.h"

struct mmap_watch;

/* Open for a target (EXEC: enabled at its exec; PID: its main thread and
 * the threads it starts from now; SYSTEM: every process). */
int mmap_watch_open(struct mmap_watch **out, enum perf_target_kind kind, pid_t pid, char *err, size_t errlen);
/* pollfds (POLLIN when a ring is half full). */
int mmap_watch_fds(struct mmap_watch *w, struct pollfd *pfd, int max);
/* What poll said about those fds: a ring whose event hung up is not polled again. */
void mmap_watch_revents(struct mmap_watch *w, const struct pollfd *pfd, int n);
/* Move the records into pm. Returns mappings added, or -errno. */
int mmap_watch_drain(struct mmap_watch *w, struct proc_maps *pm);
/* Also take the COMM records (names at exec and thread renames) into tn (not owned; NULL: ignore them). */
void mmap_watch_set_names(struct mmap_watch *w, struct task_names *tn);
uint64_t mmap_watch_seen(const struct mmap_watch *w); /* mapping records read */
/* Are the records' times CLOCK_MONOTONIC (else the perf clock, Linux < 4.1)? */
bool mmap_watch_monotonic(const struct mmap_watch *w);
uint64_t mmap_watch_lost(const struct mmap_watch *w); /* records the kernel dropped (ring full) */
void mmap_watch_close(struct mmap_watch *w);

#endif
