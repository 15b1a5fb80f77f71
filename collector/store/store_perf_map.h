/* JIT symbols the agents read from /tmp/perf-PID.map (proto/perf_map.proto),
 * kept per session and process in perf_map_syms, read back by the query to
 * name frames in anonymous memory. */
#ifndef COLLECTOR_STORE_PERF_MAP_H
#define COLLECTOR_STORE_PERF_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct perf_map_sym {
	int32_t pid;
	uint64_t start, end;
	char *name; /* malloc'd */
};

/* What one session's query holds at most: a forged agent may store any number
 * of PerfMap records (an honest one sends at most 16 MiB of each process's file). */
#define STORE_PERF_MAP_QUERY_SYMS 1000000
#define STORE_PERF_MAP_QUERY_BYTES (64u << 20) /* of names */

/* The symbols session sid's agent sent, sorted by (pid, start), malloc'd into
 * *out (free each name, then the array): 0 (n may be 0), 1 (cut at the bounds
 * above: the lowest pids and addresses kept) or -errno. */
int store_perf_map_syms(struct store *s, int64_t sid, struct perf_map_sym **out, size_t *n);
void store_perf_map_free(struct perf_map_sym *v, size_t n);

#endif
