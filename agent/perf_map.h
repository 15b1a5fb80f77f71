/* JIT symbols a profiled process wrote to /tmp/perf-PID.map (node
 * --perf-basic-prof, Java agents, LuaJIT, python -X perf: "START SIZE name"
 * lines, hex without 0x, perf's tools/perf/Documentation/jit-interface.txt),
 * shipped to the collector as PerfMap records (proto/perf_map.proto): perf
 * reads the file at report time, and nothing reads the board then.
 *
 * The sampler calls perf_maps_check() when a new sample key of a process, or a
 * new call chain of it, lands in anonymous memory (a "//anon" mapping of its MMAP records, or outside every
 * mapping known): JIT code. perf reads the file for such mappings too (map__new,
 * tools/perf/util/map.c: anonymous and executable -> "/tmp/perf-%d.map"). The file is
 * read from where the last read stopped (JITs append to it), at most every
 * PERF_MAP_CHECK_GAP_NS per process, PERF_MAP_FILE_MAX bytes per file, and
 * only when it is a regular file (opened O_NOFOLLOW: never through a symlink)
 * owned by the process's user (the owner of /proc/PID) or by root: perf's
 * dso__load ignored a /tmp/perf-*.map "not owned by current user or root"
 * (tools/perf/util/symbol.c); here the process's own user stands for perf's
 * current one (the agent runs as root). A process gone before its user was
 * seen (a short one whose samples were read after it ended): root's file only.
 * The file is looked for as perf's dso__find_perf_map() (tools/perf/util/symbol.c)
 * does: where the process's mount namespace is not the agent's (a container, a
 * PrivateTmp service), there under its own pid (here through /proc/PID/root and
 * the NStgid of /proc/PID/status); then /tmp/perf-PID.map as the agent sees it.
 * Read positions of PERF_MAP_PIDS processes are kept; the one checked longest
 * ago is forgotten first (its file is then read again from the start: the
 * collector keeps one copy of each symbol). The file of each is held open (64
 * descriptors at most): what a process in another mount namespace appended
 * just before it ended is read after its namespace, and the path, are gone. */
#ifndef AGENT_PERF_MAP_H
#define AGENT_PERF_MAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "profiler.pb-c.h"
#include "validate_perf_map.h"

#define PERF_MAP_PIDS 64
#define PERF_MAP_FILE_MAX (16u << 20)	   /* bytes read of one file in a session */
#define PERF_MAP_CHECK_GAP_NS 200000000ull /* one look at a process's file per 200 ms */
#define PERF_MAP_CHUNK 65536		   /* bytes read at once (a longer line ends the file's reading) */

struct perf_map_file {
	int32_t pid; /* 0: free */
	uint32_t uid;
	uint64_t dev, ino, off; /* the file read and where its next line starts */
	uint64_t checked_ns;
	bool pending; /* asked again within the gap: looked at by perf_maps_retry() */
	int fd1;      /* the file open (fd + 1; 0: none): read on when its path is out of reach */
};

struct perf_maps {
	struct perf_map_file f[PERF_MAP_PIDS];
	const char *root_fmt; /* "/proc/%d/root/tmp/perf-%d.map": pid, then its pid in its own namespace */
	const char *path_fmt; /* "/tmp/perf-%d.map", where the first is missing (tests point it elsewhere) */
	const char *proc_fmt; /* "/proc/%d": its owner is the process's user */
	uint64_t syms;	      /* symbols sent */
	uint64_t refused;     /* files not read: a symlink, not a regular file, another owner */
	uint64_t capped;      /* files read up to PERF_MAP_FILE_MAX and no further */
};

typedef int (*perf_map_emit_fn)(void *ctx, Prof__Envelope *env);

void perf_maps_init(struct perf_maps *pm);
/* perf_map_anon(path): proto/validate_perf_map.h (shared with the collector). */
/* pid had a sample outside its file mappings at now_ns: send (emit) the lines
 * appended to its map file since the last read, in records of at most
 * PERF_MAP_REC_SYMS symbols. Returns the symbols sent, 0 (no file, nothing
 * new, checked less than PERF_MAP_CHECK_GAP_NS ago, refused) or emit's error
 * (what was not sent is read again at the next check). */
int perf_maps_check(struct perf_maps *pm, pid_t pid, uint64_t now_ns, perf_map_emit_fn emit, void *ctx);
/* Look again at the files of processes asked about within their gap (a call chain through JIT
 * code is asked about once, when it is new): call at the end of each interval. Returns what the
 * checks sent, or the first error. */
int perf_maps_retry(struct perf_maps *pm, uint64_t now_ns, perf_map_emit_fn emit, void *ctx);
/* Close the files held open. */
void perf_maps_free(struct perf_maps *pm);
/* Records sent may be lost (the spool dropped some): read every file again from its start. */
void perf_maps_forget(struct perf_maps *pm);

#endif
