/* Retention: delete a store's old samples and sessions (collector prune,
 * the listening collector's --retain). Rows with a time (every table with
 * session_id and t_ns: CPU samples and their intervals, task times, counter
 * samples, trace windows) are deleted when their wall time (the session's
 * realtime_ns + t_ns) is before the cutoff. A whole session (every table) is
 * deleted when it is not being written, its last_seen is before the cutoff
 * and it holds no calibration (later sessions' reports use it): a session
 * being written only loses its old rows, never its names, mappings, stacks or
 * ledger. One transaction per session. */
#ifndef COLLECTOR_STORE_PRUNE_H
#define COLLECTOR_STORE_PRUNE_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_prune_opts {
	int64_t before_ns;	  /* cutoff, unix ns */
	const char *agent_id;	  /* NULL: every agent */
	const int64_t *live;	  /* sessions being written (the server's connections) */
	size_t nlive;
	int64_t live_since_s;	  /* also being written: last_seen (unix s) at or after this (0: none) */
};

struct store_prune_stats {
	uint64_t rows;		   /* timed rows deleted */
	uint64_t sessions_pruned;  /* sessions that lost rows */
	uint64_t sessions_deleted; /* sessions deleted whole */
	uint64_t sessions_kept_live;
};

int store_prune(struct store *s, const struct store_prune_opts *o, struct store_prune_stats *out);
/* Delete session sid from every table. *rows: rows deleted (may be NULL). -ENOENT if none. */
int store_delete_session(struct store *s, int64_t sid, uint64_t *rows);

#endif
