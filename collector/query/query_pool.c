/* Interning pool and byte-key hash of collector/query/ (query_pool.h). */
#include "query_pool.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

uint64_t key_hash(const void *key, size_t len)
{
	/* FNV-1a 64 */
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++) {
		h ^= p[i];
		h *= 0x100000001b3ull;
	}
	return h;
}

int key_map_get(const struct key_map *m, const void *key, size_t len, uint32_t *val)
{
	if (!m->cap)
		return 0;
	uint64_t h = key_hash(key, len);
	for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		const struct key_slot *s = &m->slots[i];
		if (!s->key)
			return 0;
		if (s->hash == h && s->len == len && memcmp(s->key, key, len) == 0) {
			*val = s->val;
			return 1;
		}
	}
}

static void place(struct key_slot *slots, size_t cap, const struct key_slot *k)
{
	size_t i = k->hash & (cap - 1);
	while (slots[i].key)
		i = (i + 1) & (cap - 1);
	slots[i] = *k;
}

int key_map_put(struct key_map *m, const void *key, size_t len, uint32_t val)
{
	if ((m->n + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 64;
		struct key_slot *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->slots[i].key)
				place(ns, nc, &m->slots[i]);
		free(m->slots);
		m->slots = ns;
		m->cap = nc;
	}
	void *copy = malloc(len ? len : 1);
	if (!copy)
		return -ENOMEM;
	memcpy(copy, key, len);
	place(m->slots, m->cap, &(struct key_slot){.hash = key_hash(key, len), .key = copy, .len = len, .val = val});
	m->n++;
	return 0;
}

void key_map_free(struct key_map *m)
{
	for (size_t i = 0; i < m->cap; i++)
		free(m->slots[i].key);
	free(m->slots);
	memset(m, 0, sizeof(*m));
}

const char *str_pool_intern(struct str_pool *p, const char *s)
{
	size_t len = strlen(s);
	uint32_t idx;
	if (key_map_get(&p->map, s, len, &idx))
		return p->strs[idx];
	if (p->n == p->cap) {
		size_t nc = p->cap ? p->cap * 2 : 64;
		char **ns = realloc(p->strs, nc * sizeof(*ns));
		if (!ns)
			return NULL;
		p->strs = ns;
		p->cap = nc;
	}
	char *c = strdup(s);
	if (!c || key_map_put(&p->map, s, len, (uint32_t)p->n) < 0) {
		free(c);
		return NULL;
	}
	p->strs[p->n++] = c;
	return c;
}

void str_pool_free(struct str_pool *p)
{
	for (size_t i = 0; i < p->n; i++)
		free(p->strs[i]);
	free(p->strs);
	key_map_free(&p->map);
	memset(p, 0, sizeof(*p));
}
