/* Board snapshots on a live agent connection (issue 36, proto/snapshot.proto): an
 * agent's TraceSnapshot opens a replay (trace_replay/snap_session.h), its
 * PageRequests and the final SnapshotDone are queued as frames for the server to
 * send, the agent's Pages feed it, and the finished window is stored as that
 * agent's TraceWindow record under the seq the agent reserved for it (the same
 * path as an agent-sent record: acks and the spool stay in step). No sockets:
 * the server runs it each event-loop turn and sends what it queued.
 *
 * A snapshot this collector cannot replay (over a limit below, a bad answer, too
 * slow) is refused with Error{code, message, snapshot_id}: that snapshot only,
 * the connection and its records go on. */
#ifndef COLLECTOR_INGEST_SNAP_H
#define COLLECTOR_INGEST_SNAP_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

struct ingest_conn;

#define INGEST_SNAP_MAX 4u		     /* snapshots replayed at once per connection */
#define INGEST_SNAP_WARMUP_MAX 2000000u	     /* warm-up instructions a snapshot may ask for */
#define INGEST_SNAP_RECORD_MAX 200000u	     /* recorded instructions (the agent's replay default) */
#define INGEST_SNAP_WARMUP_DEFAULT 500000u   /* when the snapshot says 0 (agent/trace_source.h) */
#define INGEST_SNAP_RECORD_DEFAULT 200000u
#define INGEST_SNAP_BYTES (64u << 20)	     /* page bytes one snapshot's replay holds at most */
#define INGEST_SNAP_CONN_BYTES (128u << 20)  /* ... all of one connection's snapshots together */
#define INGEST_SNAP_SERVER_BYTES (256u << 20) /* ... all connections' snapshots together (the process) */
#define INGEST_SNAP_TIME_MS 30000u	     /* a replay ends within this (or the snapshot's expiry) */
#define INGEST_SNAP_SLICE 20000u	     /* instructions per snapshot per event-loop turn */
#define INGEST_SNAP_OUT_MAX (1u << 20)     /* unsent PageRequests, Errors, SnapshotDones per connection */
#define INGEST_SNAP_GONE 16u		     /* seqs of refused snapshots remembered (finish) */

/* Statistics of one connection's snapshots. */
struct ingest_snap_stats {
	uint64_t windows;  /* windows stored */
	uint64_t refused;  /* snapshots refused (Error with their id) */
	uint64_t requests; /* PageRequests queued */
	uint64_t pages;	   /* pages received */
};

/* An agent's (validated) TraceSnapshot: 0 (opened, or refused with an Error queued), or a
 * negative errno with the connection's failure set (out of memory, before the Hello). */
int ingest_snap_begin(struct ingest_conn *c, const Prof__TraceSnapshot *ts, uint64_t now_ns);
/* An agent's (validated) Pages: 0, or a negative errno with the connection's failure set.
 * Pages for a snapshot not (or no longer) replayed are dropped. */
int ingest_snap_pages(struct ingest_conn *c, const Prof__Pages *p);
/* Run the connection's replays on, one slice each: queue PageRequests, store finished windows
 * (into the store's open batch), queue SnapshotDone or Errors. 1 when a replay can run on
 * without waiting for the agent (run again soon), 0 when none can, or a negative errno with
 * the connection's failure set (the store failed). */
int ingest_snap_run(struct ingest_conn *c, uint64_t now_ns);
/* Snapshots being replayed on this connection. */
unsigned ingest_snap_live(const struct ingest_conn *c);
/* Move up to cap queued bytes (whole frames or not) into buf; how many. */
size_t ingest_snap_take_out(struct ingest_conn *c, uint8_t *buf, size_t cap);
void ingest_snap_get_stats(const struct ingest_conn *c, struct ingest_snap_stats *st);
void ingest_snap_free(struct ingest_conn *c);

#endif
