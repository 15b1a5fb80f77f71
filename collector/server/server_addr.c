/* Accounting of the open connections by class and source address, the base of
 * the admission budgets (server_admit.c): a connection is unproven from its
 * accept until it has sent a valid ledger record (ingest_conn.proven), then
 * proven; a connection marked closing no longer counts (srv_conn_closing; one
 * marked directly counts until it is freed at the end of the loop iteration).
 * One hash table of the source addresses that hold connections (at most one
 * entry per connection). */
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
	a->unproven++;
	s->nopen++;
	s->nunproven++;
	c->from = a;
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
	if (!c->counted_proven) {
		c->from->unproven--;
		s->nunproven--;
	}
	srv_frame_release(s, c); /* its buffers are freed at the end of the iteration */
}

void srv_conn_check_proven(struct server *s, struct conn *c)
{
	if (c->counted_proven || !c->ing.proven)
		return;
	c->counted_proven = true;
	if (!c->uncounted) {
		c->from->unproven--;
		s->nunproven--;
	}
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
