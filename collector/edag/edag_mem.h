/* Internal to collector/edag: the per-byte last-writer (and last-reader)
 * table of the streaming engine, built for the hot path.
 *
 * Layout. One 40-byte entry (key and word record) per touched 8-byte word,
 * in an open-addressing table (linear probing, multiplicative hash,
 * power-of-two capacity, load <= 1/2). The hash keeps the 8 words of a
 * 64-byte granule in 8 adjacent slots (5 CPU cache lines), so streaming
 * accesses walk the table sequentially and a random access touches one or
 * two adjacent lines, whose address the hash alone gives (edag_step_batch
 * prefetches them ahead). (Keys and records in two arrays measured slower:
 * two lines far apart per access.) A word record holds its bytes'
 * shared record while they all have the same one (the common case); when
 * they do not, it points to 8 per-byte records in a split pool (recycled
 * through a free list).
 *
 * Word record flags live in the top bits of its id (vertex ids are < 2^55):
 * bits 56..63 = bytes of the word that have a record, bit 55 = split
 * (then `finish` is the index of its 8 per-byte records in the split pool).
 * Memory: O(touched words + split words), never O(trace length). */
#ifndef COLLECTOR_EDAG_EDAG_MEM_H
#define COLLECTOR_EDAG_EDAG_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What a vertex leaves behind for its successors. id = vertex index + 1, 0 = none. */
struct edag_rec {
	uint64_t id;
	uint64_t finish; /* longest path, cost */
	uint64_t comp;	 /* non-memory cost on that path */
	uint32_t depth;	 /* memory depth (saturates at 2^32-1) */
	uint32_t path;	 /* longest path, vertices (saturates likewise) */
};

#define EDAG_REC_ID ((1ull << 55) - 1)
#define EDAG_REC_SPLIT (1ull << 55)
#define EDAG_REC_MASK_SHIFT 56
struct edag_ment {
	uint64_t key; /* word (address >> 3) + 1, 0 = empty */
	struct edag_rec rec;
};

struct edag_mtab {
	struct edag_ment *e;
	size_t cap, used;     /* slots (a power of two, >= 64), used slots */
	unsigned shift;	      /* 64 - log2(cap) + 3 */
	struct edag_rec (*sp)[8]; /* split words: 8 per-byte records each */
	size_t nsp, capsp;	  /* high-water mark, capacity */
	size_t free_sp;		  /* free list head + 1 (linked through [0].finish) */
	size_t splits;		  /* split words now */
};

int edag_mtab_init(struct edag_mtab *t);
void edag_mtab_free(struct edag_mtab *t);
/* Forget every granule (the arrays are kept for reuse). */
void edag_mtab_clear(struct edag_mtab *t);
/* Bytes the table holds now. */
size_t edag_mtab_bytes(const struct edag_mtab *t);
/* Slow paths of the inline functions below. */
int edag_mtab_grow(struct edag_mtab *t);
struct edag_rec *edag_mtab_insert(struct edag_mtab *t, uint64_t word);
/* Make room for n more split words (so setting bytes cannot fail halfway). */
int edag_mtab_reserve_splits(struct edag_mtab *t, size_t n);
/* Split word w (its record becomes 8 per-byte copies); room must be reserved. */
void edag_mtab_split(struct edag_mtab *t, struct edag_rec *w);
/* Return a split word's per-byte records to the pool (w keeps no record). */
void edag_mtab_unsplit(struct edag_mtab *t, struct edag_rec *w);

/* Home slot of word: the 8 words of a 64-byte granule share a run of 8 slots. */
static inline size_t edag_mtab_home(const struct edag_mtab *t, uint64_t word)
{
	return (size_t)((((word >> 3) * 0x9e3779b97f4a7c15ull) >> t->shift) << 3 | (word & 7));
}

/* The record of word (address >> 3), NULL if it has none. */
static inline struct edag_rec *edag_mtab_find(const struct edag_mtab *t, uint64_t word)
{
	size_t j = edag_mtab_home(t, word);
	for (;;) {
		uint64_t k = t->e[j].key;
		if (k == word + 1)
			return &t->e[j].rec;
		if (!k)
			return NULL;
		j = (j + 1) & (t->cap - 1);
	}
}

/* The record of word, created (empty) if absent; NULL on ENOMEM. Creating
 * may move every record of t: record pointers held from before are stale. */
static inline struct edag_rec *edag_mtab_get(struct edag_mtab *t, uint64_t word)
{
	struct edag_rec *r = edag_mtab_find(t, word);
	return r ? r : edag_mtab_insert(t, word);
}

/* GCC 12 (-O2) deletes __builtin_prefetch here as dead code (tree DCE):
 * on x86 issue the instruction ourselves. */
static inline void edag_prefetch(const void *p)
{
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("prefetcht0 %0" : : "m"(*(const char *)p));
#else
	__builtin_prefetch(p);
#endif
}

/* Start loading the lines of the home slot of addr's word. */
static inline void edag_mtab_prefetch(const struct edag_mtab *t, uint64_t addr)
{
	const char *p = (const char *)&t->e[edag_mtab_home(t, addr >> 3)];
	edag_prefetch(p);
	edag_prefetch(p + sizeof(struct edag_ment) - 1);
}

/* Per-byte records of word w for bytes mask m (bit i = byte i). */
static inline uint8_t edag_word_mask(const struct edag_rec *w)
{
	return (uint8_t)(w->id >> EDAG_REC_MASK_SHIFT);
}

static inline struct edag_rec *edag_word_bytes(const struct edag_mtab *t, const struct edag_rec *w)
{
	return t->sp[w->finish];
}

/* Bytes m of word w get record r (an id without flags). */
static inline void edag_word_set(struct edag_mtab *t, struct edag_rec *w, uint8_t m, const struct edag_rec *r)
{
	uint8_t have = edag_word_mask(w);
	if ((have & (uint8_t)~m) == 0) { /* every present byte is overwritten: one record again */
		if (w->id & EDAG_REC_SPLIT)
			edag_mtab_unsplit(t, w);
		*w = *r;
		w->id |= (uint64_t)m << EDAG_REC_MASK_SHIFT;
		return;
	}
	if (!(w->id & EDAG_REC_SPLIT))
		edag_mtab_split(t, w);
	struct edag_rec *b = edag_word_bytes(t, w);
	for (unsigned i = 0; i < 8; i++)
		if (m & (1u << i))
			b[i] = *r;
	w->id |= (uint64_t)m << EDAG_REC_MASK_SHIFT;
}

/* Bytes m of word w lose their record. */
static inline void edag_word_clear(struct edag_mtab *t, struct edag_rec *w, uint8_t m)
{
	uint8_t left = edag_word_mask(w) & (uint8_t)~m;
	if (!left && (w->id & EDAG_REC_SPLIT))
		edag_mtab_unsplit(t, w);
	w->id = (w->id & ~(0xffull << EDAG_REC_MASK_SHIFT)) | (uint64_t)left << EDAG_REC_MASK_SHIFT;
}

#endif
