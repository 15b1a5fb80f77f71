/* Accounting of the open connections by class and source address, the base of
 * the admission budgets (server_admit.c): a connection is unproven from its
 * accept until it has sent a valid ledger record (ingest_conn.proven), then
 * proven; a connection marked closing no longer counts (srv_conn_closing; one
 * marked directly counts until it is freed at the end of the loop iteration).
 * One hash table of the source addresses that hold connections (at most one
 * entry per connection); the addresses holding unproven connections are also
 * on a list, and each keeps its unproven connections oldest first, so that the
 * admission's choices are O(addresses), not O(connections). */
#include "server_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned addr_hash(const char *s)
{
	unsigned h = 2166136261u; /* FNV-1a */
	for (; *s; s++)
		h = (h ^ (unsigned char)*s) * 16777619u;
	return h;
}

int srv_addrs_init(struct server *s)
{
	unsigned n = 64;
	while (n < s->max_conns && n < (1u << 20))
		n *= 2;
	s->addr_buckets = calloc(n, sizeof(*s->addr_buckets));
	if (!s->addr_buckets)
		return -ENOMEM;
	s->addr_nbuckets = n;
	return 0;
}

void srv_addrs_free(struct server *s)
{
	for (unsigned i = 0; s->addr_buckets && i < s->addr_nbuckets; i++)
		while (s->addr_buckets[i]) {
			struct srv_addr *a = s->addr_buckets[i];
			s->addr_buckets[i] = a->next;
			free(a);
		}
	free(s->addr_buckets);
	s->addr_buckets = NULL;
}

struct srv_addr *srv_addr_find(const struct server *s, const char *addr)
{
	for (struct srv_addr *a = s->addr_buckets[addr_hash(addr) & (s->addr_nbuckets - 1)]; a; a = a->next)
		if (strcmp(a->addr, addr) == 0)
			return a;
	return NULL;
}

static void unproven_add(struct server *s, struct conn *c)
{
	struct srv_addr *a = c->from;
	c->unext = NULL;
	c->uprev = a->utail;
	if (a->utail)
		a->utail->unext = c;
	else
		a->uhead = c;
	a->utail = c;
	if (a->unproven++ == 0) {
		a->uprev = NULL;
		a->unext = s->unproven_addrs;
		if (s->unproven_addrs)
			s->unproven_addrs->uprev = a;
		s->unproven_addrs = a;
	}
	s->nunproven++;
}

static void unproven_remove(struct server *s, struct conn *c)
{
	struct srv_addr *a = c->from;
	if (c->uprev)
		c->uprev->unext = c->unext;
	else
		a->uhead = c->unext;
	if (c->unext)
		c->unext->uprev = c->uprev;
	else
		a->utail = c->uprev;
	c->uprev = c->unext = NULL;
	if (--a->unproven == 0) {
		if (a->uprev)
			a->uprev->unext = a->unext;
		else
			s->unproven_addrs = a->unext;
		if (a->unext)
			a->unext->uprev = a->uprev;
		a->uprev = a->unext = NULL;
	}
	s->nunproven--;
}

int srv_conn_enter(struct server *s, struct conn *c, const char *addr)
{
	struct srv_addr *a = srv_addr_find(s, addr);
	if (!a) {
		a = calloc(1, sizeof(*a));
		if (!a)
			return -ENOMEM;
		snprintf(a->addr, sizeof(a->addr), "%s", addr);
		unsigned b = addr_hash(addr) & (s->addr_nbuckets - 1);
		a->next = s->addr_buckets[b];
		s->addr_buckets[b] = a;
	}
	a->refs++;
	a->open++;
	s->nopen++;
	c->from = a;
	unproven_add(s, c);
	return 0;
}

void srv_conn_closing(struct server *s, struct conn *c)
{
	c->closing = true;
	if (c->uncounted)
		return;
	c->uncounted = true;
	c->from->open--;
	s->nopen--;
	if (!c->counted_proven)
		unproven_remove(s, c);
	srv_frame_release(s, c); /* its buffers are freed at the end of the iteration */
}

void srv_conn_check_proven(struct server *s, struct conn *c)
{
	if (c->counted_proven || !c->ing.proven)
		return;
	c->counted_proven = true;
	if (!c->uncounted)
		unproven_remove(s, c);
}

void srv_conn_leave(struct server *s, struct conn *c)
{
	srv_conn_closing(s, c);
	struct srv_addr *a = c->from;
	if (--a->refs > 0)
		return;
	struct srv_addr **pp = &s->addr_buckets[addr_hash(a->addr) & (s->addr_nbuckets - 1)];
	while (*pp != a)
		pp = &(*pp)->next;
	*pp = a->next;
	free(a);
}
