#include "sample_agg.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdull;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ull;
	x ^= x >> 33;
	return x;
}

static uint64_t key_hash(const struct sample_key *k)
{
	uint64_t h = mix64(((uint64_t)(uint32_t)k->pid << 32) | (uint32_t)k->tid);
	h = mix64(h ^ k->ip);
	h = mix64(h ^ k->kip);
	return mix64(h ^ ((uint64_t)k->inc << 32 | k->stack_id));
}

static bool key_eq(const struct sample_key *a, const struct sample_key *b)
{
	return a->pid == b->pid && a->tid == b->tid && a->ip == b->ip && a->kip == b->kip &&
	       a->stack_id == b->stack_id && a->inc == b->inc;
}

int sample_agg_init(struct sample_agg *a)
{
	memset(a, 0, sizeof(*a));
	a->cap = 1024;
	a->slots = calloc(a->cap, sizeof(*a->slots));
	return a->slots ? 0 : -ENOMEM;
}

void sample_agg_free(struct sample_agg *a)
{
	free(a->slots);
	memset(a, 0, sizeof(*a));
}

static struct sample_entry *find_slot(struct sample_entry *slots, size_t cap, const struct sample_key *k)
{
	size_t i = (size_t)key_hash(k) & (cap - 1);
	while (slots[i].count && !key_eq(&slots[i].k, k))
		i = (i + 1) & (cap - 1);
	return &slots[i];
}

static int grow(struct sample_agg *a)
{
	size_t ncap = a->cap * 2;
	struct sample_entry *ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return -ENOMEM;
	for (size_t i = 0; i < a->cap; i++)
		if (a->slots[i].count)
			*find_slot(ns, ncap, &a->slots[i].k) = a->slots[i];
	free(a->slots);
	a->slots = ns;
	a->cap = ncap;
	return 0;
}

int sample_agg_add(struct sample_agg *a, const struct sample_key *k, uint64_t count)
{
	if (count == 0)
		return 0;
	struct sample_entry *e = find_slot(a->slots, a->cap, k);
	if (!e->count) {
		if (a->n >= SAMPLE_AGG_MAX_KEYS)
			return -ENOSPC;
		if ((a->n + 1) * 2 > a->cap) {
			int rc = grow(a);
			if (rc < 0)
				return rc;
			e = find_slot(a->slots, a->cap, k);
		}
		e->k = *k;
		e->count = count;
		a->n++;
		a->total += count;
		return 1;
	}
	e->count += count;
	a->total += count;
	return 0;
}

bool sample_agg_full(const struct sample_agg *a)
{
	return a->n >= SAMPLE_AGG_MAX_KEYS;
}

void sample_agg_reset(struct sample_agg *a)
{
	if (a->n)
		memset(a->slots, 0, a->cap * sizeof(*a->slots));
	a->n = 0;
	a->total = 0;
}

/* ---------------------------------------------------------------- stacks */

static uint64_t chain_hash(const uint64_t *ips, size_t n)
{
	uint64_t h = mix64(n);
	for (size_t i = 0; i < n; i++)
		h = mix64(h ^ ips[i]);
	return h;
}

int stack_table_init(struct stack_table *t)
{
	memset(t, 0, sizeof(*t));
	t->hcap = 256;
	t->hash = calloc(t->hcap, sizeof(*t->hash));
	return t->hash ? 0 : -ENOMEM;
}

void stack_table_free(struct stack_table *t)
{
	free(t->ips);
	free(t->off);
	free(t->len);
	free(t->declared);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

static bool chain_eq(const struct stack_table *t, uint32_t id, const uint64_t *ips, size_t n)
{
	return t->len[id - 1] == n && memcmp(t->ips + t->off[id - 1], ips, n * sizeof(*ips)) == 0;
}

static size_t hash_probe(const struct stack_table *t, uint32_t *hash, size_t hcap, const uint64_t *ips, size_t n)
{
	size_t i = (size_t)chain_hash(ips, n) & (hcap - 1);
	while (hash[i] && !(t && chain_eq(t, hash[i], ips, n)))
		i = (i + 1) & (hcap - 1);
	return i;
}

static int rehash(struct stack_table *t)
{
	size_t ncap = t->hcap * 2;
	uint32_t *nh = calloc(ncap, sizeof(*nh));
	if (!nh)
		return -ENOMEM;
	for (size_t id = 1; id <= t->n; id++)
		nh[hash_probe(NULL, nh, ncap, t->ips + t->off[id - 1], t->len[id - 1])] = (uint32_t)id;
	free(t->hash);
	t->hash = nh;
	t->hcap = ncap;
	return 0;
}

static int reserve(void **p, size_t *cap, size_t need, size_t elem, size_t initial)
{
	if (need <= *cap)
		return 0;
	size_t ncap = *cap ? *cap : initial;
	while (ncap < need)
		ncap *= 2;
	void *np = realloc(*p, ncap * elem);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

uint32_t stack_table_intern(struct stack_table *t, const uint64_t *ips, size_t n)
{
	if (n == 0)
		return 0;
	if (n > SAMPLE_STACK_MAX_DEPTH)
		n = SAMPLE_STACK_MAX_DEPTH;
	if ((t->n + 1) * 2 > t->hcap && rehash(t) < 0)
		return 0;
	size_t slot = hash_probe(t, t->hash, t->hcap, ips, n);
	if (t->hash[slot])
		return t->hash[slot];
	if (t->n >= SAMPLE_STACKS_MAX)
		return 0;
	if (reserve((void **)&t->ips, &t->capips, t->nips + n, sizeof(*t->ips), 1024) < 0)
		return 0;
	if (t->n == t->cap) {
		size_t ncap = t->cap ? t->cap * 2 : 64;
		uint32_t *no = realloc(t->off, ncap * sizeof(*no));
		if (!no)
			return 0;
		t->off = no;
		uint8_t *nl = realloc(t->len, ncap * sizeof(*nl));
		if (!nl)
			return 0;
		t->len = nl;
		bool *nd = realloc(t->declared, ncap * sizeof(*nd));
		if (!nd)
			return 0;
		t->declared = nd;
		t->cap = ncap;
	}
	memcpy(t->ips + t->nips, ips, n * sizeof(*ips));
	t->off[t->n] = (uint32_t)t->nips;
	t->len[t->n] = (uint8_t)n;
	t->declared[t->n] = false;
	t->nips += n;
	uint32_t id = (uint32_t)++t->n;
	t->hash[slot] = id;
	return id;
}

const uint64_t *stack_table_get(const struct stack_table *t, uint32_t id, size_t *n)
{
	if (id == 0 || id > t->n)
		return NULL;
	*n = t->len[id - 1];
	return t->ips + t->off[id - 1];
}

bool stack_table_declared(const struct stack_table *t, uint32_t id)
{
	return id == 0 || id > t->n || t->declared[id - 1];
}

void stack_table_set_declared(struct stack_table *t, uint32_t id)
{
	if (id && id <= t->n)
		t->declared[id - 1] = true;
}

void stack_table_redeclare(struct stack_table *t)
{
	if (t->n)
		memset(t->declared, 0, t->n * sizeof(*t->declared));
}
