/* One board snapshot's replay on the collector's side of the wire (issue 36):
 * from the agent's TraceSnapshot, the PageRequests to send, the Pages that
 * answer them, to the window's TraceWindow. Pure: no sockets, no store (the
 * connection code sends the requests and takes the window). */
#ifndef COLLECTOR_TRACE_REPLAY_SNAP_SESSION_H
#define COLLECTOR_TRACE_REPLAY_SNAP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "trace_replay.h"

#define SNAP_SESSION_PREFETCH 8 /* pages asked for per request: the missing one and the next ones of its map */

struct snap_session;

/* A session for a validated TraceSnapshot (validate_trace_snapshot): copied, the
 * replay opened (cfg copied). 0, -ENOMEM, or the replay's error with why. */
int snap_session_new(const Prof__TraceSnapshot *snap, const struct trace_replay_config *cfg, struct snap_session **out,
		     char *why, size_t whylen);
void snap_session_free(struct snap_session *s);
uint32_t snap_session_id(const struct snap_session *s);

/* Run the replay on: 1 when it needs pages (their addresses in addr[0..*n), n <= SNAP_SESSION_PREFETCH,
 * for a PageRequest), 2 when it paused after cfg->slice instructions (step again, no request),
 * 0 when the window is done (snap_session_result), < 0 on an error. */
int snap_session_step(struct snap_session *s, uint64_t *addr, size_t *n);
/* Take a validated Pages answer: -EINVAL (why) for another snapshot, an address not asked for,
 * or data that does not fit; a page with a non-zero status is one the replay cannot have
 * (its window ends there with that errno). */
int snap_session_pages(struct snap_session *s, const Prof__Pages *p, char *why, size_t whylen);
/* After step returned 0: the replay's result (owned by the session). */
const struct trace_replay_result *snap_session_result(const struct snap_session *s);
/* The window as a TraceWindow (columns malloc'd: edag_window_encode_free). */
int snap_session_window(const struct snap_session *s, Prof__TraceWindow *tw);

#endif
