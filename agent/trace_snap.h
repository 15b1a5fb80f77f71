/* Trace windows on the boards (issue 36): the board agents carry no emulator, so a window is a
 * snapshot (trace/snapshot_arm.c: the thread stopped only for the injected clone) whose
 * TraceSnapshot goes live to the collector, which replays it (warm-up + recorded instructions)
 * from the pages this agent serves (trace/snapshot_serve.c, through the transport) and stores
 * the window under a seq reserved for it; SnapshotDone (or an Error naming it, or its expiry)
 * lets the snapshot go: killed and reaped. With no collector connection no window is taken.
 * arm64 and 32-bit ARM only (-ENOTSUP elsewhere). */
#ifndef AGENT_TRACE_SNAP_H
#define AGENT_TRACE_SNAP_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "session.h"
#include "trace/snapshot_serve.h"

#define TRACE_SNAP_LIVE 4		/* snapshots served at once (the collector replays 4 a connection) */
#define TRACE_SNAP_PAGES 4096u		/* pages a snapshot serves at most (16 MiB of 4 KiB pages) */
#define TRACE_SNAP_TTL_MS 30000u	/* a snapshot is dropped after this, replayed or not */

struct trace_snap {
	struct snap_serve srv;
	struct session *s;
	uint32_t sent, done;
};

struct trace_snap_req {
	pid_t pid, tid;
	uint32_t window_index;
	uint64_t warmup, record; /* instructions the collector replays and records */
	uint64_t t_ns;		 /* the stop, after Hello.base_ns */
	/* out: the thread exited while it was being stopped and its wait status was taken here
	 * (the target must be told: target_child_reaped) */
	bool reaped;
	int exit_status;
};

/* 0 (the session's PageRequests and SnapshotDone come here from now on); -ENOMEM; -ENOTSUP
 * on an architecture without the snapshot. */
int trace_snap_open(struct trace_snap *b, struct session *s);
/* A window of r->tid: 0 sent (*stop_ns the thread's stop, attach to detach); -ENOTCONN no
 * collector connection (nothing taken); -EBUSY TRACE_SNAP_LIVE snapshots still served; -ESRCH
 * the thread exited; other -errno with why. */
int trace_snap_window(struct trace_snap *b, struct trace_snap_req *r, uint64_t *stop_ns, char *why,
		      size_t whylen);
/* Snapshots whose time is up: dropped; how many. */
unsigned trace_snap_expire(struct trace_snap *b, uint64_t now);
/* After session_close (the session's handlers are not reset: it is gone): every snapshot
 * still live killed and reaped. */
void trace_snap_close(struct trace_snap *b);

#endif
