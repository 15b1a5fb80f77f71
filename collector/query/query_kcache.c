/* A block's keys summed through a cache of their stored bytes (query_priv.h,
 * #40 w40k). A report over a store as written reads one block per record,
 * and the same keys come again in nearly every block: decoding each key's
 * six varints and hashing its fields was a third of the report's CPU. Here a
 * key's identity (its first five varints: pid, tid, ip, kip, stack id) is
 * looked up by its bytes, at most QM_KCACHE_IDENT bytes, in a table that
 * gives its row in the set (or that a --pid filter drops it); only the count
 * is decoded. A key met for the first time, or one whose bytes the table does
 * not hold (longer, or the table full), takes the plain path: decoded by
 * store_block_get, checked, filtered and added to the set, then remembered.
 * The bytes decide the fields (the varints are read the same way), so a hit
 * sums into the row the plain path would; two spellings of one key (a longer
 * varint of the same value) are two entries of the same row. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "sat.h"
#include "store/store_varint.h"
#include "validate_samples.h"

#define KC_SKIP UINT32_MAX /* the key's pid is not the filter's */
#define KC_HI 0x8080808080808080ull

static inline uint64_t load_le64(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	v = __builtin_bswap64(v);
#endif
	return v;
}

/* The identity of the key at p[0..len) in w (its bytes, little-endian words, zero past its length):
 * its length, 0 when its five varints do not end within QM_KCACHE_IDENT bytes of p (nor of len). */
static inline size_t ident(const uint8_t *p, size_t len, uint64_t w[QM_KCACHE_WORDS])
{
	uint8_t tmp[QM_KCACHE_IDENT];
	if (len < QM_KCACHE_IDENT) { /* the block's end: no byte past it is read (0x80 ends no varint) */
		memset(tmp, 0x80, sizeof(tmp));
		memcpy(tmp, p, len);
		p = tmp;
	}
	unsigned need = 5; /* the fifth byte without its high bit ends the identity */
	for (size_t i = 0; i < QM_KCACHE_WORDS; i++) {
		uint64_t x = load_le64(p + 8 * i);
		for (uint64_t t = ~x & KC_HI; t; t &= t - 1) {
			if (--need)
				continue;
			unsigned end = (unsigned)__builtin_ctzll(t) / 8 + 1; /* this word's bytes in it */
			w[i] = end == 8 ? x : x & ((1ull << (8 * end)) - 1);
			for (size_t j = i + 1; j < QM_KCACHE_WORDS; j++)
				w[j] = 0;
			size_t n = 8 * i + end;
			return n <= len ? n : 0;
		}
		w[i] = x;
	}
	return 0;
}

static inline uint64_t whash(const uint64_t w[QM_KCACHE_WORDS])
{
	uint64_t h = w[0] * 0x9e3779b97f4a7c15ull ^ w[1] * 0xc2b2ae3d27d4eb4full ^ w[2] * 0x165667b19e3779f9ull;
	h ^= h >> 29;
	h *= 0xbf58476d1ce4e5b9ull;
	return h ^ (h >> 32);
}

static inline bool same(const struct qm_kcache_ent *e, const uint64_t w[QM_KCACHE_WORDS])
{
	return e->w[0] == w[0] && e->w[1] == w[1] && e->w[2] == w[2];
}

#define KC_TAG(h) ((h) & ~0xffffffffull) /* the hash's high half tells most identities apart */

/* The entry of w (hash h), NULL: none (*at: the free slot where it goes). */
static inline struct qm_kcache_ent *find(const struct qm_kcache *c, const uint64_t w[QM_KCACHE_WORDS], uint64_t h,
					 size_t *at)
{
	size_t mask = c->cap - 1;
	for (size_t j = h & mask;; j = (j + 1) & mask) {
		uint64_t s = c->slots[j];
		if (!s) {
			*at = j;
			return NULL;
		}
		if (KC_TAG(s) == KC_TAG(h) && same(&c->ents[(uint32_t)s - 1], w))
			return &c->ents[(uint32_t)s - 1];
	}
}

/* Room for one more entry (slots at a load of at most one half); false: the table stays as it is
 * (full, or no memory: the key takes the plain path, uncached). */
static bool room(struct qm_kcache *c)
{
	if (c->n >= QM_KCACHE_MAX)
		return false;
	if (c->n + 1 > c->capents) {
		size_t nc = c->capents ? 2 * c->capents : 512;
		struct qm_kcache_ent *ne = realloc(c->ents, nc * sizeof(*ne));
		if (!ne)
			return false;
		c->ents = ne;
		c->capents = nc;
	}
	if ((c->n + 1) * 2 <= c->cap)
		return true;
	size_t nc = c->cap ? c->cap * 2 : 1024;
	uint64_t *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return false;
	free(c->slots);
	c->slots = ns;
	c->cap = nc;
	for (size_t i = 0; i < c->n; i++) {
		uint64_t h = whash(c->ents[i].w);
		size_t j = h & (nc - 1);
		while (ns[j])
			j = (j + 1) & (nc - 1);
		ns[j] = KC_TAG(h) | (uint32_t)(i + 1);
	}
	return true;
}

void qm_kcache_flush(struct qm_kcache *c, struct kset *ks)
{
	for (size_t i = 0; i < c->n; i++) {
		struct qm_kcache_ent *e = &c->ents[i];
		if (e->row != KC_SKIP && e->count) {
			sat_inc_u64(&ks->rows[e->row].count, e->count);
			e->count = 0;
		}
	}
}

void qm_kcache_free(struct qm_kcache *c)
{
	free(c->slots);
	free(c->ents);
	*c = (struct qm_kcache){0};
}

/* The key at p[0..len) the plain way (met for the first time, or not cacheable): decoded, checked,
 * filtered and summed in at first; remembered by its identity w (idlen bytes, 0: none). 1: kept, 0:
 * dropped by the filter, -EBADMSG: it does not decode, -ENOMEM; *used its bytes. */
static int plain_key(struct qm_kcache *c, struct kset *ks, const uint8_t *p, size_t len,
		     const struct query_filter *f, uint64_t first, const uint64_t w[QM_KCACHE_WORDS], size_t idlen,
		     size_t *used)
{
	struct store_block_key k;
	if (!(*used = store_block_get(p, len, &k)))
		return -EBADMSG;
	uint32_t row = KC_SKIP;
	if (!f->npids || qm_in_pid_list(f->pids, f->npids, k.pid)) {
		if (k.count > VALIDATE_MAX_SAMPLE_COUNT) /* stored unchecked by an older collector */
			k.count = VALIDATE_MAX_SAMPLE_COUNT;
		size_t r;
		if (qm_kset_add_at(ks, &k, first, &r) < 0)
			return -ENOMEM;
		row = (uint32_t)r;
	}
	/* store_block_get read the identity's five varints as ident() delimited them, then the count */
	if (idlen && idlen < *used && room(c)) {
		uint64_t h = whash(w);
		size_t at;
		if (!find(c, w, h, &at)) {
			struct qm_kcache_ent *e = &c->ents[c->n];
			memcpy(e->w, w, sizeof(e->w));
			e->len = (uint32_t)idlen;
			e->row = row;
			e->count = 0;
			c->slots[at] = KC_TAG(h) | (uint32_t)++c->n;
		}
	}
	return row != KC_SKIP;
}

#define KC_RUN 32  /* keys delimited (identity, count, hash) before any is looked up */
#define KC_AHEAD 8 /* then each one's entry fetched this many keys ahead */

int qm_kcache_sum_block(struct qm_kcache *c, struct kset *ks, const uint8_t *p, size_t len,
			const struct query_filter *f, uint64_t first, bool *damaged)
{
	struct {
		uint64_t w[QM_KCACHE_WORDS], h, count;
		size_t off, idlen; /* idlen 0: not cacheable (decoded each time) */
	} run[KC_RUN];
	size_t off = 0;
	uint64_t n = 0; /* keys kept: the next one's place in the block (first + n) */
	*damaged = false;
	while (off < len) {
		/* delimit up to KC_RUN keys: identity, count, hash */
		size_t m = 0;
		bool cut = false;
		while (m < KC_RUN && off < len) {
			size_t idlen = ident(p + off, len - off, run[m].w), cl = 0;
			if (idlen && idlen < len - off) {
				const uint8_t *q = p + off + idlen;
				cl = *q < 0x80 ? (run[m].count = *q, 1) : get_var(q, len - off - idlen, &run[m].count);
			}
			if (!cl) { /* decoded the plain way, which says whether it is damaged */
				run[m].idlen = 0;
				run[m].h = 0; /* read by the prefetch below (harmless, but never unset) */
				run[m++].off = off;
				cut = true;
				break;
			}
			run[m].idlen = idlen;
			run[m].off = off;
			run[m].h = whash(run[m].w);
			off += idlen + cl;
			m++;
		}
		for (size_t i = 0; i < m; i++) {
			if (i + KC_AHEAD < m && c->cap) { /* the entry of a key ahead, its slot fetched by now */
				uint64_t s = c->slots[run[i + KC_AHEAD].h & (c->cap - 1)];
				if (s)
					__builtin_prefetch(&c->ents[(uint32_t)s - 1]);
			}
			size_t at;
			struct qm_kcache_ent *e = run[i].idlen && c->cap ? find(c, run[i].w, run[i].h, &at) : NULL;
			if (e) { /* met before: its count summed in its entry (qm_kcache_flush) */
				if (e->row == KC_SKIP)
					continue;
				uint64_t cnt = run[i].count;
				sat_inc_u64(&e->count, cnt > VALIDATE_MAX_SAMPLE_COUNT ? VALIDATE_MAX_SAMPLE_COUNT : cnt);
				n++;
				continue;
			}
			size_t used;
			int rc = plain_key(c, ks, p + run[i].off, len - run[i].off, f, first + n, run[i].w,
					   run[i].idlen, &used);
			if (rc == -EBADMSG) {
				*damaged = true;
				return 0;
			}
			if (rc < 0)
				return rc;
			n += (uint64_t)rc;
			if (cut && i + 1 == m) /* the key delimited the plain way: the next one after it */
				off = run[i].off + used;
		}
	}
	return 0;
}
