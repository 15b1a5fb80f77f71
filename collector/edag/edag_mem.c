/* The engine's per-byte last-writer table: slow paths (growth, insertion,
 * split words). Layout and hot paths: edag_mem.h. */
#include "edag/edag_mem.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

enum { SLOTS0 = 64, SPLITS0 = 16 };

#define HUGE_PAGE (2u << 20)

/* Big arrays: transparent huge pages where the kernel allows (random
 * probes, far fewer TLB misses). */
static void *big_calloc(size_t n, size_t elem)
{
	size_t bytes = n * elem;
	if (bytes >= 2 * HUGE_PAGE) {
		size_t round = (bytes + HUGE_PAGE - 1) & ~(size_t)(HUGE_PAGE - 1); /* C11: a multiple */
		void *p = aligned_alloc(HUGE_PAGE, round);
		if (p) {
			madvise(p, round, MADV_HUGEPAGE);
			memset(p, 0, bytes);
		}
		return p;
	}
	return calloc(n, elem);
}

static int arrays_alloc(struct edag_mtab *t, size_t cap)
{
	t->e = big_calloc(cap, sizeof(struct edag_ment));
	if (!t->e)
		return -ENOMEM;
	t->cap = cap;
	t->shift = 64 - (unsigned)__builtin_ctzll(cap) + 3;
	return 0;
}

int edag_mtab_init(struct edag_mtab *t)
{
	memset(t, 0, sizeof(*t));
	return arrays_alloc(t, SLOTS0);
}

void edag_mtab_free(struct edag_mtab *t)
{
	free(t->e);
	free(t->sp);
	memset(t, 0, sizeof(*t));
}

void edag_mtab_clear(struct edag_mtab *t)
{
	memset(t->e, 0, t->cap * sizeof(struct edag_ment));
	t->used = t->nsp = t->free_sp = t->splits = 0;
}

size_t edag_mtab_bytes(const struct edag_mtab *t)
{
	return t->cap * sizeof(struct edag_ment) + t->capsp * sizeof(t->sp[0]);
}

int edag_mtab_grow(struct edag_mtab *t)
{
	struct edag_mtab o = *t;
	if (arrays_alloc(t, o.cap * 2) < 0) {
		*t = o;
		return -ENOMEM;
	}
	for (size_t i = 0; i < o.cap; i++) {
		if (!o.e[i].key)
			continue;
		size_t j = edag_mtab_home(t, o.e[i].key - 1);
		while (t->e[j].key)
			j = (j + 1) & (t->cap - 1);
		t->e[j] = o.e[i];
	}
	free(o.e);
	return 0;
}

struct edag_rec *edag_mtab_insert(struct edag_mtab *t, uint64_t word)
{
	if ((t->used + 1) * 2 > t->cap && edag_mtab_grow(t) < 0)
		return NULL;
	size_t j = edag_mtab_home(t, word);
	while (t->e[j].key)
		j = (j + 1) & (t->cap - 1);
	t->e[j].key = word + 1;
	memset(&t->e[j].rec, 0, sizeof(t->e[j].rec));
	t->used++;
	return &t->e[j].rec;
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
