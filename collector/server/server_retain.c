/* --retain: a prune pass of the store (store_prune.h) once a minute (a tenth
 * of a shorter --retain, at least a second), between
 * batches on the loop's thread, so no record is half written. Sessions with a
 * connection are being written: they only lose old rows. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "server_priv.h"
#include "store/store_prune.h"

void srv_retain(struct server *s, uint64_t now)
{
	/* once a minute; a shorter --retain, a tenth of it (at least a second) */
	uint64_t every = (uint64_t)SERVER_RETAIN_EVERY_MS * 1000000u;
	if (s->retain_ns / 10 < every)
		every = s->retain_ns / 10 > 1000000000u ? s->retain_ns / 10 : 1000000000u;
	s->next_retain_ns = now + every;
	size_t n = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		n++;
	int64_t *live = calloc(n + 1, sizeof(*live));
	if (!live)
		return;
	size_t nl = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		if (c->ing.session_id)
			live[nl++] = c->ing.session_id;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t wall = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	struct store_prune_opts po = {.before_ns = wall - (int64_t)s->retain_ns,
				      .live = live,
				      .nlive = nl,
				      .live_since_s = (int64_t)ts.tv_sec - SERVER_RETAIN_LIVE_GRACE_S};
	struct store_prune_stats ps;
	int rc = store_prune(s->store, &po, &ps);
	free(live);
	if (rc < 0) {
		log_warn("--retain: pruning the store failed (%s); next try in %u s", strerror(-rc),
			 SERVER_RETAIN_EVERY_MS / 1000u);
		if (store_damaged(s->store))
			s->store_damaged = true;
		return;
	}
	if (ps.rows || ps.sessions_deleted)
		log_info("--retain: deleted %llu old rows and %llu sessions", (unsigned long long)ps.rows,
			 (unsigned long long)ps.sessions_deleted);
}
