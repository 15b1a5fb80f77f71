/* The engine's per-byte last-writer table: slow paths (index probes and
 * growth, slot insertion, split words). Layout and hot paths: edag_mem.h. */
#include "edag/edag_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SLOTS0 = 64, SPLITS0 = 16 };

#define HUGE_PAGE ((size_t)2 << 20)

/* Never matches (keys are >= 1): what TLB entries point to when empty. */
static const struct edag_pent no_page;

/* The index: transparent huge pages where the kernel allows (random
 * probes, far fewer TLB misses). Zeroed. */
static void *big_calloc(size_t n, size_t elem)
{
	size_t bytes = n * elem;
	if (bytes >= 2 * HUGE_PAGE) {
		size_t round = (bytes + HUGE_PAGE - 1) & ~(HUGE_PAGE - 1); /* C11: a multiple */
		void *p = aligned_alloc(HUGE_PAGE, round);
		if (p) {
			madvise(p, round, MADV_HUGEPAGE);
			memset(p, 0, bytes);
		}
		return p;
	}
	return calloc(n, elem);
}

/* ---------------------------------------------------------------- slot arrays */

static unsigned size_class(uint32_t cap)
{
	return (unsigned)__builtin_ctz(cap) - 2; /* 4 -> 0 ... 64 -> 4 */
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
	if (t->cur < t->nchunk && t->cur_used + bytes > EDAG_CHUNK) {
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
		char *ch = aligned_alloc(HUGE_PAGE, EDAG_CHUNK);
		if (!ch)
			return NULL;
		madvise(ch, EDAG_CHUNK, MADV_HUGEPAGE);
		t->chunk[t->nchunk++] = ch;
		t->cur_used = 0;
	}
	p = (struct edag_rec *)(t->chunk[t->cur] + t->cur_used);
	t->cur_used += bytes;
	t->slot_bytes += bytes;
	return p;
}

static void slots_release(struct edag_mtab *t, struct edag_rec *p, uint32_t cap)
{
	unsigned c = size_class(cap);
	p->id = (uint64_t)(uintptr_t)t->free_list[c];
	t->free_list[c] = p;
}

/* ---------------------------------------------------------------- index */

static void tlb_clear(struct edag_mtab *t)
{
	for (unsigned i = 0; i < EDAG_TLB; i++)
		t->tlb[i] = (struct edag_pent *)&no_page; /* only ever read */
}

static int index_alloc(struct edag_mtab *t, size_t cap)
{
	t->idx = big_calloc(cap, sizeof(struct edag_pent));
	if (!t->idx)
		return -ENOMEM;
	t->cap = cap;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap);
	tlb_clear(t);
	return 0;
}

int edag_mtab_init(struct edag_mtab *t)
{
	memset(t, 0, sizeof(*t));
	return index_alloc(t, SLOTS0);
}

void edag_mtab_free(struct edag_mtab *t)
{
	for (size_t i = 0; i < t->nchunk; i++)
		free(t->chunk[i]);
	free(t->chunk);
	free(t->idx);
	free(t->sp);
	memset(t, 0, sizeof(*t));
}

void edag_mtab_clear(struct edag_mtab *t)
{
	memset(t->idx, 0, t->cap * sizeof(struct edag_pent));
	tlb_clear(t);
	t->used = t->words = t->slot_bytes = 0;
	t->epoch++;
	memset(t->free_list, 0, sizeof(t->free_list));
	t->cur = t->cur_used = 0; /* the chunks are reused */
	t->nsp = t->free_sp = t->splits = 0;
}

size_t edag_mtab_bytes(const struct edag_mtab *t)
{
	return t->cap * sizeof(struct edag_pent) + t->nchunk * EDAG_CHUNK + t->capsp * sizeof(t->sp[0]);
}

struct edag_pent *edag_mtab_probe(struct edag_mtab *t, uint64_t key)
{
	size_t j = edag_mtab_home(t, key);
	for (;;) {
		struct edag_pent *e = &t->idx[j];
		if (e->key == key) {
			t->tlb[key & (EDAG_TLB - 1)] = e;
			return e;
		}
		if (!e->key)
			return NULL;
		j = (j + 1) & (t->cap - 1);
	}
}

static int index_grow(struct edag_mtab *t)
{
	struct edag_mtab o = *t;
	if (index_alloc(t, o.cap * 2) < 0) {
		*t = o;
		return -ENOMEM;
	}
	for (size_t i = 0; i < o.cap; i++) {
		if (!o.idx[i].key)
			continue;
		size_t j = edag_mtab_home(t, o.idx[i].key);
		while (t->idx[j].key)
			j = (j + 1) & (t->cap - 1);
		t->idx[j] = o.idx[i];
	}
	free(o.idx);
	return 0;
}

/* The entry of page key, created (no words) if absent. */
static struct edag_pent *page_get(struct edag_mtab *t, uint64_t key)
{
	struct edag_pent *e = edag_mtab_page(t, key);
	if (e)
		return e;
	if ((t->used + 1) * 2 > t->cap && index_grow(t) < 0)
		return NULL;
	size_t j = edag_mtab_home(t, key);
	while (t->idx[j].key)
		j = (j + 1) & (t->cap - 1);
	e = &t->idx[j];
	e->key = key;
	t->used++;
	t->tlb[key & (EDAG_TLB - 1)] = e;
	return e;
}

struct edag_rec *edag_mtab_insert(struct edag_mtab *t, uint64_t word)
{
	struct edag_pent *e = page_get(t, (word >> EDAG_PAGE_SHIFT) + 1);
	if (!e)
		return NULL;
	unsigned i = (unsigned)(word & (EDAG_PAGE_WORDS - 1));
	uint64_t b = 1ull << i;
	unsigned n = edag_popcount(e->bits);
	if (e->cap == EDAG_PAGE_WORDS) { /* dense: the slot is there */
		memset(&e->rec[i], 0, sizeof(e->rec[0]));
		e->bits |= b;
		t->words++;
		return &e->rec[i];
	}
	if (n == e->cap) {
		uint32_t ncap = !e->cap ? 4 : e->cap < EDAG_SPARSE_MAX ? 2 * e->cap : EDAG_PAGE_WORDS;
		struct edag_rec *p = slots_alloc(t, ncap);
		if (!p)
			return NULL;
		if (ncap == EDAG_PAGE_WORDS) { /* becomes dense: slot of word w = p[w] */
			memset(p, 0, EDAG_PAGE_WORDS * sizeof(*p));
			uint64_t bits = e->bits;
			for (unsigned k = 0; k < n; k++, bits &= bits - 1)
				p[__builtin_ctzll(bits)] = e->rec[k];
		} else if (n) {
			memcpy(p, e->rec, n * sizeof(*p));
		}
		if (e->cap) { /* the slots moved */
			slots_release(t, e->rec, e->cap);
			t->epoch++;
		}
		e->rec = p;
		e->cap = ncap;
		if (ncap == EDAG_PAGE_WORDS) {
			e->bits |= b;
			t->words++;
			return &p[i]; /* zeroed above */
		}
	}
	unsigned at = edag_popcount(e->bits & (b - 1));
	if (at < n) {
		memmove(&e->rec[at + 1], &e->rec[at], (n - at) * sizeof(e->rec[0]));
		t->epoch++;
	}
	memset(&e->rec[at], 0, sizeof(e->rec[0]));
	e->bits |= b;
	t->words++;
	return &e->rec[at];
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
