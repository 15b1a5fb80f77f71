/* A read command sees one state of the store (#40 w46b, review r7 #3, r8 F4), on SQLite and on
 * PostgreSQL (store_fx.h): another writer commits a record with new sample keys (new ids of the
 * session's dictionary) right after the reader has read the session's dictionary and before it reads
 * the blocks (store_set_keydict_hook). Every reader of the query model (the report's stacks, the
 * samples over time, `dump --keys`) shows that record either whole or not at all, never as a damaged
 * block read up to its first new id; the commit is not blocked by the reader's snapshot (the hook
 * runs on the reader's thread: a writer waiting on the reader would never return); and on PostgreSQL
 * no statement runs while a block statement is mid-stream (r8 F4: its rest was read ahead and held).
 * Nested read transactions share one snapshot (a page's queries); on PostgreSQL, after a failed
 * statement the read transaction is renewed (a session left out of a query does not fail the next). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "store/store_priv.h"
#include "store/store_sample_keys.h"
#include "store_fx.h"

/* A record of n keys: pid 300 + i % 3, ip base + 16 i, count 1 + (i + seq) % 5; stack i % 7. */
static void put_keys(struct store *s, int64_t sid, uint64_t seq, size_t n, uint64_t base)
{
	int32_t pid[64], tid[64];
	uint64_t ip[64], count[64];
	uint32_t stack[64];
	assert_true(n <= 64);
	for (size_t i = 0; i < n; i++) {
		pid[i] = tid[i] = 300 + (int32_t)(i % 3);
		ip[i] = base + 16 * (uint64_t)i;
		count[i] = 1 + (i + seq) % 5;
		stack[i] = (uint32_t)(i % 7);
	}
	struct sample_rec_keys k = {n, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
}

static uint64_t sum_of(uint64_t seq, size_t n)
{
	uint64_t t = 0;
	for (size_t i = 0; i < n; i++)
		t += 1 + (i + seq) % 5;
	return t;
}

/* The stored records: seq FIRST_SEQ.. of OLD_KEYS keys each (ids 0..OLD_KEYS-1), more blocks than a
 * block statement's few rows; the late record: seq LATE_SEQ (the first in seq and time order, so its
 * block is the first row of the block statements) of LATE_KEYS keys, the first OLD_KEYS of them the
 * stored ones (their ids decode against the old dictionary), the rest new ids. */
#define FIRST_SEQ 10
#define RECORDS 40
#define OLD_KEYS 4
#define LATE_SEQ 1
#define LATE_KEYS 9

struct late {
	struct store *writer;
	int64_t sid;
	unsigned calls, at; /* commit at the at-th dictionary read (1-based) */
	bool committed;
};

static void commit_late(void *arg)
{
	struct late *l = arg;
	if (++l->calls != l->at || l->committed)
		return;
	put_keys(l->writer, l->sid, LATE_SEQ, LATE_KEYS, 0x1000);
	assert_int_equal(store_commit(l->writer), 0); /* not blocked by the reader's snapshot */
	l->committed = true;
}

static uint64_t old_total(void)
{
	uint64_t t = 0;
	for (uint64_t seq = FIRST_SEQ; seq < FIRST_SEQ + RECORDS; seq++)
		t += sum_of(seq, OLD_KEYS);
	return t;
}

/* The stored records, the writer kept open for the late one, a reader with the hook set. */
static struct store *setup_stores(struct fx *f, struct late *l)
{
	l->writer = fx_open_store(f);
	l->sid = fx_session(l->writer, "board-snap");
	for (uint64_t seq = FIRST_SEQ; seq < FIRST_SEQ + RECORDS; seq++)
		put_keys(l->writer, l->sid, seq, OLD_KEYS, 0x1000);
	assert_int_equal(store_commit(l->writer), 0);
	struct store *r = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &r), 0);
	store_set_keydict_hook(r, commit_late, l);
	return r;
}

/* Whether total is the stored records' alone or with the late one whole. */
static void assert_whole_or_none(uint64_t total)
{
	uint64_t before = old_total(), after = before + sum_of(LATE_SEQ, LATE_KEYS);
	if (total != before && total != after)
		fail_msg("%llu samples: neither the %llu before the late record nor the %llu with it "
			 "(a block read as damaged)",
			 (unsigned long long)total, (unsigned long long)before, (unsigned long long)after);
}

/* PostgreSQL: the reader held no more than a few rows at once (r8 F4). */
static void assert_rows_bounded(struct fx *f, struct store *r)
{
	if (f->b == B_PG && store_rows_held_peak(r) > 4)
		fail_msg("%zu rows held at once: a block statement's rest read ahead",
			 store_rows_held_peak(r));
}

/* The late record committed at the at-th dictionary read of one query (1: the stacks'; 2: with series,
 * the samples over time's): the stacks' total and the series' sum are each the stored records' alone
 * or with it whole, and the same. */
static void check_query(void **state, unsigned at)
{
	struct fx *f = *state;
	struct late l = {.at = at};
	struct store *r = setup_stores(f, &l);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.series = true;
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_true(l.committed);
	assert_int_equal(qr->skipped, 0);
	assert_whole_or_none(qr->total);
	uint64_t psum = 0;
	for (size_t i = 0; i < qr->npoints; i++)
		psum += qr->points[i].count;
	assert_int_equal(psum, qr->total); /* the stacks and the series read one state */
	assert_rows_bounded(f, r);
	query_result_free(qr);
	/* the next query (a new snapshot) sees the late record whole */
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, old_total() + sum_of(LATE_SEQ, LATE_KEYS));
	query_result_free(qr);
	store_close(r);
	store_close(l.writer);
}

static void test_snapshot_report_stacks(void **state)
{
	check_query(state, 1);
}

static void test_snapshot_report_series(void **state)
{
	check_query(state, 2);
}

static int count_key(const struct store_key_row *k, void *arg)
{
	*(uint64_t *)arg += k->count;
	return 0;
}

/* `dump --keys`: the same, its blocks in seq order (the late record's first). */
static void test_snapshot_dump_keys(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 1};
	struct store *r = setup_stores(f, &l);
	uint64_t total = 0;
	assert_int_equal(store_list_sample_keys(r, l.sid, count_key, &total), 0);
	assert_true(l.committed);
	assert_whole_or_none(total);
	assert_rows_bounded(f, r);
	total = 0;
	assert_int_equal(store_list_sample_keys(r, l.sid, count_key, &total), 0);
	assert_int_equal(total, old_total() + sum_of(LATE_SEQ, LATE_KEYS));
	store_close(r);
	store_close(l.writer);
}

/* Nested read transactions share the outermost one's snapshot (a page's several queries): a record
 * committed between two queries of one request is in neither; after the outer end, it is read. */
static void test_snapshot_nested_request(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 0}; /* the hook commits nothing */
	struct store *r = setup_stores(f, &l);
	store_set_keydict_hook(r, NULL, NULL);
	int reading = store_read_begin(r);
	assert_int_equal(reading, 1);
	assert_true(store_read_snapshot(r));
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, old_total());
	query_result_free(qr);
	put_keys(l.writer, l.sid, LATE_SEQ, LATE_KEYS, 0x1000);
	assert_int_equal(store_commit(l.writer), 0);
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, old_total()); /* the request's snapshot */
	query_result_free(qr);
	assert_true(store_read_snapshot(r)); /* still open: query_run ended only its nested one */
	store_read_end(r, reading);
	assert_false(store_read_snapshot(r));
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, old_total() + sum_of(LATE_SEQ, LATE_KEYS));
	query_result_free(qr);
	assert_false(store_read_snapshot(r));
	store_close(r);
	store_close(l.writer);
}

/* PostgreSQL: a statement that fails inside the read transaction leaves it unable to run anything
 * ("current transaction is aborted"); store_read_renew (query_run's add_session after a session left
 * out) begins a new one, so the next query of the request reads. */
static void test_snapshot_renew_after_error(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 0};
	struct store *r = setup_stores(f, &l);
	store_set_keydict_hook(r, NULL, NULL);
	int reading = store_read_begin(r);
	assert_int_equal(reading, 1);
	struct db_stmt *st = store_query(r, "SELECT 1 / (SELECT COUNT(*) - COUNT(*) FROM sample_blocks)");
	assert_non_null(st);
	assert_true(db_step(st) < 0); /* division by zero */
	db_finalize(st);
	store_read_renew(r);
	assert_true(store_read_snapshot(r));
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, old_total());
	query_result_free(qr);
	store_read_end(r, reading);
	assert_false(store_read_snapshot(r));
	store_close(r);
	store_close(l.writer);
}

#define BOTH(t)                                                                                                 \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL}, {#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL}

int main(void)
{
	log_init("test_query_snapshot", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    BOTH(test_snapshot_report_stacks),
	    BOTH(test_snapshot_report_series),
	    BOTH(test_snapshot_dump_keys),
	    BOTH(test_snapshot_nested_request),
	    {"test_snapshot_renew_after_error_postgresql", test_snapshot_renew_after_error, fx_setup_pg, fx_teardown,
	     NULL},
	};
	return cmocka_run_group_tests_name("query_snapshot", tests, fx_group_setup, fx_group_teardown);
}
