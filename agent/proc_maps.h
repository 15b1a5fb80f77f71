/* Executable file mappings of profiled processes, from /proc/PID/maps plus
 * the ELF build-id of each file: what the collector needs to symbolize
 * sampled IPs on the host. Each mapping gets a session-local id and is
 * declared once per session (again after the spool dropped records). */
#ifndef AGENT_PROC_MAPS_H
#define AGENT_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "elf_buildid.h"

#define PROC_MAPS_MAX 4096u   /* mappings per session */
#define PROC_MAPS_PIDS 1024u  /* processes scanned per session */

struct proc_mapping {
	uint32_t id; /* >= 1 */
	int32_t pid;
	uint64_t start, end, pgoff;
	char *path;
	uint8_t build_id[BUILD_ID_MAX];
	size_t build_id_len;
	bool declared;
};

struct proc_maps {
	struct proc_mapping *m;
	size_t n, cap;
	struct {
		int32_t pid;
		uint64_t scanned_ns; /* last scan (CLOCK_MONOTONIC) */
	} pids[PROC_MAPS_PIDS];
	size_t npids;
	const char *maps_fmt; /* "/proc/%d/maps" (tests point it elsewhere) */
};

void proc_maps_init(struct proc_maps *pm);
void proc_maps_free(struct proc_maps *pm);
/* Read the executable file mappings of pid; new ones are added undeclared.
 * Returns the number added, or -errno (-ENOENT: the process is gone). */
int proc_maps_scan(struct proc_maps *pm, pid_t pid, uint64_t now_ns);
/* Scan pid if ip is not inside a known mapping of pid and pid was not scanned
 * in the last min_gap_ns. Returns what proc_maps_scan returned, or 0. */
int proc_maps_ensure(struct proc_maps *pm, pid_t pid, uint64_t ip, uint64_t now_ns, uint64_t min_gap_ns);
/* One executable file mapping seen as it happened (a perf MMAP/MMAP2 record):
 * 1 added (undeclared), 0 already known, -errno. */
int proc_maps_add(struct proc_maps *pm, pid_t pid, uint64_t start, uint64_t end, uint64_t pgoff, const char *path);
const struct proc_mapping *proc_maps_find(const struct proc_maps *pm, pid_t pid, uint64_t ip);
/* Parse one /proc/PID/maps line; returns true for an executable file mapping
 * (path starts with '/'). path points into line. */
bool proc_maps_parse_line(char *line, uint64_t *start, uint64_t *end, uint64_t *pgoff, char **path);
void proc_maps_redeclare(struct proc_maps *pm);

#endif
