/* The engine's per-byte last-writer table: slow paths (regions, slot
 * arrays and their arena, insertion, split words). Layout and hot paths:
 * edag_mem.h. */
#include "edag/edag_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SPLITS0 = 16 };

#define HUGE_PAGE ((size_t)2 << 20)

/* ---------------------------------------------------------------- slot arrays */

static unsigned size_class(uint32_t cap)
{
	return (unsigned)__builtin_ctz(cap) - 2; /* 4 -> 0 ... 64 -> 4 */
}

/* Arena chunk i: 64 KiB, 256 KiB, 1 MiB, then EDAG_CHUNK (a small trace stays small). */
static size_t chunk_bytes(size_t i)
{
	return i < 3 ? ((size_t)64 << 10) << (2 * i) : EDAG_CHUNK;
}

static struct edag_rec *slots_alloc(struct edag_mtab *t, uint32_t cap)
{
	unsigned c = size_class(cap);
	struct edag_rec *p = t->free_list[c];
	if (p) {
		t->free_list[c] = (struct edag_rec *)(uintptr_t)p->id;
		return p;
	}
	size_t bytes = cap * sizeof(struct edag_rec);
	if (t->cur < t->nchunk && t->cur_used + bytes > chunk_bytes(t->cur)) {
		t->cur++;
		t->cur_used = 0;
	}
	if (t->cur == t->nchunk) {
		if (t->nchunk == t->capchunk) {
			size_t ncap = t->capchunk ? 2 * t->capchunk : 16;
			void *q = realloc(t->chunk, ncap * sizeof(*t->chunk));
			if (!q)
				return NULL;
			t->chunk = q;
			t->capchunk = ncap;
		}
		size_t cb = chunk_bytes(t->nchunk);
		char *ch = aligned_alloc(cb >= HUGE_PAGE ? HUGE_PAGE : 64, cb);
		if (!ch)
			return NULL;
		if (cb >= HUGE_PAGE)
			madvise(ch, cb, MADV_HUGEPAGE);
		t->chunk[t->nchunk++] = ch;
		t->cur_used = 0;
	}
	p = (struct edag_rec *)(t->chunk[t->cur] + t->cur_used);
	t->cur_used += bytes;
	return p;
}

static void slots_release(struct edag_mtab *t, struct edag_rec *p, uint32_t cap)
{
	unsigned c = size_class(cap);
	p->id = (uint64_t)(uintptr_t)t->free_list[c];
	t->free_list[c] = p;
}

/* ---------------------------------------------------------------- regions */

enum { REGIONS0 = 16 };

static int index_alloc(struct edag_mtab *t, size_t cap)
{
	t->idx = calloc(cap, sizeof(struct edag_region));
	if (!t->idx)
		return -ENOMEM;
	t->cap = cap;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap);
	return 0;
}

int edag_mtab_init(struct edag_mtab *t)
{
	memset(t, 0, sizeof(*t));
	return index_alloc(t, REGIONS0);
}

void edag_mtab_free(struct edag_mtab *t)
{
	for (size_t i = 0; t->idx && i < t->cap; i++)
		free(t->idx[i].page);
	for (size_t i = 0; i < t->nchunk; i++)
		free(t->chunk[i]);
	free(t->chunk);
	free(t->idx);
	free(t->sp);
	memset(t, 0, sizeof(*t));
}

void edag_mtab_clear(struct edag_mtab *t)
{
	for (size_t i = 0; i < t->cap; i++)
		if (t->idx[i].page)
			memset(t->idx[i].page, 0, EDAG_REGION_PAGES * sizeof(struct edag_pent));
	t->used = t->words = 0;
	t->epoch++;
	memset(t->free_list, 0, sizeof(t->free_list));
	t->cur = t->cur_used = 0; /* the chunks are reused */
	t->nsp = t->free_sp = t->splits = 0;
}

size_t edag_mtab_bytes(const struct edag_mtab *t)
{
	size_t b = t->cap * sizeof(struct edag_region) +
		   t->nreg * EDAG_REGION_PAGES * sizeof(struct edag_pent) + t->capsp * sizeof(t->sp[0]);
	for (size_t i = 0; i < t->nchunk; i++)
		b += chunk_bytes(i);
	return b;
}

struct edag_pent *edag_mtab_region_probe(struct edag_mtab *t, uint64_t key)
{
	size_t j = edag_mtab_home(t, key);
	for (;;) {
		const struct edag_region *r = &t->idx[j];
		if (r->key == key) {
			t->tlb[key & (EDAG_TLB - 1)] = *r;
			return r->page;
		}
		if (!r->key)
			return NULL;
		j = (j + 1) & (t->cap - 1);
	}
}

static int index_grow(struct edag_mtab *t)
{
	struct edag_region *o = t->idx;
	size_t ocap = t->cap;
	if (index_alloc(t, ocap * 2) < 0) {
		t->idx = o;
		return -ENOMEM;
	}
	for (size_t i = 0; i < ocap; i++) {
		if (!o[i].key)
			continue;
		size_t j = edag_mtab_home(t, o[i].key);
		while (t->idx[j].key)
			j = (j + 1) & (t->cap - 1);
		t->idx[j] = o[i];
	}
	free(o);
	return 0;
}

/* The entry of word's page, its region created (empty) if absent. */
static struct edag_pent *page_get(struct edag_mtab *t, uint64_t word)
{
	struct edag_pent *e = edag_mtab_page(t, word);
	if (e)
		return e;
	uint64_t key = (word >> (EDAG_PAGE_SHIFT + EDAG_REGION_SHIFT)) + 1;
	if ((t->nreg + 1) * 2 > t->cap && index_grow(t) < 0)
		return NULL;
	struct edag_pent *p = calloc(EDAG_REGION_PAGES, sizeof(*p));
	if (!p)
		return NULL;
	size_t j = edag_mtab_home(t, key);
	while (t->idx[j].key)
		j = (j + 1) & (t->cap - 1);
	t->idx[j] = (struct edag_region){.key = key, .page = p};
	t->nreg++;
	t->tlb[key & (EDAG_TLB - 1)] = t->idx[j];
	return &p[(word >> EDAG_PAGE_SHIFT) & (EDAG_REGION_PAGES - 1)];
}

/* Size of the sparse array holding n slots (n >= 1): 4, 8, 16 or 32. */
static uint32_t sparse_cap(unsigned n)
{
	return n <= 4 ? 4 : 1u << (32 - __builtin_clz(n - 1));
}

struct edag_rec *edag_mtab_insert(struct edag_mtab *t, uint64_t word)
{
	struct edag_pent *e = page_get(t, word);
	if (!e)
		return NULL;
	unsigned i = (unsigned)(word & (EDAG_PAGE_WORDS - 1));
	uint64_t b = 1ull << i;
	struct edag_rec *a = (struct edag_rec *)(e->rec & ~(uintptr_t)1);
	if (e->rec & 1) { /* dense: the slot is there */
		memset(&a[i], 0, sizeof(a[0]));
		e->bits |= b;
		t->words++;
		return &a[i];
	}
	unsigned n = edag_popcount(e->bits);
	if (n == 0 || (n >= 4 && sparse_cap(n) == n)) { /* full (or none yet) */
		uint32_t ncap = n == 0 ? 4 : n < EDAG_SPARSE_MAX ? 2 * n : EDAG_PAGE_WORDS;
		struct edag_rec *p = slots_alloc(t, ncap);
		if (!p)
			return NULL;
		if (n == 0) {
			t->used++;
		} else {
			if (ncap == EDAG_PAGE_WORDS) { /* becomes dense: slot of word w = p[w] */
				memset(p, 0, EDAG_PAGE_WORDS * sizeof(*p));
				uint64_t bits = e->bits;
				for (unsigned k = 0; k < n; k++, bits &= bits - 1)
					p[__builtin_ctzll(bits)] = a[k];
			} else {
				memcpy(p, a, n * sizeof(*p));
			}
			slots_release(t, a, n); /* n == its size */
			t->epoch++;		/* the slots moved */
		}
		e->rec = (uintptr_t)p | (ncap == EDAG_PAGE_WORDS);
		a = p;
		if (ncap == EDAG_PAGE_WORDS) {
			e->bits |= b;
			t->words++;
			return &a[i]; /* zeroed above */
		}
	}
	unsigned at = edag_popcount(e->bits & (b - 1));
	if (at < n) {
		memmove(&a[at + 1], &a[at], (n - at) * sizeof(a[0]));
		t->epoch++;
	}
	memset(&a[at], 0, sizeof(a[0]));
	e->bits |= b;
	t->words++;
	return &a[at];
}

int edag_mtab_reserve_splits(struct edag_mtab *t, size_t n)
{
	if (t->nsp + n <= t->capsp)
		return 0;
	size_t ncap = t->capsp ? t->capsp : SPLITS0;
	while (ncap < t->nsp + n)
		ncap *= 2;
	void *p = realloc(t->sp, ncap * sizeof(t->sp[0]));
	if (!p)
		return -ENOMEM;
	t->sp = p;
	t->capsp = ncap;
	return 0;
}

void edag_mtab_split(struct edag_mtab *t, struct edag_rec *w)
{
	size_t k;
	if (t->free_sp) {
		k = t->free_sp - 1;
		t->free_sp = (size_t)t->sp[k][0].finish;
	} else {
		k = t->nsp++;
	}
	struct edag_rec u = *w;
	u.id &= EDAG_REC_ID;
	for (unsigned i = 0; i < 8; i++)
		t->sp[k][i] = u;
	w->id |= EDAG_REC_SPLIT;
	w->finish = k;
	t->splits++;
}

void edag_mtab_unsplit(struct edag_mtab *t, struct edag_rec *w)
{
	size_t k = (size_t)w->finish;
	t->sp[k][0].finish = t->free_sp;
	t->free_sp = k + 1;
	w->id &= ~EDAG_REC_SPLIT;
	t->splits--;
}
