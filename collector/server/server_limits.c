/* Limits of the collector's loop: connection budgets (--max-conns and its
 * pre-Hello and per-address shares), one live connection per session,
 * connections per agent id, --max-rate, Hello and idle deadlines. */
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

/* Hello admission (after authentication): a session (agent_id, boot_id) has one
 * live connection, its owner: a second Hello for it is refused while the first is
 * open (a real agent retries with backoff and gets in, with the committed seq,
 * once the first is gone: EOF, an error or --idle-timeout). So a peer that only
 * knows the session's ids cannot write into it beside its agent. Besides, at most
 * max_per_agent open connections per agent id (sessions of several boots). */
int srv_admit_hello(void *arg, struct ingest_conn *ic, const Prof__Hello *h)
{
	struct server *s = arg;
	unsigned n = 0;
	bool owned = false;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (&c->ing == ic || !c->ing.hello_done || c->closing || strcmp(c->ing.agent_id, h->agent_id) != 0)
			continue;
		n++;
		owned = owned || c->ing.boot_id == h->boot_id;
	}
	if (owned) {
		s->stats.session_busy++;
		return ingest_fail(ic, INGEST_PROTOCOL, EBUSY, true,
				   "this session (boot id %016llx) already has a live connection: one connection "
				   "per session; retrying later (the session is free once that connection closes, "
				   "at the latest after --idle-timeout of silence)",
				   (unsigned long long)h->boot_id);
	}
	if (n < s->max_per_agent)
		return 0;
	s->stats.over_per_agent++;
	return ingest_fail(ic, INGEST_PROTOCOL, EBUSY, true,
			   "agent id already has %u open connections (limit --max-sessions-per-agent %u): "
			   "do two agents use the same --agent-id? retrying later",
			   n, s->max_per_agent);
}

/* Close a connection that has no Hello yet to make room (at the end of this iteration). */
static void evict(struct server *s, struct conn *c, const char *why)
{
	s->stats.evicted++;
	ingest_fail(&c->ing, INGEST_PROTOCOL, EBUSY, !c->st.handshaking,
		    "evicted after %llu ms without a Hello: %s; retry",
		    (unsigned long long)((clock_mono_ns() - c->accepted_ns) / 1000000u), why);
	c->closing = true;
	if (s->stats.evicted <= 10 || s->stats.evicted % 1000 == 0)
		log_warn("%s: %s (%llu evicted so far; logged for the first 10, then every 1000th)", c->ing.peer,
			 c->ing.err, (unsigned long long)s->stats.evicted);
}

/* Budgets of a new connection from addr. Connections without a Hello may hold at
 * most max_prehello slots, max_prehello_per_addr of them from one address; over
 * either, or when all max_conns slots are taken, the oldest connection without a
 * Hello (of the same address first) is evicted, so that peers holding silent
 * connections cannot lock agents out (a real agent sends its Hello at once).
 * Only connections older than EVICT_MIN_AGE_NS are evicted: a burst of new ones
 * (a fleet reconnecting after a restart, handshakes in progress) refuses the
 * newcomer instead, who retries. Returns NULL (admitted) or why it is refused. */
const char *srv_admit_conn(struct server *s, const char *addr)
{
	for (;;) {
		uint64_t now = clock_mono_ns();
		unsigned total = 0, pre = 0, pre_addr = 0;
		struct conn *old = NULL, *old_addr = NULL; /* the list is newest first: the last match is the oldest */
		for (struct conn *c = s->conns; c; c = c->next) {
			if (c->closing)
				continue;
			total++;
			if (c->ing.hello_done)
				continue;
			pre++;
			old = c;
			if (strcmp(c->addr, addr) == 0) {
				pre_addr++;
				old_addr = c;
			}
		}
		bool stale_addr = old_addr && now - old_addr->accepted_ns >= EVICT_MIN_AGE_NS;
		bool stale = old && now - old->accepted_ns >= EVICT_MIN_AGE_NS;
		if (pre_addr >= s->max_prehello_per_addr) {
			if (!stale_addr)
				return "too many new connections from this address";
			evict(s, old_addr, "too many connections without a Hello from this address");
		} else if (pre >= s->max_prehello) {
			if (!stale)
				return "too many new connections";
			evict(s, old, "too many connections without a Hello");
		} else if (total >= s->max_conns) {
			if (!stale)
				return "connection limit";
			evict(s, old, "connection limit reached");
		} else {
			return NULL;
		}
	}
}

void srv_refuse(struct server *s, int fd, const char *peer, const char *why)
{
	char msg[200];
	uint8_t buf[256];
	if (strcmp(why, "connection limit") == 0)
		snprintf(msg, sizeof(msg),
			 "collector has reached its connection limit (%u): retry later or raise --max-conns",
			 s->max_conns);
	else
		snprintf(msg, sizeof(msg), "%s (without a Hello yet; limits 1/4 of --max-conns %u, 1/8 per address): "
			 "retry later", why, s->max_conns);
	int n = ingest_pack_error(EBUSY, msg, buf, sizeof(buf));
	if (n > 0 && !s->tls) /* a TLS agent would read a plaintext Error as a broken handshake */
		(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	s->stats.refused++;
	if (s->stats.refused <= 10 || s->stats.refused % 1000 == 0)
		log_warn("%s: refused: %s (%u connections, --max-conns %u; %llu refused so far, logged for the first "
			 "10, then every 1000th)",
			 peer, why, s->nconns, s->max_conns, (unsigned long long)s->stats.refused);
}

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
