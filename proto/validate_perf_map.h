/* Checks of a PerfMap record (proto/perf_map.proto): JIT symbols from a
 * process's /tmp/perf-PID.map. */
#ifndef PROTO_VALIDATE_PERF_MAP_H
#define PROTO_VALIDATE_PERF_MAP_H

#include <stdbool.h>
#include <stddef.h>

#include "perf_map.pb-c.h"

#define PERF_MAP_REC_SYMS 4096 /* symbols per record at most */
#define PERF_MAP_NAME_MAX 1024 /* bytes of a name at most (longer ones are cut by the agent) */

/* 0, or -EINVAL with the reason in err: columns of different lengths, more
 * than PERF_MAP_REC_SYMS, pid <= 0, size 0, start + size wrapping, a name
 * empty or longer than PERF_MAP_NAME_MAX. */
int validate_perf_map(const Prof__PerfMap *m, char *err, size_t errlen);

/* A mapping's path that names anonymous memory, the memory a perf map names:
 * as perf's is_anon_memory() (tools/perf/util/map.c) reads MMAP records,
 * "//anon" (the kernel's name for anonymous executable memory), "/dev/zero...",
 * "/anon_hugepage..."; NULL (no mapping known) too. The agent reads a process's
 * map for samples there, the collector names such frames from it. */
bool perf_map_anon(const char *path);

#endif
