/* Records sent ahead (collector/store/store_ahead.c, #40) at their edges, on
 * PostgreSQL (a real server started by the test on 127.0.0.1; skipped with the
 * reason when it cannot run) and, where the same calls exist, SQLite (there
 * store_put_record_ahead is the exact path: the same figures, no redo):
 * - past the 16 MiB of kept copies (STORE_AHEAD_BYTES): the records sent ahead
 *   are settled and their copies dropped, never more than the bound kept; a
 *   duplicate among them (another handle stored its seq) is redone at the
 *   settle and another at the commit: every record and its samples once;
 * - a ROLLBACK TO SAVEPOINT that fails (the connection terminated by
 *   pg_terminate_backend after a duplicate was reported): the commit fails,
 *   nothing of the batch is stored, and the same store handle stores the
 *   records again (reconnected) exactly once. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "log.h"
#include "pgserver.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "store/store_ahead.h"
#include "store/store_priv.h"
#include "store_fx.h"
#include "testproc.h"

static int64_t session(struct store *s, const char *agent)
{
	int64_t id = fx_session(s, agent);
	assert_int_equal(store_commit(s), 0);
	return id;
}

/* A large Samples record: KEYS keys of one sample each, addresses that differ per record
 * (~190 KB packed: past libpq's 64 KiB output threshold, so each is on the wire when sent). */
enum { KEYS = 16384 };

static int put_big(struct store *s, int64_t sid, uint64_t seq, bool ahead)
{
	static int32_t pid[KEYS], tid[KEYS];
	static uint64_t ip[KEYS], count[KEYS];
	static uint32_t stack[KEYS];
	for (size_t i = 0; i < KEYS; i++) {
		pid[i] = tid[i] = 4000 + (int32_t)(i % 8);
		ip[i] = 0x40000000ull + (seq << 20) + 16 * i;
		count[i] = 1;
		stack[i] = 0;
	}
	struct sample_rec_keys k = {KEYS, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	return ahead ? store_put_record_ahead(s, sid, &env, 1000) : store_put_record(s, sid, &env, 1000);
}

static uint64_t samples_stored(struct fx *f)
{
	struct store *s;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	uint64_t total = r->total;
	query_result_free(r);
	query_opts_free(&qo);
	store_close(s);
	return total;
}

/* Past STORE_AHEAD_BYTES of kept copies: settled (one round trip), the copies dropped; seq 20
 * (stored by the other handle) is redone at that settle, seq 118 at the commit. */
static void test_store_ahead_kept_copies_bounded(void **state)
{
	struct fx *f = *state;
	enum { RECORDS = 120 };
	struct store *a = fx_open_store(f), *b = fx_open_store(f);
	int64_t sa = session(a, "board-big");
	int64_t sb = session(b, "board-big");
	assert_int_equal(put_big(a, sa, 20, false), 1);
	assert_int_equal(put_big(a, sa, 118, false), 1);
	assert_int_equal(store_commit(a), 0);
	size_t most = 0, settles = 0, prev = 0;
	int stored = 0;
	for (uint64_t seq = 1; seq <= RECORDS; seq++) {
		int rc = put_big(b, sb, seq, true);
		assert_true(rc == 0 || rc == 1); /* PostgreSQL: 1 each (not waited for); SQLite: exact */
		stored += rc;
		/* memory: the kept copies never past the bound; a settle drops them */
		assert_true(b->ahead_bytes <= STORE_AHEAD_BYTES);
		most = b->ahead_bytes > most ? b->ahead_bytes : most;
		settles += b->ahead_bytes < prev;
		prev = b->ahead_bytes;
	}
	uint64_t redos = 0, dups = 0;
	store_ahead_redos(b, &redos, &dups);
	assert_int_equal(redos, f->b == B_PG ? 1 : 0); /* seq 20's, at the settle past the bound */
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(b->nahead, 0);
	assert_null(b->ahead);
	store_ahead_redos(b, &redos, &dups);
	fprintf(stderr, "kept copies: at most %zu bytes, %zu settles; %llu redos, %llu duplicates redone\n",
		most, settles, (unsigned long long)redos, (unsigned long long)dups);
	if (f->b == B_PG) {
		assert_true(most >
			    STORE_AHEAD_BYTES - 400000); /* the bound was reached, not only approached */
		assert_int_equal(settles, 1);
		assert_int_equal(redos, 2);
		assert_int_equal(dups, 2);
		assert_int_equal(stored, RECORDS);
	} else {
		assert_int_equal(most, 0);
		assert_int_equal(redos, 0);
		assert_int_equal(stored, RECORDS - 2);
	}
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), RECORDS);
	assert_int_equal(fx_q(f, "SELECT COUNT(DISTINCT seq) FROM sample_intervals"), RECORDS);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), RECORDS);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-big'"), RECORDS);
	store_close(a);
	store_close(b);
	assert_int_equal(samples_stored(f), (uint64_t)RECORDS * KEYS);
}

/* The other backends of this database (the store handles'), from a connection of the test. */
static const char others[] =
    "FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
    " AND backend_type = 'client backend'";

static int64_t wait_others(struct fx *f, const char *cond, int64_t want)
{
	char sql[400];
	snprintf(sql, sizeof(sql), "SELECT COUNT(*) %s%s", others, cond);
	int64_t n = -1;
	/* on two polls in a row (50 ms apart): a backend between two reads of one batch's bytes
	 * may be seen waiting for a moment */
	for (int i = 0, hits = 0; i < 100; i++) {
		n = pg_int(f->uri, sql);
		hits = n == want ? hits + 1 : 0;
		if (hits == 2)
			break;
		usleep(50000);
	}
	return n;
}

/* A duplicate reported by the server while records sent ahead are in flight, then the backend
 * terminated (before the redo, or its ROLLBACK TO SAVEPOINT, can run): the commit fails, nothing of
 * the batch is stored (nothing may be acked), and the handle stores the records again on a new
 * connection, each once. */
static void test_store_ahead_rollback_to_fails(void **state)
{
	struct fx *f = *state;
	struct store *b = fx_open_store(f);
	int64_t sb = session(b, "board-cut");
	struct store *a = fx_open_store(f);
	int64_t sa = session(a, "board-cut");
	assert_int_equal(put_big(a, sa, 2, false), 1);
	assert_int_equal(store_commit(a), 0);
	store_close(a); /* only b's backend is left to terminate */
	/* records sent ahead keep their ledger rows, intervals and blocks in multi-row INSERTs of up to 64
	 * rows and 1 MiB (db_pg_batch.c, PG_BATCH_ROWS): 65 of them put the first 64 ledger rows on the
	 * wire (the ledger's statement first), seq 2 among them */
	for (uint64_t seq = 1; seq <= 65; seq++)
		assert_int_equal(put_big(b, sb, seq, true), 1); /* 2 fails on the server, not seen yet */
	/* the server has read what was sent (its error for seq 2 is on the wire) and waits for more:
	 * 'active' (a pipeline that met an error skips to its Sync and reports no idle state until
	 * then), not the 'idle' it waited in, also on ClientRead, after session()'s commit */
	assert_int_equal(wait_others(f, " AND state = 'active' AND wait_event = 'ClientRead'", 1), 1);
	assert_int_equal(pg_int(f->uri,
				"SELECT COUNT(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity"
				" WHERE datname = current_database() AND pid <> pg_backend_pid()"
				" AND backend_type = 'client backend') t"),
			 1);
	assert_int_equal(wait_others(f, "", 0), 0);
	int rc = store_commit(b);
	uint64_t redos = 0, dups = 0;
	store_ahead_redos(b, &redos, &dups);
	fprintf(stderr, "commit after the backend was terminated: %s; %llu redos\n", strerror(-rc),
		(unsigned long long)redos);
	assert_true(rc < 0);
	/* Where the commit learns of the lost connection depends on what is left to send: before the
	 * batched rows (w40m, db_pg_batch.c) the duplicate was read first and the redo's ROLLBACK TO
	 * failed (1 redo); now the commit first sends the batch's last rows and that send fails (0
	 * redos): either way nothing of the batch is stored or acked, which is what is asserted below. */
	assert_true(redos <= 1);
	assert_int_equal(dups, 0);
	assert_false(store_in_tx(b));
	assert_int_equal(b->nahead, 0);
	assert_null(b->ahead);
	/* nothing of b's batch stored: the agent, not acked, sends them again */
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 1);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 1);
	/* the same handle serves on: a new connection, every record once */
	int stored = 0;
	for (uint64_t seq = 1; seq <= 6; seq++) {
		int prc = put_big(b, sb, seq, seq > 2);
		assert_true(prc == 0 || prc == 1);
		stored += prc;
	}
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(stored, 5);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 6);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 6);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-cut'"), 6);
	store_close(b);
	assert_int_equal(samples_stored(f), 6ull * KEYS);
}

int main(void)
{
	log_init("test_store_ahead", getenv("TSA_DEBUG") ? LOG_LEVEL_DEBUG : LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_store_ahead_kept_copies_bounded, fx_setup_sqlite,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_ahead_kept_copies_bounded, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_ahead_rollback_to_fails, fx_setup_pg, fx_teardown),
	};
	return cmocka_run_group_tests_name("store_ahead", tests, fx_group_setup, fx_group_teardown);
}
