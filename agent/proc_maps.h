/* Executable file mappings of profiled processes, from /proc/PID/maps and
 * the kernel's MMAP records, plus the ELF build-id of each file: what the
 * collector needs to symbolize sampled IPs on the host. Each mapping gets a
 * session-local id (increasing, never reused) and is declared once per
 * session (again after the spool dropped records).
 *
 * No fixed cap on processes or mappings: the table holds for days on a busy
 * host because what is dead goes. A process that exited (EXIT record, or its
 * /proc entry gone) has its mappings marked dead; they are evicted by proc_maps_reap() once declared, one interval after
 * the exit (the sampler reaps once per interval, after its records are sent). Memory is bounded by max_bytes (PROC_MAPS_MEM_MAX by default,
 * counted as proc_maps_bytes()): over it, live processes are checked and the
 * dead ones evicted first; only if that is not enough a new mapping is dropped,
 * counted in `dropped` (the sampler says so once, with the count). */
#ifndef AGENT_PROC_MAPS_H
#define AGENT_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf_buildid.h"

/* 8 MiB: about 40,000 mappings of 200-byte entries (struct + path), ten times
 * what a busy host keeps live at once. */
#define PROC_MAPS_MEM_MAX (8u << 20)

struct proc_mapping {
	uint32_t id; /* >= 1 */
	int32_t pid;
	uint64_t start, end, pgoff;
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	bool declared;
	bool dead; /* its process exited: evicted once declared */
};

struct proc_entry {
	int32_t pid;  /* 0: free slot */
	int32_t ppid; /* from a FORK record (0: unknown): a child that never exec'd runs its parent's code */
	bool exited;
	bool missed; /* a sample fell in none of its mappings before its FORK record was read */
	uint64_t fork_ns, exit_ns; /* times of its FORK and EXIT records (perf clock; 0: none) */
	uint32_t exit_round;       /* reaps before its exit: evicted from the second reap after it */
	uint64_t scanned_ns; /* last /proc scan (CLOCK_MONOTONIC; 0: never) */
	struct proc_mapping *m; /* in id order */
	size_t n, cap;
};

struct proc_maps {
	struct proc_entry *procs; /* open addressing by pid, cap a power of two */
	size_t pcap, nprocs;
	size_t nmaps;      /* mappings held */
	size_t bytes;      /* memory held (entries, mappings, paths) */
	size_t max_bytes;  /* bound (PROC_MAPS_MEM_MAX; tests lower it) */
	uint32_t next_id;
	uint32_t rounds;   /* reaps so far */
	uint64_t dropped;  /* mappings not kept: over max_bytes with every process alive */
	uint64_t evicted;  /* mappings evicted (dead, declared) */
	const char *maps_fmt; /* "/proc/%d/maps" (tests point it elsewhere) */
	int (*alive)(pid_t pid); /* 1 alive, 0 gone (kill(pid, 0); tests replace it) */
};

void proc_maps_init(struct proc_maps *pm);
void proc_maps_free(struct proc_maps *pm);
/* Read the executable file mappings of pid; new ones are added undeclared.
 * Returns the number added, or -errno (-ENOENT: the process is gone). */
int proc_maps_scan(struct proc_maps *pm, pid_t pid, uint64_t now_ns);
/* Scan pid if ip is not inside a known mapping of pid and pid was not scanned
 * in the last min_gap_ns; a child gone before it was read gets its parent's
 * mappings (a fork that did not exec). Returns what proc_maps_scan returned, or 0. */
int proc_maps_ensure(struct proc_maps *pm, pid_t pid, uint64_t ip, uint64_t now_ns, uint64_t min_gap_ns);
/* One executable file mapping seen as it happened (a perf MMAP/MMAP2 record):
 * 1 added (undeclared), 0 already known, -errno (-ENOSPC: dropped, over the bound). */
int proc_maps_add(struct proc_maps *pm, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path);
/* Task records (FORK, EXIT: the kernel's perf_event_task_output) of
 * processes, with the record's time: pid forked from ppid (a pid used again
 * starts afresh); pid exited (its mappings are dead). A record older than the
 * other one of the same pid is a late one from another CPU's ring: ignored. */
void proc_maps_fork(struct proc_maps *pm, pid_t pid, pid_t ppid, uint64_t time_ns);
void proc_maps_exit(struct proc_maps *pm, pid_t pid, uint64_t time_ns);
/* Evict dead mappings that were declared, and exited processes left with none;
 * a process's exit is given one reap of grace (records from rings drained
 * later). Call after an interval's records were sent (not per record). Returns the mappings evicted. */
size_t proc_maps_reap(struct proc_maps *pm);
const struct proc_mapping *proc_maps_find(const struct proc_maps *pm, pid_t pid, uint64_t ip);
const struct proc_entry *proc_maps_proc(const struct proc_maps *pm, pid_t pid);
/* Iterate over every mapping: for (it = 0; (m = proc_maps_next(pm, &it, &j));) */
struct proc_mapping *proc_maps_next(struct proc_maps *pm, size_t *proc_it, size_t *map_it);
/* Parse one /proc/PID/maps line; returns true for an executable file mapping
 * (path starts with '/'). path points into line. */
bool proc_maps_parse_line(char *line, uint64_t *start, uint64_t *end, uint64_t *pgoff, char **path);
void proc_maps_redeclare(struct proc_maps *pm);

#endif
