/* A read command sees one state of the store (#40 w46b, review r7 #3, r8 F4), on SQLite and on
 * PostgreSQL (store_fx.h): another writer commits a record with new sample keys (new ids of the
 * session's dictionary) right after the reader has read the session's dictionary and before it reads
 * the blocks (store_set_keydict_hook). Every reader of the query model (the report's stacks, the
 * samples over time, `dump --keys`) shows that record either whole or not at all, never as a damaged
 * block read up to its first new id; the commit is not blocked by the reader's snapshot (the hook
 * runs on the reader's thread: a writer waiting on the reader would never return); and on PostgreSQL
 * no statement runs while a block statement is mid-stream (r8 F4: its rest was read ahead and held).
 * Inside a snapshot a block's id past the dictionary is damage: warned, read up to there, with no extend
 * of the dictionary (between slices or mid-stream) and no row read ahead (review r9 F2).
 * Nested read transactions share one snapshot (a page's queries); on PostgreSQL, after a failed
 * statement the read transaction is renewed (a session left out of a query does not fail the next, r9 F2). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
	assert_true(n <= SAMPLE_REC_PATTERN_MAX);
	struct sample_rec_pattern p;
	sample_rec_pattern(&p, seq, n, base);
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &p.k);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
}

static uint64_t sum_of(uint64_t seq, size_t n) { return sample_rec_pattern_sum(seq, n); }

/* A query of the whole store on r (default options) reads want samples. */
static void total_is(struct store *r, uint64_t want)
{
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->total, want);
	query_result_free(qr);
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

/* A block of ids past the session's dictionary, read inside a read snapshot (r9 F2): the block of seq
 * DAMAGED_SEQ (the first in seq and time order: the rest of its statement's rows follow it) replaced by
 * id 0 (count 7), then id 1000 (zigzag 2000 - 2: 0xce 0x0f), past the dictionary's OLD_KEYS ids. */
#define DAMAGED_SEQ FIRST_SEQ

static struct store *setup_damaged(struct fx *f, struct late *l, int *reading)
{
	struct store *r = setup_stores(f, l);
	store_set_keydict_hook(r, NULL, NULL);
	char sql[160];
	snprintf(sql, sizeof(sql), "UPDATE sample_blocks SET data = %s WHERE seq = %d",
		 f->b == B_PG ? "'\\x0007ce0f05'::bytea" : "X'0007CE0F05'", DAMAGED_SEQ);
	fx_exec(f, sql);
	*reading = store_read_begin(r);
	assert_int_equal(*reading, 1);
	return r;
}

/* The stored records' samples with the damaged block read up to its id past the dictionary. */
static uint64_t damaged_total(void)
{
	return old_total() - sum_of(DAMAGED_SEQ, OLD_KEYS) + 7;
}

/* The warnings logged between capture_begin and capture_end (stderr into a temporary file). */
static int cap_saved = -1;
static FILE *cap_file;

static void capture_begin(void)
{
	fflush(stderr);
	cap_file = tmpfile();
	assert_non_null(cap_file);
	cap_saved = dup(2);
	assert_true(cap_saved >= 0);
	assert_true(dup2(fileno(cap_file), 2) >= 0);
	log_set_level(LOG_LEVEL_WARN);
}

/* Whether a captured line held what. */
static bool capture_end(const char *what)
{
	fflush(stderr);
	log_set_level(LOG_LEVEL_ERROR);
	assert_true(dup2(cap_saved, 2) >= 0);
	close(cap_saved);
	static char text[16384];
	rewind(cap_file);
	size_t n = fread(text, 1, sizeof(text) - 1, cap_file);
	text[n] = 0;
	fclose(cap_file);
	return strstr(text, what) != NULL;
}

/* Inside the snapshot no extend of the dictionary runs (r9 F2: the guards in query_blocks.c
 * qm_keydict_extend, between slices, and store_keyids.c store_block_next_fresh, mid-stream) and, on
 * PostgreSQL, no block statement's rest is read ahead; the damaged block is warned and read up to there.
 * series: the samples over time too (store_block_next_fresh); else the stacks alone, in many slices
 * (PROF_QUERY_SLICE_KEYS: about two blocks a slice). */
static void check_damaged(void **state, bool series)
{
	struct fx *f = *state;
	struct late l = {.at = 0};
	int reading;
	struct store *r = setup_damaged(f, &l, &reading);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.series = series;
	if (!series)
		setenv("PROF_QUERY_SLICE_KEYS", "8", 1);
	struct query_result *qr;
	capture_begin();
	int rc = query_run(r, &qo, &qr);
	bool warned = capture_end("a damaged sample block");
	unsetenv("PROF_QUERY_SLICE_KEYS");
	assert_int_equal(rc, 0);
	assert_true(warned);
	assert_int_equal(qr->skipped, 0);
	assert_int_equal(qr->total, damaged_total());
	uint64_t psum = 0;
	for (size_t i = 0; i < qr->npoints; i++)
		psum += qr->points[i].count;
	assert_int_equal(psum, series ? damaged_total() : 0);
	assert_int_equal(store_keydict_extends(r), 0);
	assert_rows_bounded(f, r);
	query_result_free(qr);
	store_read_end(r, reading);
	store_close(r);
	store_close(l.writer);
}

static void test_snapshot_damaged_stacks(void **state)
{
	check_damaged(state, false);
}

static void test_snapshot_damaged_series(void **state)
{
	check_damaged(state, true);
}

/* `dump --keys`: the keys up to the damaged block's id past the dictionary (the block first in seq
 * order), then -EBADMSG; no extend, no statement's rest read ahead. */
static void test_snapshot_damaged_dump_keys(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 0};
	int reading;
	struct store *r = setup_damaged(f, &l, &reading);
	uint64_t total = 0;
	assert_int_equal(store_list_sample_keys(r, l.sid, count_key, &total), -EBADMSG);
	assert_int_equal(total, 7);
	assert_int_equal(store_keydict_extends(r), 0);
	assert_rows_bounded(f, r);
	store_read_end(r, reading);
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
	total_is(r, old_total());
	put_keys(l.writer, l.sid, LATE_SEQ, LATE_KEYS, 0x1000);
	assert_int_equal(store_commit(l.writer), 0);
	total_is(r, old_total()); /* the request's snapshot */
	assert_true(store_read_snapshot(r)); /* still open: query_run ended only its nested one */
	store_read_end(r, reading);
	assert_false(store_read_snapshot(r));
	total_is(r, old_total() + sum_of(LATE_SEQ, LATE_KEYS));
	assert_false(store_read_snapshot(r));
	store_close(r);
	store_close(l.writer);
}

/* A read transaction begun on r and a statement failed in it (division by zero); its store_read_begin. */
static int read_and_fail(struct store *r)
{
	store_set_keydict_hook(r, NULL, NULL);
	int reading = store_read_begin(r);
	assert_int_equal(reading, 1);
	struct db_stmt *st = store_query(r, "SELECT 1 / (SELECT COUNT(*) - COUNT(*) FROM sample_blocks)");
	assert_non_null(st);
	assert_true(db_step(st) < 0);
	db_finalize(st);
	return reading;
}

/* PostgreSQL: a statement that fails inside the read transaction leaves it unable to run anything
 * ("current transaction is aborted"); store_read_renew (query_run's add_session after a session left
 * out) begins a new one, so the next query of the request reads. */
static void test_snapshot_renew_after_error(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 0};
	struct store *r = setup_stores(f, &l);
	int reading = read_and_fail(r);
	store_read_renew(r);
	assert_true(store_read_snapshot(r));
	total_is(r, old_total());
	store_read_end(r, reading);
	assert_false(store_read_snapshot(r));
	store_close(r);
	store_close(l.writer);
}

/* PostgreSQL: a failure that a reader tolerates and goes on from (a kernel table not read, a page's
 * CPU list left out: review r9 F1) calls no store_read_renew; the next statement of the read finds the
 * transaction failed and begins a new snapshot itself (db_pg_read.c dbpg_read_mend), so the query
 * reads every session rather than leaving them out with "current transaction is aborted". */
static void test_snapshot_mend_without_renew(void **state)
{
	struct fx *f = *state;
	struct late l = {.at = 0};
	struct store *r = setup_stores(f, &l);
	int reading = read_and_fail(r);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->skipped, 0);
	assert_int_equal(qr->total, old_total());
	query_result_free(qr);
	assert_true(store_read_snapshot(r));
	store_read_end(r, reading);
	assert_false(store_read_snapshot(r));
	store_close(r);
	store_close(l.writer);
}

/* PostgreSQL: a statement of one session fails inside query_run (its task names read through a view
 * that raises for that session alone; a costly function, so PostgreSQL applies it after the session's
 * condition): add_session leaves the session out (skipped 1) and renews the read transaction
 * (store_read_renew; since r9 F1 the next statement would mend it too), and the next session is read
 * whole, in one state with the first's dictionary and blocks never mixed. */
static const char fail_tasks[] =
    "ALTER TABLE sample_tasks RENAME TO sample_tasks_t;"
    "INSERT INTO sample_tasks_t (session_id, pid, tid, comm, thread) VALUES (%lld, 999, 999, 'x', 'x');"
    "CREATE VIEW sample_tasks AS SELECT * FROM sample_tasks_t WHERE t_fail(session_id)";

/* The same with the session's block statement failing (its data read through a view that raises for that
 * session; the statements that count or size the blocks do not read data and pass): the statement that
 * qm_keys_from_blocks runs with the index's order asked for (SET LOCAL enable_sort), whose setting back was
 * queued after the failure, so the read transaction's COMMIT was skipped with it and the transaction left
 * failed, every later session failing with 25P02 (review r12 F1). */
static const char fail_blocks[] =
    "ALTER TABLE sample_blocks RENAME TO sample_blocks_t;"
    "CREATE VIEW sample_blocks AS SELECT session_id, seq, t_ns, keys, CASE WHEN t_fail(session_id) THEN data END"
    " AS data, samples, pid_min, pid_max, pid_bits, fmt FROM sample_blocks_t /* %lld */";

static void session_fails_next_read(struct fx *f, const char *view)
{
	struct store *w = fx_open_store(f);
	int64_t a = fx_session(w, "board-fails"), b = fx_session(w, "board-next");
	uint64_t want = 0;
	for (uint64_t seq = FIRST_SEQ; seq < FIRST_SEQ + 4; seq++) {
		put_keys(w, a, seq, OLD_KEYS, 0x1000);
		put_keys(w, b, seq, OLD_KEYS + 2, 0x2000);
		want += sum_of(seq, OLD_KEYS + 2);
	}
	assert_int_equal(store_commit(w), 0);
	store_close(w);
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 "CREATE FUNCTION t_fail(sid bigint) RETURNS boolean LANGUAGE plpgsql COST 10000 AS"
		 " 'BEGIN IF sid = %lld THEN RAISE EXCEPTION ''session %% cannot be read'', sid; END IF;"
		 " RETURN true; END'",
		 (long long)a);
	fx_exec(f, sql);
	snprintf(sql, sizeof(sql), view, (long long)a);
	fx_exec(f, sql);
	struct store *r = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &r), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.series = true;
	struct query_result *qr;
	assert_int_equal(query_run(r, &qo, &qr), 0);
	assert_int_equal(qr->skipped, 1);
	assert_int_equal(qr->nsessions, 1);
	assert_int_equal(qr->sessions[0].id, b);
	assert_int_equal(qr->total, want);
	uint64_t psum = 0;
	for (size_t i = 0; i < qr->npoints; i++)
		psum += qr->points[i].count;
	assert_int_equal(psum, want);
	query_result_free(qr);
	assert_false(store_read_snapshot(r));
	store_close(r);
}

static void test_snapshot_session_fails_next_read(void **state) { session_fails_next_read(*state, fail_tasks); }

static void test_snapshot_block_statement_fails_next_read(void **state)
{
	session_fails_next_read(*state, fail_blocks);
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
	    BOTH(test_snapshot_damaged_stacks),
	    BOTH(test_snapshot_damaged_series),
	    BOTH(test_snapshot_damaged_dump_keys),
	    BOTH(test_snapshot_nested_request),
	    {"test_snapshot_renew_after_error_postgresql", test_snapshot_renew_after_error, fx_setup_pg, fx_teardown,
	     NULL},
	    {"test_snapshot_mend_without_renew_postgresql", test_snapshot_mend_without_renew, fx_setup_pg, fx_teardown,
	     NULL},
	    {"test_snapshot_session_fails_next_read_postgresql", test_snapshot_session_fails_next_read, fx_setup_pg,
	     fx_teardown, NULL},
	    {"test_snapshot_block_statement_fails_next_read_postgresql", test_snapshot_block_statement_fails_next_read,
	     fx_setup_pg, fx_teardown, NULL},
	};
	return cmocka_run_group_tests_name("query_snapshot", tests, fx_group_setup, fx_group_teardown);
}
