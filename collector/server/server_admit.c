/* Admission: the budgets of connections that have not proven themselves yet
 * (--max-conns and its unproven and per-address shares), fair eviction, and
 * Hello admission (one live connection per session, connections per agent id).
 *
 * A connection is unproven until it sends a valid ledger record (server_addr.c):
 * before its Hello, and after it until its first record. Without a token that
 * is all a collector can tell an agent by, so unproven connections hold at most
 * max_prehello slots (max_prehello_per_addr of them from one address) and are
 * the only ones ever evicted to make room; a Hello alone writes nothing to the
 * store (ingest.c). When a newcomer finds a budget full:
 *  - its own address over its share: the oldest unproven connection of that
 *    address is evicted if it is EVICT_MIN_AGE_NS old, else the newcomer is
 *    refused (a fleet behind one address reconnecting at once is not churned);
 *  - all unproven slots (or all max_conns) taken: the victim comes from the
 *    address holding the most unproven connections, its oldest one. It is
 *    evicted at any age when that address holds at least two more than the
 *    newcomer's: a crowd from a few addresses, however fast it reconnects, cannot
 *    keep an agent of another address out (it gets in at once); otherwise only
 *    when it is EVICT_MIN_AGE_NS old.
 * At the Hello, a session whose live connection is still unproven and
 * EVICT_MIN_AGE_NS old is taken over (a squatter that sent the agent's ids and
 * nothing else cannot keep it out); so is an unproven connection of the same
 * agent id over --max-sessions-per-agent. */
#include "server_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "report/text_safe.h"

/* Close an unproven connection to make room (at the end of this iteration). */
static void evict(struct server *s, struct conn *c, const char *why)
{
	s->stats.evicted++;
	uint64_t age_ms = (clock_mono_ns() - c->accepted_ns) / 1000000u;
	if (c->ing.hello_done)
		ingest_fail(&c->ing, INGEST_PROTOCOL, EBUSY, true,
			    "evicted after %llu ms without a record since its Hello: %s; retry",
			    (unsigned long long)age_ms, why);
	else
		ingest_fail(&c->ing, INGEST_PROTOCOL, EBUSY, !c->st.handshaking,
			    "evicted after %llu ms without a Hello: %s; retry", (unsigned long long)age_ms, why);
	srv_conn_closing(s, c);
	if (s->stats.evicted <= 10 || s->stats.evicted % 1000 == 0)
		log_warn("%s: %s (%llu evicted so far; logged for the first 10, then every 1000th)", c->ing.peer,
			 c->ing.err, (unsigned long long)s->stats.evicted);
}

static bool old_enough(const struct conn *c, uint64_t now)
{
	return now - c->accepted_ns >= EVICT_MIN_AGE_NS;
}

/* The victim for a newcomer whose address holds mine unproven connections: the
 * oldest of the address holding the most (of those, the oldest), or NULL. */
static struct conn *fair_victim(struct server *s, unsigned mine, uint64_t now)
{
	struct srv_addr *best = NULL;
	for (struct srv_addr *a = s->unproven_addrs; a; a = a->unext)
		if (!best || a->unproven > best->unproven ||
		    (a->unproven == best->unproven && a->uhead->accepted_ns < best->uhead->accepted_ns))
			best = a;
	if (!best)
		return NULL;
	if (best->unproven >= mine + 2) {
		s->stats.evicted_fair++;
		return best->uhead;
	}
	return old_enough(best->uhead, now) ? best->uhead : NULL;
}

const char *srv_admit_conn(struct server *s, const char *addr)
{
	for (;;) {
		uint64_t now = clock_mono_ns();
		struct srv_addr *a = srv_addr_find(s, addr);
		unsigned mine = a ? a->unproven : 0;
		struct conn *v;
		if (mine >= s->max_prehello_per_addr) {
			v = a->uhead; /* its oldest unproven one */
			if (!v || !old_enough(v, now))
				return "too many new connections from this address";
			evict(s, v, "too many unproven connections from this address");
		} else if (s->nunproven >= s->max_prehello) {
			if (!(v = fair_victim(s, mine, now)))
				return "too many new connections";
			evict(s, v, "too many unproven connections");
		} else if (s->nopen >= s->max_conns) {
			if (!(v = fair_victim(s, mine, now)))
				return "connection limit";
			evict(s, v, "connection limit reached");
		} else {
			return NULL;
		}
	}
}

void srv_refuse(struct server *s, int fd, const char *peer, const char *why)
{
	char msg[240];
	uint8_t buf[320];
	if (strcmp(why, "connection limit") == 0)
		snprintf(msg, sizeof(msg),
			 "collector has reached its connection limit (%u): retry later or raise --max-conns",
			 s->max_conns);
	else
		snprintf(msg, sizeof(msg),
			 "%s (connections without a record yet; limits 1/4 of --max-conns %u, 1/8 per address): "
			 "retry later",
			 why, s->max_conns);
	int n = ingest_pack_error(EBUSY, msg, 0, buf, sizeof(buf));
	if (n > 0 && !s->tls) /* a TLS agent would read a plaintext Error as a broken handshake */
		(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	s->stats.refused++;
	if (s->stats.refused <= 10 || s->stats.refused % 1000 == 0)
		log_warn("%s: refused: %s (%u connections, --max-conns %u; %llu refused so far, logged for the first "
			 "10, then every 1000th)",
			 peer, why, s->nopen, s->max_conns, (unsigned long long)s->stats.refused);
}

/* Hello admission (after authentication): a session (agent_id, boot_id) has one
 * live connection, its owner: a second Hello for it is refused while the first is
 * open and proven (a real agent retries with backoff and gets in, with the
 * committed seq, once the first is gone: EOF, an error or --idle-timeout), or
 * takes the session over from an unproven owner EVICT_MIN_AGE_NS old. So a peer
 * that only knows the session's ids cannot write into it beside its agent, nor
 * hold it with a Hello alone. Besides, at most max_per_agent open connections per
 * agent id (sessions of several boots); over it, the oldest unproven one of that
 * agent id (EVICT_MIN_AGE_NS old) makes room. One agent id is one machine: a Hello
 * whose hostname differs from that of a proven live connection of its agent id is
 * refused, saying which host holds the id (two boards deployed with one --agent-id
 * would otherwise share sessions and limits, the later ones waiting unseen). */
int srv_admit_hello(void *arg, struct ingest_conn *ic, const Prof__Hello *h)
{
	struct server *s = arg;
	uint64_t now = clock_mono_ns();
	unsigned n = 0;
	struct conn *owner = NULL, *spare = NULL; /* spare: the oldest unproven one of this agent id */
	struct conn *other_host = NULL;		  /* a proven one of this agent id from another host */
	for (struct conn *c = s->conns; c; c = c->next) {
		if (&c->ing == ic || !c->ing.hello_done || c->closing || strcmp(c->ing.agent_id, h->agent_id) != 0)
			continue;
		n++;
		if (c->ing.boot_id == h->boot_id)
			owner = c;
		if (!c->counted_proven && old_enough(c, now))
			spare = c;
		/* a second live agent under the same id: a proven connection from another host */
		if (c->counted_proven && !other_host && c->ing.hostname[0] && h->hostname && h->hostname[0] &&
		    strncmp(c->ing.hostname, h->hostname, sizeof(c->ing.hostname) - 1) != 0)
			other_host = c;
	}
	if (other_host) {
		s->stats.id_in_use++;
		char a[64], b[64];
		text_safe_copy(a, sizeof(a), other_host->ing.hostname);
		text_safe_copy(b, sizeof(b), h->hostname);
		return ingest_fail(ic, INGEST_PROTOCOL, EADDRINUSE, true,
				   "agent id in use: a live agent on host '%s' (%s) streams as this --agent-id; "
				   "this agent is on host '%s': give each board its own --agent-id (the board "
				   "services use the machine id or the Android serial); retrying later",
				   a, other_host->ing.peer, b);
	}
	if (owner && !owner->counted_proven && old_enough(owner, now)) {
		s->stats.squatters_evicted++;
		evict(s, owner, "another connection sent a Hello for this session");
		if (spare == owner)
			spare = NULL;
		owner = NULL;
		n--;
	}
	if (owner) {
		s->stats.session_busy++;
		return ingest_fail(ic, INGEST_PROTOCOL, EBUSY, true,
				   "this session (boot id %016llx) already has a live connection: one connection "
				   "per session; retrying later (the session is free once that connection closes, "
				   "at the latest after --idle-timeout of silence)",
				   (unsigned long long)h->boot_id);
	}
	if (n >= s->max_per_agent && spare && !spare->closing) {
		s->stats.squatters_evicted++;
		evict(s, spare, "over --max-sessions-per-agent for this agent id");
		n--;
	}
	if (n < s->max_per_agent)
		return 0;
	s->stats.over_per_agent++;
	return ingest_fail(ic, INGEST_PROTOCOL, EBUSY, true,
			   "agent id already has %u open connections (limit --max-sessions-per-agent %u): "
			   "do two agents use the same --agent-id? retrying later",
			   n, s->max_per_agent);
}
