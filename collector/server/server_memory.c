/* The frame memory budget (--max-frame-memory): what connections hold beyond
 * their FRAME_INITIAL_CAP buffer (a large frame being received, a kept Hello)
 * counts against one total for all connections, so that many connections each
 * holding a partial frame cannot take the collector's memory (1,024 x 1 MiB
 * was 1 GiB). A connection that needs more than is left first makes the
 * connections that have held memory the longest (unproven ones first, each for
 * at least FRAME_HOLD_MIN_NS: a real agent's large frame arrives whole in far
 * less) close, then waits (reading paused) and retries; it never allocates
 * past the budget. */
#include "server_priv.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "log.h"
#include "net.h"

static size_t conn_held(const struct conn *c)
{
	return (c->dec.cap > FRAME_INITIAL_CAP ? c->dec.cap - FRAME_INITIAL_CAP : 0) + c->ing.hello_len;
}

void srv_frame_update(struct server *s, struct conn *c)
{
	if (c->uncounted)
		return; /* released when it was marked closing */
	size_t held = conn_held(c);
	s->frame_mem = s->frame_mem - c->held + held;
	if (held && !c->held)
		c->held_since_ns = clock_mono_ns();
	c->held = held;
	if (!held)
		c->held_since_ns = 0;
	if (s->frame_mem > s->stats.frame_mem_peak)
		s->stats.frame_mem_peak = s->frame_mem;
}

void srv_frame_release(struct server *s, struct conn *c)
{
	s->frame_mem -= c->held;
	c->held = 0;
	c->held_since_ns = 0;
}

/* The holder to close for memory: unproven before proven, then the longest holding;
 * only ones holding for FRAME_HOLD_MIN_NS or more. NULL if none may be closed yet;
 * *retry_ns then says when one may. */
static struct conn *memory_victim(struct server *s, const struct conn *self, uint64_t now, uint64_t *retry_ns)
{
	struct conn *best = NULL;
	*retry_ns = UINT64_MAX;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c == self || c->closing || !c->held)
			continue;
		uint64_t ok_at = c->held_since_ns + FRAME_HOLD_MIN_NS;
		if (now < ok_at) {
			if (ok_at < *retry_ns)
				*retry_ns = ok_at;
			continue;
		}
		bool better = !best || (!c->counted_proven && best->counted_proven) ||
			      (c->counted_proven == best->counted_proven && c->held_since_ns < best->held_since_ns);
		if (better)
			best = c;
	}
	return best;
}

/* Reading paused until retry_ns (throttled: srv_resume_throttled reads it again). */
static void memory_wait(struct server *s, struct conn *c, uint64_t retry_ns)
{
	c->resume_ns = retry_ns;
	if (c->throttled)
		return;
	c->throttled = true;
	s->nthrottled++;
	s->stats.frame_waits++;
	srv_conn_update_events(s, c);
}

bool srv_frame_room(struct server *s, struct conn *c, size_t want_cap)
{
	size_t after = (want_cap > FRAME_INITIAL_CAP ? want_cap - FRAME_INITIAL_CAP : 0) + c->ing.hello_len;
	if (after <= c->held || s->frame_mem + (after - c->held) <= s->frame_budget)
		return true;
	uint64_t now = clock_mono_ns(), retry = UINT64_MAX;
	bool evicted = false;
	while (s->frame_mem + (after - c->held) > s->frame_budget) {
		struct conn *v = memory_victim(s, c, now, &retry);
		if (!v)
			break;
		s->stats.frame_evicted++;
		ingest_fail(&v->ing, INGEST_PROTOCOL, ENOMEM, !v->st.handshaking,
			    "closed after holding %zu KiB of a frame for %llu ms while the collector's frame memory "
			    "(--max-frame-memory %zu MiB) was full; retry",
			    v->held / 1024, (unsigned long long)((now - v->held_since_ns) / 1000000u),
			    s->frame_budget >> 20);
		if (s->stats.frame_evicted <= 10 || s->stats.frame_evicted % 1000 == 0)
			log_warn("%s: %s (%llu closed for frame memory so far; logged for the first 10, then every "
				 "1000th)",
				 v->ing.peer, v->ing.err, (unsigned long long)s->stats.frame_evicted);
		srv_conn_closing(s, v);
		evicted = true;
	}
	/* Freed buffers go at the end of this iteration: the connection retries after that,
	 * so the memory in use never exceeds the budget. */
	memory_wait(s, c, evicted ? now + 1000000u : retry == UINT64_MAX ? now + FRAME_HOLD_MIN_NS : retry);
	return false;
}
