/* Limits of the collector's loop: --max-rate, Hello and idle deadlines
 * (admission and its budgets: server_admit.c; frame memory: server_memory.c). */
#include "server_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net.h"

/* --max-rate: refill the bucket; when it is empty stop reading (the peer's
 * TCP window fills and it slows down) until it has refilled. */
bool srv_rate_exhausted(struct server *s, struct conn *c)
{
	if (s->max_rate == SERVER_UNLIMITED_RATE)
		return false;
	uint64_t now = clock_mono_ns();
	c->tokens += (double)(now - c->refill_ns) * 1e-9 * s->max_rate;
	if (c->tokens > s->max_rate)
		c->tokens = s->max_rate;
	c->refill_ns = now;
	if (c->tokens >= 0 || s->stopping)
		return false;
	uint64_t wait = (uint64_t)(-c->tokens / s->max_rate * 1e9) + 1000000u;
	c->resume_ns = now + wait;
	if (!c->throttled) {
		c->throttled = true;
		s->nthrottled++;
		s->stats.throttled++;
		srv_conn_update_events(s, c);
		if (!c->throttle_logged) {
			char b[128];
			log_warn("%s (%s): more than --max-rate %u records/s: reading paused (throttled); "
				 "logged once per connection",
				 c->ing.peer, srv_who(c, b, sizeof(b)), s->max_rate);
			c->throttle_logged = true;
		}
	}
	return true;
}

/* Nanoseconds from t to now; 0 when t is later: a connection read in this
 * iteration (a throttled one resumed after the caller took now) stamps its
 * last_rx_ns after now, and now - t would wrap to ~584 years (issue 25 item 8). */
static uint64_t since(uint64_t now, uint64_t t)
{
	return now > t ? now - t : 0;
}

/* After the Hello: a peer silent for --idle-timeout (agents send a Heartbeat
 * every 10 s) gets an Error and is closed. Throttled ones are not read, so not idle. */
static void close_idle(struct server *s, struct conn *c, uint64_t now)
{
	uint64_t idle = since(now, c->last_rx_ns);
	if (!s->idle_timeout_ns || c->throttled || idle < s->idle_timeout_ns)
		return;
	s->stats.idle_timeouts++;
	ingest_fail(&c->ing, INGEST_PROTOCOL, ETIMEDOUT, true,
		    "nothing received for %llu s (--idle-timeout; agents send a heartbeat every 10 s)",
		    (unsigned long long)(idle / 1000000000u));
	char b[128];
	log_warn("%s (%s): idle: %s; closing (%llu idle timeouts so far)", c->ing.peer, srv_who(c, b, sizeof(b)),
		 c->ing.err, (unsigned long long)s->stats.idle_timeouts);
	c->closing = true;
}

/* Peers that sent no Hello in time (silent or byte-at-a-time, or stuck in
 * the TLS handshake) give their slot back; silent agents too (close_idle). */
void srv_sweep_deadlines(struct server *s, uint64_t now)
{
	if (now < s->next_sweep_ns)
		return;
	s->next_sweep_ns = now + SWEEP_NS;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->closing || c->ing.failure != INGEST_OK)
			continue;
		if (c->ing.hello_done) {
			close_idle(s, c, now);
			continue;
		}
		if (since(now, c->accepted_ns) < s->hello_timeout_ns)
			continue;
		s->stats.hello_timeouts++;
		if (c->st.handshaking) {
			s->stats.tls_failed++;
			c->ing.send_error = false; /* no plaintext Error into a TLS handshake */
			s->stats.closed_bad++;
			c->closing = true;
			log_error("%s: TLS handshake not finished within %llu ms (--hello-timeout); closing the "
				  "connection (%llu TLS failures so far)",
				  c->ing.peer, (unsigned long long)(s->hello_timeout_ns / 1000000u),
				  (unsigned long long)s->stats.tls_failed);
			continue;
		}
		ingest_fail(&c->ing, INGEST_PROTOCOL, ETIMEDOUT, true,
			    "no Hello within %llu ms (%zu bytes received): silent or too slow peer",
			    (unsigned long long)(s->hello_timeout_ns / 1000000u), (size_t)c->dec.bytes);
		srv_conn_failed(s, c);
	}
}

/* Throttled connections whose bucket has refilled read again. */
void srv_resume_throttled(struct server *s, uint64_t now)
{
	for (struct conn *c = s->conns; c && s->nthrottled > 0; c = c->next) {
		if (!c->throttled || (now < c->resume_ns && !s->stopping))
			continue;
		c->throttled = false;
		s->nthrottled--;
		c->last_rx_ns = now; /* paused by us, not idle */
		srv_conn_update_events(s, c);
		if (!c->closing)
			srv_conn_read(s, c, READ_BUDGET);
	}
}
