/* A board agent's live snapshots, served page by page to the collector that replays their
 * windows (issue 36; proto/snapshot.proto). Each snapshot is a copy-on-write child of the
 * program (trace/snapshot.h) that never runs; its pages are read through /proc/CHILD/mem
 * (pread: no pins, so no page is copied into the snapshot, and Linux 3.4 has it). Bounded:
 * live snapshots (max_live; a new one is refused while they are all in use), pages per
 * snapshot (its max_pages), pages per session (session_pages), a snapshot's life (its ttl;
 * snap_serve_expire drops it, as SnapshotDone does).
 * Not wired to the transport yet: the collector's replay is not built. */
#ifndef AGENT_TRACE_SNAPSHOT_SERVE_H
#define AGENT_TRACE_SNAPSHOT_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "snapshot.pb-c.h"

struct snap_live {
	uint32_t id;
	pid_t child;
	int memfd;
	uint64_t expires_ns;
	uint32_t max_pages, served;
};

struct snap_serve {
	struct snap_live *live;
	unsigned max_live, n;
	uint32_t next_id, page_size;
	uint64_t session_pages, session_served;
	uint8_t *data; /* one answer's pages */
	uint64_t addr[64];
	uint32_t status[64];
	/* what happened, for the run's summary */
	uint64_t refused_budget, expired, refused_full;
};

/* 0; -ENOMEM. page_size: the kernel's (sysconf). */
int snap_serve_init(struct snap_serve *s, unsigned max_live, uint64_t session_pages, uint32_t page_size);

/* Take snapshot child (stopped, traced by us: trace_snapshot_ready done) for ttl_ns from
 * now, serving max_pages pages at most. 0 with *id; -EBUSY when max_live are live, -errno
 * when its memory cannot be opened: the child is then not taken (the caller drops it). */
int snap_serve_add(struct snap_serve *s, pid_t child, uint32_t max_pages, uint64_t ttl_ns, uint64_t now,
		   uint32_t *id);

/* The answer to req in *out (pointing into s: valid until the next call): each page read
 * from the snapshot, or its status (EFAULT unreadable, EDQUOT over the snapshot's or the
 * session's budget, ESRCH no such live snapshot). 0; -EINVAL: req is malformed (nothing
 * to answer). */
int snap_serve_answer(struct snap_serve *s, const Prof__PageRequest *req, Prof__Pages *out);

/* SnapshotDone: the snapshot is killed and reaped. 0; -ENOENT: not live. */
int snap_serve_done(struct snap_serve *s, uint32_t id);

/* Drop the snapshots whose time is up; how many. */
unsigned snap_serve_expire(struct snap_serve *s, uint64_t now);

/* A snapshot's TraceSnapshot: its maps read from /proc/CHILD/maps (start, end, r/w/x), the
 * thread's registers (trace_snapshot_regs), the limits it is served under. */
struct snap_desc {
	Prof__TraceSnapshot msg;
	Prof__SnapshotMap *maps, **mapp;
	uint64_t regs[34];
};

/* 0; -E2BIG over SNAPSHOT_MAPS_MAX maps, -EINVAL more than 34 registers, -errno. Free with
 * snap_desc_free (also after a failure). */
int snap_describe(struct snap_desc *d, pid_t child, uint32_t id, uint32_t arch, const uint64_t *regs, size_t nregs,
		  uint32_t page_size, uint32_t max_pages, uint32_t expires_ms);
void snap_desc_free(struct snap_desc *d);

/* Every snapshot dropped, memory freed. */
void snap_serve_free(struct snap_serve *s);

#endif
