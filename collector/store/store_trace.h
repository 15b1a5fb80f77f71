/* TraceWindow records in the store (table trace_windows, store_trace.c):
 * the query side. Writing goes through store_put_record like every kind. */
#ifndef COLLECTOR_STORE_TRACE_H
#define COLLECTOR_STORE_TRACE_H

#include <stdint.h>

#include "store.h"

/* One stored window; tw is the decoded record, valid during the call only. */
struct store_trace_row {
	uint64_t seq;
	const Prof__TraceWindow *tw;
};
typedef int (*store_trace_cb)(const struct store_trace_row *row, void *arg);

/* Windows of a session by window index then seq; window_index < 0: all.
 * A callback returning non-zero stops and its value is returned. */
int store_list_trace_windows(struct store *s, int64_t session_id, int64_t window_index, store_trace_cb cb,
			     void *arg);

#endif
