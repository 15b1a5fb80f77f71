/* Store outages (issue 31): when the store fails (connection lost, no answer in
 * time, read-only, permission, disk full) the loop keeps running: the failed
 * batch is rolled back, its agents get Error{EAGAIN, retry_after_ms} and keep
 * their records; until the retry time every Hello and record is refused the
 * same way without touching the store (heartbeats are taken), a lost
 * connection is re-made without blocking (db_reconnect_poll), and the retry
 * interval doubles while the store keeps failing. One line says the store is
 * unavailable, one that it is back (at the next good commit). */
#include "server_priv.h"

#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "net.h"

uint32_t srv_store_retry_ms(void *arg)
{
	struct server *s = arg;
	if (!s->store_away)
		return 0;
	uint64_t now = clock_mono_ns();
	uint64_t left = s->store_retry_ns > now ? (s->store_retry_ns - now) / 1000000u : 0;
	return left < 100 ? 100u : (uint32_t)left;
}

void srv_store_failed(struct server *s, int rc)
{
	uint64_t now = clock_mono_ns();
	s->stats.store_failures++;
	if (!s->store_lost && rc == -EINTR) {
		log_info("stop requested while waiting for store %s: the open batch is rolled back, its agents "
			 "replay it to the next collector",
			 store_name(s->store));
		s->store_lost = true; /* no "back" line: the loop is stopping */
		s->store_lost_ns = now;
		s->store_retry_ms = STORE_RETRY_MIN_MS;
	} else if (!s->store_lost) {
		s->store_lost = true;
		s->store_lost_ns = now;
		s->store_told = 0;
		s->store_retry_ms = STORE_RETRY_MIN_MS;
		s->stats.store_outages++;
		log_warn("store %s unavailable: %s (%s); agents are told to retry after %u s and keep their "
			 "records (nothing unacked is lost); retrying the store every %u..%u s",
			 store_name(s->store), store_strerror(rc), store_last_error(s->store), s->store_retry_ms / 1000u,
			 STORE_RETRY_MIN_MS / 1000u, STORE_RETRY_MAX_MS / 1000u);
	} else {
		log_debug("store outage goes on: %s (%s)", store_strerror(rc), store_last_error(s->store));
		if (!s->store_away) { /* the probe after a pause failed: wait longer */
			s->store_retry_ms *= 2;
			if (s->store_retry_ms > STORE_RETRY_MAX_MS)
				s->store_retry_ms = STORE_RETRY_MAX_MS;
		}
	}
	if (!s->store_away)
		s->store_retry_ns = now + (uint64_t)s->store_retry_ms * 1000000u;
	s->store_away = true;
	/* Whatever the batch held is gone: its agents retry later and replay from what is committed. */
	uint32_t wait_ms = srv_store_retry_ms(s);
	for (struct conn *c = s->conns; c; c = c->next) {
		if (!c->ing.ack_due && c->ing.failure != INGEST_STORE)
			continue;
		c->ing.ack_due = false;
		if (c->closing && c->ing.failure != INGEST_STORE)
			continue;
		c->ing.retry_after_ms = wait_ms;
		ingest_fail(&c->ing, INGEST_STORE, EAGAIN, !c->st.handshaking,
			    "store unavailable (%s): nothing of the last batch was stored; keep the records and retry "
			    "after %u.%u s",
			    store_strerror(rc), wait_ms / 1000u, (wait_ms % 1000u) / 100u);
		s->store_told++;
		s->stats.store_retry_told++;
		if (!c->closing)
			srv_conn_closing(s, c);
	}
}

void srv_store_ok(struct server *s)
{
	if (!s->store_lost)
		return;
	s->store_lost = false;
	s->store_away = false;
	log_info("store %s back after %.1f s: storing and acking again (%llu agent connection(s) were told to "
		 "retry meanwhile)",
		 store_name(s->store), (double)(clock_mono_ns() - s->store_lost_ns) / 1e9,
		 (unsigned long long)s->store_told);
}

void srv_store_tick(struct server *s, uint64_t now)
{
	if (!s->store_away || now < s->store_retry_ns)
		return;
	if (store_needs_reconnect(s->store)) {
		int rc = store_reconnect_poll(s->store);
		if (rc == 0)
			return; /* in progress: polled again in STORE_RECONNECT_TICK_MS */
		if (rc < 0) {
			log_debug("store: reconnect failed: %s", store_last_error(s->store));
			s->store_retry_ms *= 2;
			if (s->store_retry_ms > STORE_RETRY_MAX_MS)
				s->store_retry_ms = STORE_RETRY_MAX_MS;
			s->store_retry_ns = now + (uint64_t)s->store_retry_ms * 1000000u;
			return;
		}
		log_debug("store: reconnected; the next batch shows whether it takes writes");
	}
	s->store_away = false; /* the next batch is the probe; "back" once it commits */
}

int srv_store_timeout(const struct server *s, int timeout_ms, uint64_t now)
{
	if (!s->store_away)
		return timeout_ms;
	int ms = STORE_RECONNECT_TICK_MS;
	if (s->store_retry_ns > now + (uint64_t)STORE_RECONNECT_TICK_MS * 1000000u)
		ms = (int)((s->store_retry_ns - now + 999999u) / 1000000u);
	return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}
