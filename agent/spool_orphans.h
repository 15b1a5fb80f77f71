/* Records that earlier runs left behind: the orphaned session directories of
 * a spool (spool.h: a saved Hello, no live owner) sent to the collector one
 * session at a time, each through a transport of its own with its own Hello,
 * so that the collector stores them in their own session, each once (the
 * Hello's ack says what it already has; exactly once by (session, seq)). A
 * loop source: every agent run sends the orphans of its spool beside its own
 * records (session.c), `agent spool send` sends them on request. */
#ifndef AGENT_SPOOL_ORPHANS_H
#define AGENT_SPOOL_ORPHANS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "loop.h"

struct orphan_opts {
	const char *spool_dir; /* the directory of the session directories */
	const char *collector; /* HOST:PORT they go to */
	const char *agent_id;  /* only sessions of this agent id (NULL: any) */
	bool any_collector;    /* false: only sessions whose saved collector is this one */
	const char *only;      /* only the session directory of this name (NULL: every one) */
	const char *tls_ca, *token_file;
	size_t max_frame;
};

struct orphans_stats {
	unsigned found;		 /* orphaned sessions listed */
	unsigned delivered;	 /* of which every record is acknowledged (directory removed) */
	uint64_t records;	 /* records acknowledged from them */
	unsigned skipped;	 /* left alone: another agent id or collector, unreadable */
};

struct orphans;

/* List the orphaned sessions of the spool (adopted one at a time later).
 * err gets a user-facing reason. */
int orphans_open(struct orphans **out, const struct orphan_opts *o, char *err, size_t errlen);
int orphans_attach(struct orphans *o, struct loop *l);
/* Sessions still to deliver (the current one included). */
unsigned orphans_pending(const struct orphans *o);
/* A refusal no retry can fix (schema, token, TLS): the negative errno, 0 if none. */
int orphans_fatal(const struct orphans *o);
const struct orphans_stats *orphans_get_stats(const struct orphans *o);
/* Stops sending; what is not acknowledged stays in the spool. NULL is fine. */
void orphans_close(struct orphans *o);

#endif
