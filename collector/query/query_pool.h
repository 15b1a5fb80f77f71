/* Private helpers of collector/query/: an interning string pool and a hash
 * from byte keys to indexes (open addressing, grows at 1/2 load). */
#ifndef COLLECTOR_QUERY_POOL_H
#define COLLECTOR_QUERY_POOL_H

#include <stddef.h>
#include <stdint.h>

struct key_map {
	struct key_slot {
		uint64_t hash;
		void *key; /* malloc'd copy, NULL = free */
		size_t len;
		uint32_t val;
	} *slots;
	size_t cap, n;
};

uint64_t key_hash(const void *key, size_t len);
/* 1 found (*val set), 0 not found. */
int key_map_get(const struct key_map *m, const void *key, size_t len, uint32_t *val);
/* Insert (key must not be there). 0 or -ENOMEM. */
int key_map_put(struct key_map *m, const void *key, size_t len, uint32_t val);
void key_map_free(struct key_map *m);

struct str_pool {
	struct key_map map;
	char **strs;
	size_t n, cap;
};

/* The pool's copy of s (stable until str_pool_free), NULL on ENOMEM. */
const char *str_pool_intern(struct str_pool *p, const char *s);
void str_pool_free(struct str_pool *p);

#endif
