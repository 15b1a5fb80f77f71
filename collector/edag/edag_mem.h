/* Internal to collector/edag: the per-byte last-writer (and last-reader)
 * table of the streaming engine, built for the hot path and for large
 * working sets.
 *
 * Layout: page-grouped, under a radix. Addresses are cut into pages of 64
 * 8-byte words (512 bytes) and regions of 1024 pages (512 KiB). A touched
 * region gets a dense array of 1024 16-byte page entries (16 KiB), found
 * through a small open-addressing hash of regions with a direct-mapped
 * cache of 256 regions in front (a software "TLB": a 128 MiB working set
 * never leaves it, so the hot path has no hash probe and no key compare).
 * A page entry is a 64-bit bitmap of the words of the page that have a
 * slot and a pointer to their slots: sparse, the slots of those words in
 * word order (slot of word i = array[popcount(bitmap & below i)]) in an
 * array of 4, 8, 16 or 32; past 32 words, dense (64 slots, slot of word i =
 * array[i]: no popcount, insertions move nothing). The arrays come from an
 * arena of chunks (64 KiB, 256 KiB, 1 MiB, then 4 MiB ones on transparent
 * huge pages where the kernel allows: random slot accesses would miss the
 * TLB) with a free list per size.
 * Memory is 32 bytes per touched word in sparse pages (plus at most as much
 * again of slack), 2 KiB per dense page, plus 16 KiB per touched region;
 * no hashing of single words (the previous layout, one hashed 40-byte
 * key+record slot per word at load <= 1/2, took 80-160 bytes per word and
 * a full rehash of every record on growth; on this VM first-touching memory
 * costs 1-3 s of system time per GiB, so bytes are time).
 * Sequential words are adjacent slots (the hardware prefetcher follows); a
 * random access costs one page entry and one slot line, both prefetched
 * ahead by edag_step_batch in two stages.
 *
 * Slots move (an insertion into a sparse page shifts its later slots,
 * growth reallocates the array): a slot pointer is valid until the next
 * insertion into its table; `epoch` counts the insertions that moved slots,
 * so a caller can tell.
 *
 * A word slot holds its bytes' shared record while they all have the same
 * one (the common case); when they do not, it points to 8 per-byte records
 * in a split pool (recycled through a free list). Word record flags live in
 * the top bits of its id (vertex ids are < 2^55): bits 56..63 = bytes of
 * the word that have a record, bit 55 = split (then `finish` is the index
 * of its 8 per-byte records in the split pool).
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

#define EDAG_PAGE_SHIFT 6 /* log2 words per page */
#define EDAG_PAGE_WORDS 64
#define EDAG_REGION_SHIFT 10 /* log2 pages per region (512 KiB of addresses) */
#define EDAG_REGION_PAGES (1u << EDAG_REGION_SHIFT)
#define EDAG_TLB 256
#define EDAG_SPARSE_MAX 32	     /* largest sparse slot array; then dense */
#define EDAG_NSIZES 5		     /* slot-array sizes: 4, 8, 16, 32 (sparse), 64 (dense) */
#define EDAG_CHUNK ((size_t)4 << 20) /* largest arena chunk */

/* One page: words with a slot (bit i = word i of the page) and their slots.
 * rec: the slot array, bit 0 set when dense (64 slots, slot of word i =
 * [i]); sparse, popcount(bits) slots in word order in an array of the
 * smallest size of 4, 8, 16, 32 that holds them. */
struct edag_pent {
	uint64_t bits;
	uintptr_t rec;
};

/* A region: EDAG_REGION_PAGES page entries, all allocated at its first word. */
struct edag_region {
	uint64_t key; /* region (word >> (EDAG_PAGE_SHIFT + EDAG_REGION_SHIFT)) + 1, 0 = empty */
	struct edag_pent *page;
};

struct edag_mtab {
	struct edag_region *idx;		 /* regions: open addressing, load <= 1/2 */
	size_t cap, nreg;			 /* index slots (a power of two, >= 16), regions */
	unsigned shift;				 /* 64 - log2(cap) */
	size_t used, words;			 /* pages with words, words with a slot */
	uint64_t epoch;				 /* insertions that moved slots so far */
	struct edag_region tlb[EDAG_TLB];	 /* copies of recently used regions (key & (EDAG_TLB - 1)) */
	struct edag_rec *free_list[EDAG_NSIZES]; /* freed slot arrays by size (linked through .id) */
	char **chunk;				 /* slot-array arena (chunk sizes: edag_mem.c) */
	size_t nchunk, capchunk, cur, cur_used;	 /* chunks, capacity of chunk[], chunk in use, bytes used */
	struct edag_rec (*sp)[8];		 /* split words: 8 per-byte records each */
	size_t nsp, capsp;			 /* high-water mark, capacity */
	size_t free_sp;				 /* free list head + 1 (linked through [0].finish) */
	size_t splits;				 /* split words now */
};

int edag_mtab_init(struct edag_mtab *t);
void edag_mtab_free(struct edag_mtab *t);
/* Forget every word (regions and the arena are kept for reuse). */
void edag_mtab_clear(struct edag_mtab *t);
/* Bytes the table holds now (regions, arena, split pool). */
size_t edag_mtab_bytes(const struct edag_mtab *t);
/* Slow paths of the inline functions below. */
struct edag_pent *edag_mtab_region_probe(struct edag_mtab *t, uint64_t key);
struct edag_rec *edag_mtab_insert(struct edag_mtab *t, uint64_t word);
/* Make room for n more split words (so setting bytes cannot fail halfway). */
int edag_mtab_reserve_splits(struct edag_mtab *t, size_t n);
/* Split word w (its record becomes 8 per-byte copies); room must be reserved. */
void edag_mtab_split(struct edag_mtab *t, struct edag_rec *w);
/* Return a split word's per-byte records to the pool (w keeps no record). */
void edag_mtab_unsplit(struct edag_mtab *t, struct edag_rec *w);

/* Index slot where the probe for region key starts. */
static inline size_t edag_mtab_home(const struct edag_mtab *t, uint64_t key)
{
	return (size_t)((key * 0x9e3779b97f4a7c15ull) >> t->shift);
}

/* Page entries of the region of word (through the TLB), NULL if it has none. */
static inline struct edag_pent *edag_mtab_region(struct edag_mtab *t, uint64_t word)
{
	uint64_t key = (word >> (EDAG_PAGE_SHIFT + EDAG_REGION_SHIFT)) + 1;
	const struct edag_region *r = &t->tlb[key & (EDAG_TLB - 1)];
	if (__builtin_expect(r->key == key, 1))
		return r->page;
	return edag_mtab_region_probe(t, key);
}

/* Entry of word's page, NULL if its region has none. */
static inline struct edag_pent *edag_mtab_page(struct edag_mtab *t, uint64_t word)
{
	struct edag_pent *p = edag_mtab_region(t, word);
	return p ? &p[(word >> EDAG_PAGE_SHIFT) & (EDAG_REGION_PAGES - 1)] : NULL;
}

/* Bits set in x (a libgcc call without -mpopcnt: SWAR instead). */
static inline unsigned edag_popcount(uint64_t x)
{
#if defined(__POPCNT__) || defined(__aarch64__)
	return (unsigned)__builtin_popcountll(x);
#else
	x = x - ((x >> 1) & 0x5555555555555555ull);
	x = (x & 0x3333333333333333ull) + ((x >> 2) & 0x3333333333333333ull);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0full;
	return (unsigned)((x * 0x0101010101010101ull) >> 56);
#endif
}

/* Slot of word i of page e, NULL if the word has none. */
static inline struct edag_rec *edag_page_slot(const struct edag_pent *e, unsigned i)
{
	uint64_t b = 1ull << i;
	if (!(e->bits & b))
		return NULL;
	struct edag_rec *a = (struct edag_rec *)(e->rec & ~(uintptr_t)1);
	if (e->rec & 1) /* dense */
		return &a[i];
	return &a[edag_popcount(e->bits & (b - 1))];
}

/* The slot of word (address >> 3), NULL if it has none. */
static inline struct edag_rec *edag_mtab_find(struct edag_mtab *t, uint64_t word)
{
	struct edag_pent *e = edag_mtab_page(t, word);
	return e ? edag_page_slot(e, (unsigned)(word & (EDAG_PAGE_WORDS - 1))) : NULL;
}

/* The slot of word, created (empty) if absent; NULL on ENOMEM. Creating
 * may move slots of the same page: slot pointers held from before are
 * stale if t->epoch changed. */
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

/* Stage 1 (far ahead): start loading the page entry of addr (its region
 * through the TLB, else the region hash, which is small and cached). */
static inline void edag_mtab_prefetch_index(struct edag_mtab *t, uint64_t addr)
{
	uint64_t word = addr >> 3;
	struct edag_pent *p = edag_mtab_region(t, word);
	if (p)
		edag_prefetch(&p[(word >> EDAG_PAGE_SHIFT) & (EDAG_REGION_PAGES - 1)]);
}

/* Stage 2 (nearer): addr's word slot (NULL if none yet), whose line starts
 * loading. Valid while t->epoch does not change. */
static inline struct edag_rec *edag_mtab_prefetch(struct edag_mtab *t, uint64_t addr)
{
	struct edag_rec *r = edag_mtab_find(t, addr >> 3);
	if (r)
		edag_prefetch(r);
	return r;
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
