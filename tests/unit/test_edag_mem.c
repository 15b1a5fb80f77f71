/* Unit tests of the eDAG engine's last-writer table (collector/edag/edag_mem.*):
 * growth, lookups, split words and their free list, and the whole engine
 * against an independent per-byte reference (plus a timestamp LRU cache
 * model) on long random traces with unaligned accesses that straddle words
 * and 64-byte granules over a range wide enough to grow the table many times. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "edag/edag_mem.h"

static uint64_t rng;
static uint32_t rnd(void)
{
	rng = rng * 6364136223846793005ull + 1442695040888963407ull;
	return (uint32_t)(rng >> 33);
}

/* ---------------------------------------------------------------- the table itself */

static void test_edag_mtab_growth_and_lookup(void **state)
{
	(void)state;
	struct edag_mtab t;
	assert_int_equal(edag_mtab_init(&t), 0);
	size_t cap0 = t.cap;
	enum { N = 50000 };
	/* words spread over a wide range, with runs of neighbours (same page) */
	for (uint64_t i = 0; i < N; i++) {
		uint64_t word = (i / 5) * 977 + (i % 5);
		struct edag_rec *r = edag_mtab_get(&t, word);
		assert_non_null(r);
		assert_int_equal(edag_word_mask(r), 0); /* new words have no record */
		struct edag_rec self = {.id = i + 1, .finish = i * 3, .depth = (uint32_t)i};
		edag_word_set(&t, r, 0xff, &self);
	}
	assert_int_equal(t.words, N);
	assert_true(t.used >= N / 5 && t.used <= 2 * (N / 5)); /* a run spans one or two pages */
	/* 977-word strides over 50000 / 5 runs: ~ 10000 * 977 * 8 bytes / 512 KiB regions */
	assert_true(t.nreg >= 140 && t.nreg <= 160);
	assert_true(t.cap > cap0 && t.nreg * 2 <= t.cap); /* the region index grew, load <= 1/2 */
	for (uint64_t i = 0; i < N; i++) {
		uint64_t word = (i / 5) * 977 + (i % 5);
		const struct edag_rec *r = edag_mtab_find(&t, word);
		assert_non_null(r);
		assert_int_equal(r->id & EDAG_REC_ID, i + 1);
		assert_int_equal(r->finish, i * 3);
		assert_int_equal(edag_word_mask(r), 0xff);
	}
	assert_null(edag_mtab_find(&t, 5));	     /* a page that has words, but not this one */
	assert_null(edag_mtab_find(&t, 1ull << 60)); /* far away */
	assert_null(edag_mtab_find(&t, ~0ull));	     /* the last word there is */
	/* get of an existing word returns it, no new slot */
	assert_ptr_equal(edag_mtab_get(&t, 977), edag_mtab_find(&t, 977));
	assert_int_equal(t.words, N);
	size_t bytes = edag_mtab_bytes(&t);
	edag_mtab_clear(&t);
	assert_null(edag_mtab_find(&t, 0));
	assert_null(edag_mtab_find(&t, 977));
	assert_int_equal(t.words, 0);
	assert_int_equal(t.used, 0);
	assert_int_equal(edag_mtab_bytes(&t), bytes); /* index and arena kept for reuse */
	/* and reused: the same words again take no more memory */
	for (uint64_t i = 0; i < N; i++)
		assert_non_null(edag_mtab_get(&t, (i / 5) * 977 + (i % 5)));
	assert_int_equal(edag_mtab_bytes(&t), bytes);
	edag_mtab_free(&t);
}

/* One page filled in a scrambled order: sparse slots stay in word order
 * while they are inserted in between (epoch moves exactly when slots move),
 * then the page turns dense past EDAG_SPARSE_MAX words; every record
 * survives every step. */
static void test_edag_mtab_page_sparse_then_dense(void **state)
{
	(void)state;
	struct edag_mtab t;
	assert_int_equal(edag_mtab_init(&t), 0);
	const uint64_t page = 0x123456;
	unsigned order[EDAG_PAGE_WORDS];
	for (unsigned i = 0; i < EDAG_PAGE_WORDS; i++)
		order[i] = (i * 37 + 11) % EDAG_PAGE_WORDS; /* 37 is odd: a permutation */
	for (unsigned k = 0; k < EDAG_PAGE_WORDS; k++) {
		uint64_t word = page * EDAG_PAGE_WORDS + order[k];
		uint64_t e0 = t.epoch;
		const struct edag_pent *pe = edag_mtab_page(&t, word);
		unsigned n = pe ? edag_popcount(pe->bits) : 0;
		bool dense = pe && (pe->rec & 1);
		assert_int_equal(dense, n > EDAG_SPARSE_MAX);
		/* sparse arrays hold 4, 8, 16, 32: full at those counts */
		bool full = !dense && (n == 4 || n == 8 || n == 16 || n == 32);
		bool in_between = !dense && pe && (pe->bits >> order[k]) > 1;
		struct edag_rec *r = edag_mtab_get(&t, word);
		assert_non_null(r);
		assert_int_equal(edag_word_mask(r), 0);
		struct edag_rec self = {.id = 1000 + order[k], .finish = order[k], .comp = k};
		edag_word_set(&t, r, (uint8_t)(1u << (order[k] & 7)), &self);
		/* slots moved (growth, or an insertion before later words) exactly when epoch moved */
		assert_int_equal(t.epoch != e0, full || in_between);
		for (unsigned q = 0; q <= k; q++) {
			const struct edag_rec *x = edag_mtab_find(&t, page * EDAG_PAGE_WORDS + order[q]);
			assert_non_null(x);
			assert_int_equal(x->id & EDAG_REC_ID, 1000 + order[q]);
			assert_int_equal(x->finish, order[q]);
			assert_int_equal(x->comp, q);
			assert_int_equal(edag_word_mask(x), 1u << (order[q] & 7));
		}
	}
	assert_int_equal(t.words, EDAG_PAGE_WORDS);
	assert_int_equal(t.used, 1);
	assert_true(edag_mtab_page(&t, page * EDAG_PAGE_WORDS)->rec & 1); /* dense */
	/* neighbours' pages untouched */
	assert_null(edag_mtab_find(&t, page * EDAG_PAGE_WORDS - 1));
	assert_null(edag_mtab_find(&t, (page + 1) * EDAG_PAGE_WORDS));
	edag_mtab_free(&t);
}

static void test_edag_mtab_split_words(void **state)
{
	(void)state;
	struct edag_mtab t;
	assert_int_equal(edag_mtab_init(&t), 0);
	assert_int_equal(edag_mtab_reserve_splits(&t, 2), 0);
	struct edag_rec *w = edag_mtab_get(&t, 100);
	struct edag_rec a = {.id = 7, .finish = 70, .comp = 1, .depth = 2, .path = 3};
	struct edag_rec b = {.id = 9, .finish = 90, .comp = 4, .depth = 5, .path = 6};
	edag_word_set(&t, w, 0x0f, &a); /* bytes 0-3: one record, no split */
	assert_int_equal(t.splits, 0);
	assert_int_equal(edag_word_mask(w), 0x0f);
	edag_word_set(&t, w, 0x30, &b); /* bytes 4-5 by another writer: split */
	assert_int_equal(t.splits, 1);
	assert_true(w->id & EDAG_REC_SPLIT);
	assert_int_equal(edag_word_mask(w), 0x3f);
	const struct edag_rec *by = edag_word_bytes(&t, w);
	assert_int_equal(by[0].id, 7);
	assert_int_equal(by[3].finish, 70);
	assert_int_equal(by[4].id, 9);
	assert_int_equal(by[5].depth, 5);
	edag_word_clear(&t, w, 0x03); /* bytes 0-1 lose their record, still split */
	assert_int_equal(edag_word_mask(w), 0x3c);
	assert_int_equal(t.splits, 1);
	edag_word_set(&t, w, 0xff, &a); /* the whole word: one record again, split freed */
	assert_int_equal(t.splits, 0);
	assert_false(w->id & EDAG_REC_SPLIT);
	assert_int_equal(w->id & EDAG_REC_ID, 7);
	assert_int_equal(edag_word_mask(w), 0xff);
	/* the freed split is reused: the high-water mark does not move */
	size_t hw = t.nsp;
	for (int k = 0; k < 100; k++) {
		edag_word_set(&t, w, 0x01, &b);
		assert_int_equal(t.splits, 1);
		edag_word_clear(&t, w, 0xff);
		assert_int_equal(t.splits, 0);
		edag_word_set(&t, w, 0xff, &a);
	}
	assert_int_equal(t.nsp, hw);
	edag_mtab_free(&t);
}

/* ---------------------------------------------------------------- engine vs per-byte reference */

enum { SPAN = 1 << 18, BASE = 0x7f0000 }; /* addresses BASE .. BASE + SPAN */

struct ref_rec {
	uint64_t finish, comp;
	uint32_t depth, path;
	bool set;
};

struct ref {
	struct ref_rec reg[EDAG_NREGS];
	struct ref_rec *byte; /* BASE .. BASE + SPAN, or NULL: the hash below */
	uint64_t *hkey;	      /* wide traces: open addressing, byte address + 1 */
	struct ref_rec *hval;
	size_t hcap, hused;
	unsigned nlevels;
	struct {
		uint64_t nsets, assoc, shift, latency;
		uint64_t *tag, *stamp;
	} lv[EDAG_MAX_LEVELS];
	uint64_t clock;
};

/* The reference record of byte x (created when make). */
static struct ref_rec *ref_byte(struct ref *r, uint64_t x, bool make)
{
	if (r->byte)
		return &r->byte[x - BASE];
	if (make && (r->hused + 1) * 2 > r->hcap) {
		size_t ocap = r->hcap;
		uint64_t *ok = r->hkey;
		struct ref_rec *ov = r->hval;
		r->hcap = ocap ? 2 * ocap : 1024;
		r->hkey = calloc(r->hcap, sizeof(*r->hkey));
		r->hval = calloc(r->hcap, sizeof(*r->hval));
		for (size_t i = 0; i < ocap; i++) {
			if (!ok[i])
				continue;
			size_t j = (size_t)((ok[i] * 0x9e3779b97f4a7c15ull) >> 20) & (r->hcap - 1);
			while (r->hkey[j])
				j = (j + 1) & (r->hcap - 1);
			r->hkey[j] = ok[i];
			r->hval[j] = ov[i];
		}
		free(ok);
		free(ov);
	}
	if (!r->hcap)
		return NULL;
	size_t j = (size_t)(((x + 1) * 0x9e3779b97f4a7c15ull) >> 20) & (r->hcap - 1);
	while (r->hkey[j] && r->hkey[j] != x + 1)
		j = (j + 1) & (r->hcap - 1);
	if (r->hkey[j])
		return &r->hval[j];
	if (!make)
		return NULL;
	r->hkey[j] = x + 1;
	r->hused++;
	return &r->hval[j];
}

static void ref_add(const struct ref_rec *p, struct ref_rec *acc)
{
	if (!p->set)
		return;
	acc->depth = p->depth > acc->depth ? p->depth : acc->depth;
	acc->path = p->path > acc->path ? p->path : acc->path;
	if (p->finish > acc->finish || (p->finish == acc->finish && p->comp > acc->comp)) {
		acc->finish = p->finish;
		acc->comp = p->comp;
	}
}

/* Timestamp LRU, one line per call; -1 = missed every level. */
static int ref_line(struct ref *r, uint64_t addr, bool *missed)
{
	uint64_t now = ++r->clock;
	for (unsigned i = 0; i < r->nlevels; i++) {
		uint64_t line = addr >> r->lv[i].shift, set = line % r->lv[i].nsets;
		uint64_t *tag = &r->lv[i].tag[set * r->lv[i].assoc],
			 *st = &r->lv[i].stamp[set * r->lv[i].assoc];
		uint64_t victim = 0;
		for (uint64_t w = 0; w < r->lv[i].assoc; w++) {
			if (tag[w] == line + 1) {
				st[w] = now;
				return (int)i;
			}
			if (st[w] < st[victim])
				victim = w;
		}
		missed[i] = true;
		tag[victim] = line + 1;
		st[victim] = now;
	}
	return -1;
}

static int ref_cache(struct ref *r, uint64_t addr, uint32_t size)
{
	if (!r->nlevels)
		return -1;
	bool missed[EDAG_MAX_LEVELS] = {false};
	uint64_t sh = r->lv[0].shift;
	int worst = 0;
	for (uint64_t l = addr >> sh; l <= (addr + size - 1) >> sh; l++) {
		int h = ref_line(r, l << sh, missed);
		worst = (h < 0 || worst < 0) ? -1 : h > worst ? h : worst;
	}
	return worst;
}

static void ref_step(struct ref *r, const struct edag_config *c, const struct edag_insn *in,
		     struct edag_vertex *v)
{
	struct ref_rec acc = {0};
	for (unsigned i = 0; i < in->nread; i++)
		if (in->rd[i])
			ref_add(&r->reg[in->rd[i]], &acc);
	if (in->mem & EDAG_MEM_READ)
		for (uint64_t x = in->addr; x < in->addr + in->size; x++)
			if (ref_byte(r, x, false))
				ref_add(ref_byte(r, x, false), &acc);
	int hit = in->mem ? ref_cache(r, in->addr, in->size) : -1;
	bool memv = in->mem && hit < 0;
	uint32_t cost = !in->mem ? c->class_cost[in->cls] : memv ? c->alpha0 : c->level[hit].latency;
	struct ref_rec self = {.finish = acc.finish + cost,
			       .comp = acc.comp + (memv ? 0 : cost),
			       .depth = acc.depth + memv,
			       .path = acc.path + 1,
			       .set = true};
	for (unsigned i = 0; i < in->nwrite; i++)
		if (in->wr[i])
			r->reg[in->wr[i]] = self;
	if (in->mem & EDAG_MEM_WRITE)
		for (uint64_t x = in->addr; x < in->addr + in->size; x++)
			*ref_byte(r, x, true) = self;
	v->memory = memv;
	v->hit_level = hit;
	v->cost = cost;
	v->depth = self.depth;
	v->path = self.path;
	v->finish = self.finish;
}

static void random_insn(struct edag_insn *in, uint64_t i, uint64_t *stream)
{
	memset(in, 0, sizeof(*in));
	in->pc = 0x1000 + 4 * i;
	in->cls = (uint8_t)(rnd() % EDAG_NCLASS);
	in->nread = (uint8_t)(rnd() % 3);
	for (unsigned k = 0; k < in->nread; k++)
		in->rd[k] = (uint8_t)(rnd() % 16);
	in->nwrite = (uint8_t)(rnd() % 2);
	for (unsigned k = 0; k < in->nwrite; k++)
		in->wr[k] = (uint8_t)(rnd() % 16);
	in->mem = (uint8_t)edag_default_mem(in->cls);
	if (rnd() % 8 == 0)
		in->mem = (uint8_t)(rnd() % 4);
	if (!in->mem)
		return;
	unsigned k = rnd() % 16;
	in->size = k < 6 ? 8 : k < 9 ? 1u << (rnd() % 3) : k < 14 ? 1 + rnd() % 24 : 1 + rnd() % 300;
	uint64_t off;
	if (rnd() % 2) { /* streaming: mostly aligned words, sometimes off by a few bytes */
		*stream = (*stream + 8) % (SPAN - 512);
		off = *stream + (rnd() % 4 == 0 ? rnd() % 8 : 0);
	} else if (rnd() % 2) { /* hot: a few granules, lots of overlap */
		off = 4096 + rnd() % 256;
	} else { /* anywhere, any alignment (many granules: the table grows) */
		off = rnd() % (SPAN - 512);
		if (rnd() % 2)
			off &= ~7ull;
	}
	in->addr = BASE + off;
}

/* Wide traces: streaming over 48 MiB, a hot set of 3 pages, random words
 * over 64 MiB, and scattered accesses over 2^40 bytes (hundreds of regions:
 * region hash growth, TLB collisions). Big enough that edag_step_batch
 * pipelines (the table outgrows 2 MiB, its page entries 256 KiB). */
static void wide_insn(struct edag_insn *in, uint64_t i, uint64_t *stream)
{
	random_insn(in, i, stream);
	if (!in->mem)
		return;
	unsigned k = rnd() % 64;
	uint64_t base = 0x10000000;
	if (k == 0) /* scattered: about one new region each */
		in->addr = (((uint64_t)rnd() << 12) ^ rnd()) & ((1ull << 40) - 1);
	else if (k < 24) /* streaming */
		in->addr = base + (*stream = (*stream + 8) % (48u << 20)) + (rnd() % 8 == 0 ? rnd() % 8 : 0);
	else if (k < 32) /* hot: 3 pages, dense, lots of overlap */
		in->addr = base + 4096 + rnd() % 1536;
	else /* random words over 64 MiB: sparse pages, insertions in between */
		in->addr =
		    base + (((uint64_t)rnd() << 3) & ((64u << 20) - 1)) + (rnd() % 4 == 0 ? rnd() % 8 : 0);
}

static void run_against_reference(const struct edag_config *c, uint64_t seed, size_t n, bool batch, bool wide)
{
	void (*gen)(struct edag_insn *, uint64_t, uint64_t *) = wide ? wide_insn : random_insn;
	struct edag_state *st;
	assert_int_equal(edag_new(c, &st), 0);
	struct ref *r = calloc(1, sizeof(*r));
	r->byte = wide ? NULL : calloc(SPAN, sizeof(struct ref_rec));
	r->nlevels = c->nlevels;
	for (unsigned i = 0; i < c->nlevels; i++) {
		r->lv[i].assoc = c->level[i].assoc;
		r->lv[i].shift = (uint64_t)__builtin_ctz(c->level[i].line);
		r->lv[i].latency = c->level[i].latency;
		r->lv[i].nsets = c->level[i].size / (c->level[i].assoc * c->level[i].line);
		r->lv[i].tag = calloc(r->lv[i].nsets * r->lv[i].assoc, 8);
		r->lv[i].stamp = calloc(r->lv[i].nsets * r->lv[i].assoc, 8);
	}
	rng = seed;
	uint64_t stream = 0, W = 0, D = 0, cp = 0;
	const size_t B = wide ? 2048 : 64; /* wide: batches long enough to pipeline */
	static struct edag_insn blk[2048];
	for (size_t i = 0; i < n; i += B) {
		size_t cnt = n - i < B ? n - i : B;
		for (size_t j = 0; j < cnt; j++)
			gen(&blk[j], i + j, &stream);
		if (batch)
			assert_int_equal(edag_step_batch(st, blk, cnt), 0);
		for (size_t j = 0; j < cnt; j++) {
			struct edag_vertex got, want;
			if (!batch)
				assert_int_equal(edag_step(st, &blk[j], &got), 0);
			ref_step(r, c, &blk[j], &want);
			if (!batch) {
				assert_int_equal(got.depth, want.depth);
				assert_int_equal(got.path, want.path);
				assert_int_equal(got.finish, want.finish);
				assert_int_equal(got.cost, want.cost);
				assert_int_equal(got.hit_level, want.hit_level);
				assert_int_equal(got.memory, want.memory);
			}
			W += want.memory;
			D = want.depth > D ? want.depth : D;
			cp = want.path > cp ? want.path : cp;
		}
	}
	struct edag_metrics mt;
	edag_metrics_get(st, &mt);
	assert_int_equal(mt.vertices, n);
	assert_int_equal(mt.W, W);
	assert_int_equal(mt.D, D);
	assert_int_equal(mt.cp_vertices, cp);
	assert_true(D > 20 && W > n / 100); /* not vacuous */
	/* the same trace again after a reset: same result */
	edag_reset(st);
	rng = seed;
	stream = 0;
	for (size_t i = 0; i < n; i++) {
		gen(&blk[0], i, &stream);
		assert_int_equal(edag_step(st, &blk[0], NULL), 0);
	}
	struct edag_metrics again;
	edag_metrics_get(st, &again);
	assert_int_equal(again.W, mt.W);
	assert_int_equal(again.D, mt.D);
	assert_int_equal(again.cp_cost, mt.cp_cost);
	assert_int_equal(again.cp_compute, mt.cp_compute);
	assert_int_equal(again.edges_mem, mt.edges_mem);
	if (wide) /* big enough that edag_step_batch pipelined (table > 2 MiB, entries > 256 KiB) */
		assert_true(edag_state_bytes(st) > ((size_t)4 << 20));
	edag_free(st);
	for (unsigned i = 0; i < c->nlevels; i++) {
		free(r->lv[i].tag);
		free(r->lv[i].stamp);
	}
	free(r->byte);
	free(r->hkey);
	free(r->hval);
	free(r);
}

static void test_edag_engine_matches_byte_reference(void **state)
{
	(void)state;
	struct edag_config c;
	edag_config_default(&c);
	for (uint64_t seed = 1; seed <= 3; seed++)
		run_against_reference(&c, seed, 60000, seed == 3, false);
}

static void test_edag_engine_matches_reference_with_cache(void **state)
{
	(void)state;
	struct edag_config c;
	edag_config_default(&c);
	c.nlevels = 3;
	c.level[0] = (struct edag_cache_level){.size = 1024, .assoc = 2, .line = 32, .latency = 3};
	c.level[1] = (struct edag_cache_level){.size = 3 * 64 * 40, .assoc = 3, .line = 64, .latency = 10};
	c.level[2] = (struct edag_cache_level){.size = 64 * 1024, .assoc = 16, .line = 64, .latency = 30};
	for (uint64_t seed = 11; seed <= 12; seed++)
		run_against_reference(&c, seed, 60000, seed == 12, false);
}

/* Wide traces (hundreds of regions, 64 MiB of sparse and dense pages):
 * stepped one by one against the reference, then pipelined in long
 * batches (slot hints, insertions moving slots in between) against it. */
static void test_edag_engine_matches_reference_wide_pipelined(void **state)
{
	(void)state;
	struct edag_config c;
	edag_config_default(&c);
	run_against_reference(&c, 21, 150000, false, true);
	run_against_reference(&c, 22, 150000, true, true);
	c.nlevels = 2;
	c.level[0] = (struct edag_cache_level){.size = 4096, .assoc = 4, .line = 64, .latency = 3};
	c.level[1] = (struct edag_cache_level){.size = 64 * 1024, .assoc = 8, .line = 64, .latency = 12};
	run_against_reference(&c, 23, 150000, true, true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edag_mtab_growth_and_lookup),
	    cmocka_unit_test(test_edag_mtab_page_sparse_then_dense),
	    cmocka_unit_test(test_edag_mtab_split_words),
	    cmocka_unit_test(test_edag_engine_matches_byte_reference),
	    cmocka_unit_test(test_edag_engine_matches_reference_with_cache),
	    cmocka_unit_test(test_edag_engine_matches_reference_wide_pipelined),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
