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

/* Every symbol session sid's agent sent, sorted by (pid, start), malloc'd into
 * *out (free each name, then the array). 0 (n may be 0) or -errno. */
int store_perf_map_syms(struct store *s, int64_t sid, struct perf_map_sym **out, size_t *n);
void store_perf_map_free(struct perf_map_sym *v, size_t n);

#endif
