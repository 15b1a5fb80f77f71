/* The key-id writer's memory bound (store_keyids_w.c, #40 w46b, review r8 F3), on SQLite and on
 * PostgreSQL (store_fx.h): a session refused room for its dictionary writes its records as whole keys,
 * and asks the store where its ids end once per transaction, not once per record; dictionaries evicted
 * and reloaded, their ids continued (moved from test_store_keyids.c). Every record read. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <cmocka.h>

#include "log.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "store/store_keyids.h"
#include "store_fx.h"

/* A record of n keys: pid 300 + i % 3, ip base + 16 i, count 1 + (i + seq) % 5; stack i % 7. Its
 * samples. */
static uint64_t put_keys(struct store *s, int64_t sid, uint64_t seq, size_t n, uint64_t base)
{
	assert_true(n <= SAMPLE_REC_PATTERN_MAX);
	struct sample_rec_pattern p;
	uint64_t sum = sample_rec_pattern(&p, seq, n, base);
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &p.k);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	return sum;
}

/* A query of the whole store (the samples over time too, decoded on one thread) reads want samples in
 * blocks blocks; on PostgreSQL the blocks and the dictionary's chunks came in binary format. */
static void assert_read_all(struct fx *f, uint64_t want, uint64_t blocks)
{
	setenv("PROF_QUERY_THREADS", "1", 1);
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.series = true;
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	assert_int_equal(store_text_blobs(s), 0);
	assert_int_equal(qr->total, want);
	assert_int_equal(qr->blocks_read, blocks);
	query_result_free(qr);
	store_close(s);
	unsetenv("PROF_QUERY_THREADS");
}

/* The writer's bound on all dictionaries (PROF_STORE_KEY_IDS_BYTES, here room for two sessions' smallest):
 * three sessions written in turn, one commit each, evict each other's dictionaries, and each is reloaded
 * when written again: its ids continue (dense, each key once) and every block holds ids. Three sessions
 * with new keys in one transaction: the one whose dictionary finds no room (the others' ids not
 * committed, not evicted) writes whole keys. Every block read right. */
static void test_keyids_writer_bound(void **state)
{
	struct fx *f = *state;
	setenv("PROF_STORE_KEY_IDS_BYTES", "40000", 1);
	setenv("PROF_STORE_KEY_IDS_IDLE_S", "0", 1); /* any session without uncommitted ids evictable */
	struct store *s = fx_open_store(f);
	int64_t sid[3] = {fx_session(s, "board-a"), fx_session(s, "board-b"), fx_session(s, "board-c")};
	assert_int_equal(store_commit(s), 0);
	uint64_t want = 0;
	for (uint64_t seq = 1; seq <= 6; seq++)
		for (int i = 0; i < 3; i++) {
			want += put_keys(s, sid[i], seq, 6 + 2 * seq, 0x1000);
			assert_int_equal(store_commit(s), 0);
		}
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 0"), 0);
	for (int i = 0; i < 3; i++) {
		char q[160];
		snprintf(q, sizeof(q), "SELECT SUM(n) FROM sample_key_ids WHERE session_id = %lld",
			 (long long)sid[i]);
		assert_int_equal(fx_q(f, q), 18);
		snprintf(q, sizeof(q), "SELECT MAX(first_id + n) FROM sample_key_ids WHERE session_id = %lld",
			 (long long)sid[i]);
		assert_int_equal(fx_q(f, q), 18);
	}
	for (int i = 0; i < 3; i++) { /* one transaction, new keys in each session */
		want += put_keys(s, sid[i], 7, 20, 0x1000);
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	unsetenv("PROF_STORE_KEY_IDS_BYTES");
	unsetenv("PROF_STORE_KEY_IDS_IDLE_S");
	assert_true(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE seq = 7 AND fmt = 0") >= 1);
	assert_read_all(f, want, 3 * 7);
}

/* The writer's bound with room for one session's dictionary, two sessions written in turn (w45g): the
 * second finds no room for its keys (the first was written within the idle time, not evicted) and writes
 * whole keys: at most one load each, not one per record; three sessions with new keys in one transaction stay
 * within the bound (a dictionary is loaded only where it fits). Every record read. */
static void test_keyids_writer_bound_no_thrash(void **state)
{
	struct fx *f = *state;
	setenv("PROF_STORE_KEY_IDS_BYTES", "24000", 1);
	struct store *s = fx_open_store(f);
	int64_t sid[3] = {fx_session(s, "board-a"), fx_session(s, "board-b"), fx_session(s, "board-c")};
	assert_int_equal(store_commit(s), 0);
	uint64_t want = 0;
	struct store_keyids_stats st;
	for (uint64_t seq = 1; seq <= 20; seq++)
		for (int i = 0; i < 2; i++) {
			want += put_keys(s, sid[i], seq, 24, 0x1000);
			assert_int_equal(store_commit(s), 0);
			store_keyids_stats(s, &st);
			assert_true(st.bytes <= 24000);
		}
	assert_true(st.loads <= 2); /* b's empty dictionary may fit beside a's, never its keys */
	assert_int_equal(st.fallbacks, 20);
	char q[160];
	snprintf(q, sizeof(q), "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 1 AND session_id = %lld",
		 (long long)sid[0]);
	assert_int_equal(fx_q(f, q), 20);
	snprintf(q, sizeof(q), "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 0 AND session_id = %lld",
		 (long long)sid[1]);
	assert_int_equal(fx_q(f, q), 20);
	for (int i = 0; i < 3; i++) { /* one transaction, new keys in each session */
		want += put_keys(s, sid[i], 21, 40, 0x8000);
		store_keyids_stats(s, &st);
		assert_true(st.bytes <= 24000);
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	unsetenv("PROF_STORE_KEY_IDS_BYTES");
	assert_read_all(f, want, 2 * 20 + 3);
}

/* Session b stores 24 ids, then a's dictionary takes the bound (PROF_STORE_KEY_IDS_BYTES; b evicted, at
 * once: PROF_STORE_KEY_IDS_IDLE_S 0) and is written within the idle time (60 s again): b's stored ids
 * have no room beside it. Ten records of b in one transaction: whole keys, one read of b's stored end
 * (was one a record); ten more in the next: one more. */
static void test_keyids_bound_refused_once_per_tx(void **state)
{
	struct fx *f = *state;
	setenv("PROF_STORE_KEY_IDS_BYTES", "24000", 1);
	setenv("PROF_STORE_KEY_IDS_IDLE_S", "0", 1);
	struct store *s = fx_open_store(f);
	int64_t a = fx_session(s, "board-a"), b = fx_session(s, "board-b");
	assert_int_equal(store_commit(s), 0);
	uint64_t want = put_keys(s, b, 1, 24, 0x1000);
	assert_int_equal(store_commit(s), 0);
	for (uint64_t seq = 1; seq <= 3; seq++) {
		want += put_keys(s, a, seq, 24, 0x1000);
		assert_int_equal(store_commit(s), 0);
	}
	unsetenv("PROF_STORE_KEY_IDS_IDLE_S");
	struct store_keyids_stats st0, st;
	store_keyids_stats(s, &st0);
	assert_int_equal(st0.fallbacks, 0);
	for (int tx = 1; tx <= 2; tx++) {
		for (uint64_t seq = 10 * (uint64_t)tx; seq < 10 * (uint64_t)tx + 10; seq++)
			want += put_keys(s, b, seq, 24, 0x1000);
		store_keyids_stats(s, &st);
		assert_int_equal(st.fallbacks - st0.fallbacks, 10 * tx);
		assert_int_equal(st.end_reads - st0.end_reads, tx); /* was 10 a transaction */
		assert_int_equal(store_commit(s), 0);
	}
	assert_true(st.bytes <= 24000);
	store_close(s);
	unsetenv("PROF_STORE_KEY_IDS_BYTES");
	char q[160];
	snprintf(q, sizeof(q), "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 0 AND session_id = %lld",
		 (long long)b);
	assert_int_equal(fx_q(f, q), 20);
	snprintf(q, sizeof(q), "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 1 AND session_id = %lld",
		 (long long)a);
	assert_int_equal(fx_q(f, q), 3);
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	assert_int_equal(qr->total, want);
	query_result_free(qr);
	store_close(s);
}

#define BOTH(t)                                                                                                 \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL}, {#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
	log_init("test_store_keyids_bound", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    BOTH(test_keyids_writer_bound),
	    BOTH(test_keyids_writer_bound_no_thrash),
	    BOTH(test_keyids_bound_refused_once_per_tx),
	};
	return cmocka_run_group_tests_name("store_keyids_bound", tests, fx_group_setup, fx_group_teardown);
}
