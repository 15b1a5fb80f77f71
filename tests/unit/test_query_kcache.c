/* The key cache of the sample blocks' reader (collector/query/query_kcache.c,
 * #40 w40k): blocks summed through it give the set the plain path gives
 * (each key decoded by store_block_get, filtered, its count clamped, added
 * at its first-met place), row for row and in the same order, on blocks
 * where the cache matters: keys repeated across blocks, keys new in later
 * blocks, a --pid filter, keys whose identity is too long for the cache,
 * another spelling of a key's varints, keys cut at a block's end, a damaged
 * key in the middle of a block, counts over the record limit, and more
 * distinct keys than the table's first size. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "query/query_priv.h"
#include "store/store_varint.h"
#include "validate_samples.h"

#define MAXB 64

struct blocks {
	uint8_t *data[MAXB];
	size_t len[MAXB], n;
};

static void add_block(struct blocks *b, const struct store_block_key *k, size_t nk)
{
	assert_true(b->n < MAXB);
	uint8_t *p = malloc(nk * STORE_BLOCK_MAX_KEY_BYTES + 1);
	assert_non_null(p);
	size_t len = 0;
	for (size_t i = 0; i < nk; i++)
		len += store_block_put(p + len, &k[i]);
	b->data[b->n] = p;
	b->len[b->n++] = len;
}

/* The plain path: query_blocks.c's decode_block without the cache. */
static void sum_plain(const struct blocks *b, const struct query_filter *f, struct kset *ks)
{
	for (size_t no = 0; no < b->n; no++) {
		size_t off = 0, n = 0;
		while (off < b->len[no]) {
			struct store_block_key k;
			size_t used = store_block_get(b->data[no] + off, b->len[no] - off, &k);
			if (!used)
				break;
			off += used;
			if (f->npids && !qm_in_pid_list(f->pids, f->npids, k.pid))
				continue;
			if (k.count > VALIDATE_MAX_SAMPLE_COUNT)
				k.count = VALIDATE_MAX_SAMPLE_COUNT;
			assert_int_equal(qm_kset_add(ks, &k, (no << 24) + n++), 0);
		}
	}
}

static unsigned sum_cached(const struct blocks *b, const struct query_filter *f, struct kset *ks,
			   struct qm_kcache *c)
{
	unsigned damaged = 0;
	for (size_t no = 0; no < b->n; no++) {
		bool d;
		/* each block in memory of exactly its length: a read past its end is ASan's error */
		uint8_t *x = malloc(b->len[no] ? b->len[no] : 1);
		assert_non_null(x);
		memcpy(x, b->data[no], b->len[no]);
		assert_int_equal(qm_kcache_sum_block(c, ks, x, b->len[no], f, no << 24, &d), 0);
		free(x);
		damaged += d;
	}
	qm_kcache_flush(c, ks);
	return damaged;
}

static void assert_same(const struct kset *a, const struct kset *b)
{
	assert_int_equal(a->n, b->n);
	for (size_t i = 0; i < a->n; i++) {
		const struct store_block_key *x = &a->rows[i], *y = &b->rows[i];
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->ip, y->ip);
		assert_int_equal(x->kip, y->kip);
		assert_int_equal(x->stack_id, y->stack_id);
		assert_int_equal(x->count, y->count);
		assert_int_equal(a->first[i], b->first[i]);
	}
}

static struct store_block_key key(int32_t pid, uint64_t ip, uint32_t stack, uint64_t count)
{
	return (struct store_block_key){.pid = pid, .tid = pid + (int32_t)(ip & 1), .ip = ip, .stack_id = stack,
					.count = count};
}

/* Blocks as a store holds them: a board's keys again and again, new ones coming, and the cases above. */
static void make_blocks(struct blocks *b)
{
	struct store_block_key k[3000];
	for (unsigned blk = 0; blk < 40; blk++) {
		size_t n = 0;
		for (unsigned i = 0; i < 60; i++) /* the same 60 keys in every block, counts varying */
			k[n++] = key(1000 + (int32_t)(i % 4), 0x400000 + 0x40 * i, i, 1 + (blk * 7 + i) % 5);
		for (unsigned i = 0; i < 4; i++) /* keys whose bytes differ only past the first 8 (the stack) */
			k[n++] = key(1000, 0x400000, 500 + 300 * i, 1 + i);
		for (unsigned i = 0; i < 4; i++) { /* and past the first 16 (a kernel address's top) */
			k[n] = key(1000, 0x400000, 500, 2);
			k[n++].kip = 0xffffffc000123456ull ^ ((uint64_t)i << 56);
		}
		for (unsigned i = 0; i < 5; i++) /* and keys new in this block (pid 2000 + block) */
			k[n++] = key(2000 + (int32_t)blk, 0x500000 + 0x40 * (blk * 5 + i), 100 + i, 1 + i);
		/* an identity over QM_KCACHE_IDENT bytes: decoded every time */
		k[n++] = (struct store_block_key){.pid = -2000000000, .tid = 2000000000, .ip = UINT64_MAX - blk % 2,
						  .kip = 0xffffffc000123456ull, .stack_id = UINT32_MAX, .count = 3};
		/* one over the record limit (an older collector stored it unchecked) */
		k[n++] = key(1001, 0x400040, 1, blk == 3 ? VALIDATE_MAX_SAMPLE_COUNT + 5 : 2);
		if (blk == 20 || blk == 30) { /* more distinct keys than the table's first 1024 slots hold */
			for (unsigned i = 0; i < 1000; i++)
				k[n++] = key(3000 + (int32_t)(i % 7), 0x600000 + 0x40 * i, i, 1);
			/* many that share their first 8 bytes (pid, tid, ip, kip), differing in the stack */
			for (unsigned i = 0; i < 1000; i++)
				k[n++] = key(3000, 0x600000, 1000 + i, 1);
			/* and their first 16, differing in a kernel address's top bits (bytes 16-19) */
			for (unsigned i = 0; i < 120; i++)
				k[n++] = (struct store_block_key){.pid = 3001, .tid = 3001, .ip = 0x7fff00000000ull,
								  .kip = 0xffffffc000123456ull ^ ((uint64_t)i << 56),
								  .stack_id = 7, .count = 1 + blk};
		}
		add_block(b, k, n);
	}
	/* key 0 of the blocks spelled with a longer varint for its pid (0x80 continuation, then 0): another
	 * entry, the same row */
	uint8_t *p = malloc(64);
	assert_non_null(p);
	size_t len = put_var(p, zigzag(1000)) - 1;
	p[len++] |= 0x80;
	p[len++] = 0;
	struct store_block_key k0 = key(1000, 0x400000, 0, 9);
	uint8_t tmp[STORE_BLOCK_MAX_KEY_BYTES];
	size_t full = store_block_put(tmp, &k0), pidlen = put_var(tmp, zigzag(1000));
	memcpy(p + len, tmp + pidlen, full - pidlen);
	len += full - pidlen;
	b->data[b->n] = p;
	b->len[b->n++] = len;
	b->data[b->n] = malloc(len * 2);
	memcpy(b->data[b->n], p, len);
	memcpy(b->data[b->n] + len, p, len);
	b->len[b->n] = len * 2;
	b->n++;
	/* a key whose pid does not fit (damaged) between two good ones: the first counts, the rest not */
	uint8_t *d = malloc(3 * STORE_BLOCK_MAX_KEY_BYTES);
	assert_non_null(d);
	size_t dl = store_block_put(d, &k[0]);
	dl += put_var(d + dl, 1ull << 40);
	for (int i = 0; i < 5; i++)
		dl += put_var(d + dl, 1);
	dl += store_block_put(d + dl, &k[1]);
	b->data[b->n] = d;
	b->len[b->n++] = dl;
	/* the same keys, the block cut in the middle of its last key */
	struct store_block_key last[3] = {k[2], k[3], key(1002, 0x400080, 2, 300)};
	add_block(b, last, 3);
	b->len[b->n - 1] -= 2;
	/* and cut inside its last key's identity (count, stack id, kip and two bytes of its ip gone) */
	add_block(b, last, 3);
	b->len[b->n - 1] -= 6;
}

static void free_blocks(struct blocks *b)
{
	for (size_t i = 0; i < b->n; i++)
		free(b->data[i]);
}

static void run(const struct query_filter *f, unsigned want_damaged)
{
	struct blocks b = {0};
	make_blocks(&b);
	struct kset plain = {0}, cached = {0};
	struct qm_kcache c = {0};
	sum_plain(&b, f, &plain);
	assert_int_equal(sum_cached(&b, f, &cached, &c), want_damaged);
	assert_true(c.n > 1024 / 2); /* the table grew */
	assert_true(plain.n > 2000);
	assert_same(&plain, &cached);
	qm_kcache_free(&c);
	qm_kset_free(&plain);
	qm_kset_free(&cached);
	free_blocks(&b);
}

static void test_kcache_same_as_plain(void **state)
{
	(void)state;
	struct query_filter f = {0};
	run(&f, 3);
}

static void test_kcache_pid_filter(void **state)
{
	(void)state;
	struct query_filter f = {0};
	f.pids[0] = 1001;
	f.pids[1] = 2007;
	f.pids[2] = 3003;
	f.npids = 3;
	struct blocks b = {0};
	make_blocks(&b);
	struct kset plain = {0}, cached = {0};
	struct qm_kcache c = {0};
	sum_plain(&b, &f, &plain);
	assert_int_equal(sum_cached(&b, &f, &cached, &c), 3);
	assert_true(plain.n > 0);
	for (size_t i = 0; i < plain.n; i++)
		assert_true(plain.rows[i].pid == 1001 || plain.rows[i].pid == 2007 || plain.rows[i].pid == 3003);
	assert_same(&plain, &cached);
	qm_kcache_free(&c);
	qm_kset_free(&plain);
	qm_kset_free(&cached);
	free_blocks(&b);
}

/* The same blocks summed through one cache in two runs of blocks, the set flushed between (a worker
 * given batch after batch): the counts summed since the first flush are not counted twice. */
static void test_kcache_flush_twice(void **state)
{
	(void)state;
	struct query_filter f = {0};
	struct blocks b = {0};
	make_blocks(&b);
	struct kset plain = {0}, cached = {0};
	struct qm_kcache c = {0};
	sum_plain(&b, &f, &plain);
	for (size_t no = 0; no < b.n; no++) {
		bool d;
		assert_int_equal(qm_kcache_sum_block(&c, &cached, b.data[no], b.len[no], &f, no << 24, &d), 0);
		if (no == 10)
			qm_kcache_flush(&c, &cached);
	}
	qm_kcache_flush(&c, &cached);
	qm_kcache_flush(&c, &cached);
	assert_same(&plain, &cached);
	qm_kcache_free(&c);
	qm_kset_free(&plain);
	qm_kset_free(&cached);
	free_blocks(&b);
}

/* More distinct keys than the table holds (3 blocks of 65,536 new keys, then the first block again):
 * the table stops at QM_KCACHE_MAX entries, every key past it takes the plain path, the sums the same. */
static void test_kcache_full_table(void **state)
{
	(void)state;
	struct blocks b = {0};
	size_t nk = 65536;
	struct store_block_key *k = calloc(nk, sizeof(*k));
	assert_non_null(k);
	for (unsigned blk = 0; blk < 4; blk++) {
		for (size_t i = 0; i < nk; i++)
			k[i] = key(4000 + (int32_t)(blk % 3), 0x400000 + 16 * i, 1, 1 + blk);
		add_block(&b, k, nk);
	}
	free(k);
	struct query_filter f = {0};
	struct kset plain = {0}, cached = {0};
	struct qm_kcache c = {0};
	sum_plain(&b, &f, &plain);
	assert_int_equal(sum_cached(&b, &f, &cached, &c), 0);
	assert_int_equal(c.n, QM_KCACHE_MAX);
	assert_int_equal(plain.n, 3 * nk);
	assert_same(&plain, &cached);
	qm_kcache_free(&c);
	qm_kset_free(&plain);
	qm_kset_free(&cached);
	free_blocks(&b);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_kcache_same_as_plain),
	    cmocka_unit_test(test_kcache_pid_filter),
	    cmocka_unit_test(test_kcache_flush_twice),
	    cmocka_unit_test(test_kcache_full_table),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
