/* Board snapshots in the event loop (issue 36, ingest_snap.h): each turn every
 * connection's replays run one slice each (INGEST_SNAP_SLICE instructions: a
 * replay never holds the loop for long), their PageRequests and SnapshotDones
 * are sent, finished windows join the open batch (committed and acked with it). */
#include "server_priv.h"

#include "ingest_snap.h"

void srv_snap_run(struct server *s, uint64_t now)
{
	s->snap_busy = false;
	s->snap_live = 0;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->closing || !c->ing.snaps) /* none ever sent on it */
			continue;
		bool was_tx = store_in_tx(s->store);
		int rc = ingest_snap_run(&c->ing, now);
		if (!was_tx && store_in_tx(s->store))
			s->batch_start_ns = now;
		if (rc < 0) {
			srv_conn_failed(s, c);
			continue;
		}
		if (rc == 1)
			s->snap_busy = true;
		s->snap_live += ingest_snap_live(&c->ing);
		srv_conn_flush(s, c); /* the requests, SnapshotDone, Errors queued */
	}
}

int srv_snap_timeout(const struct server *s, int timeout_ms)
{
	int want = s->snap_busy ? 0 : s->snap_live ? SNAP_TICK_MS : -1;
	if (want < 0)
		return timeout_ms;
	return timeout_ms < 0 || want < timeout_ms ? want : timeout_ms;
}
