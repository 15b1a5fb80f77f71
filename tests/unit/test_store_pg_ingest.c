/* #40 (w40m): what PostgreSQL's ingest costs the server, cut without changing what is
 * stored, on both back ends where the behaviour is shared: the sessions' counters summed
 * per transaction (one UPDATE per session at the commit, read right by this handle before
 * it), a record's rows batched into multi-row INSERTs (PostgreSQL: a few statements for
 * many records), a record sent ahead that meets a row of its (session, seq) left without a
 * ledger row (redone exactly, not failed), and the records ledger's foreign key dropped at a
 * read-write open without a schema version (w40q); w40q's review fixes: prune against a
 * concurrent write, the ledger's rows flushed first, batches bounded in bytes. The PostgreSQL
 * cases start a real server on 127.0.0.1 and are skipped with the reason where it cannot run. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "pgserver.h"
#include "store_fx.h"
#include "sample_rec.h"
#include "store/db.h"
#include "store/store.h"
#include "store/store_kinds.h"
#include "store/store_prune.h"
#include "testproc.h"

/* A Samples record of seq: 3 keys, counts seq, seq + 1, seq + 2 (3 seq + 3 samples); the frame's
 * bytes given as 100 + seq. */
static int put_samples(struct store *s, int64_t sid, uint64_t seq, bool ahead)
{
	int32_t pid[3] = {10, 11, 12}, tid[3] = {10, 11, 12};
	uint64_t ip[3] = {0x1000, 0x2000, 0x3000}, cnt[3] = {seq, seq + 1, seq + 2};
	uint32_t stk[3] = {1, 2, 3};
	struct sample_rec_keys k = {.n = 3, .pid = pid, .tid = tid, .ip = ip, .stack_id = stk, .count = cnt};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	return ahead ? store_put_record_ahead(s, sid, &env, 100 + seq)
		     : store_put_record(s, sid, &env, 100 + seq);
}

/* 150 records in one transaction, one of them exact and a heartbeat among them: every record's
 * ledger row, interval and block stored once with its samples, the session's counters summed
 * right; on PostgreSQL in batched statements (fewer than one per record, where each record
 * took three); a replay of them all finds each stored. */
static void test_store_pg_ingest_rows_batched(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-a");
	assert_int_equal(store_commit(s), 0);
	uint64_t sent0 = store_statements_sent(s);
	uint64_t want_samples = 0, want_bytes = 0;
	for (uint64_t seq = 1; seq <= 150; seq++) {
		assert_int_equal(put_samples(s, sid, seq, seq != 70), 1);
		want_samples += 3 * seq + 3;
		want_bytes += 100 + seq;
		if (seq == 100) {
			Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
			hb.spool_dropped = 5;
			Prof__Envelope env = PROF__ENVELOPE__INIT;
			env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
			env.heartbeat = &hb;
			assert_int_equal(store_put_record(s, sid, &env, 10), 1);
		}
	}
	assert_int_equal(store_commit(s), 0);
	uint64_t sent = store_statements_sent(s) - sent0;
	if (f->b == B_PG) /* unbatched: 3 a record (ledger, interval, block), 450 and more */
		assert_true(sent > 0 && sent < 100);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 150);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 150);
	assert_int_equal(fx_q(f, "SELECT COUNT(DISTINCT seq) FROM sample_blocks"), 150);
	assert_int_equal(fx_q(f, "SELECT SUM(samples) FROM sample_blocks"), (int64_t)want_samples);
	assert_int_equal(fx_q(f, "SELECT SUM(keys) FROM sample_intervals"), 450);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 150);
	assert_int_equal(fx_q(f, "SELECT wire_bytes FROM sessions"), (int64_t)want_bytes);
	assert_int_equal(fx_q(f, "SELECT spool_dropped FROM sessions"), 5);
	assert_true(fx_q(f, "SELECT last_seen FROM sessions") > 0);
	for (uint64_t seq = 1; seq <= 150; seq++) /* replayed: each known stored */
		assert_int_equal(put_samples(s, sid, seq, false), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 150);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 150);
	store_close(s);
}

/* The session's counters are written at the commit: a read of them on the writing handle in
 * the open transaction sees its records (written first, once), a rollback takes them back, and
 * two sessions in one transaction each get their own. */
static void test_store_pg_ingest_counters_per_commit(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t a = fx_session(s, "board-b"), b = fx_session(s, "board-c");
	assert_int_equal(store_commit(s), 0);
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_int_equal(put_samples(s, a, seq, true), 1);
	assert_int_equal(put_samples(s, b, 1, true), 1);
	uint64_t n = 0;
	assert_int_equal(store_session_records(s, a, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(put_samples(s, a, 4, true), 1);
	assert_int_equal(put_samples(s, a, 5, false), 1);
	assert_int_equal(store_session_records(s, a, &n), 0);
	assert_int_equal(n, 5);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-b'"), 5);
	assert_int_equal(fx_q(f, "SELECT wire_bytes FROM sessions WHERE agent_id = 'board-b'"), 515);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-c'"), 1);
	assert_int_equal(put_samples(s, a, 6, true), 1);
	store_rollback(s);
	assert_int_equal(put_samples(s, b, 2, true), 1);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-b'"), 5);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-c'"), 2);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 7);
	store_close(s);
}

/* PostgreSQL: a record sent ahead writes its interval and block without ON CONFLICT; where a
 * row of its (session, seq) is there without a ledger row (a store damaged and salvaged, say),
 * the insert fails like a duplicate in the ledger and the records sent ahead are redone exactly:
 * the commit succeeds, each record is in the ledger once, the rows already there are kept. */
static void test_store_pg_ingest_ahead_meets_stored_rows(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-d");
	assert_int_equal(store_commit(s), 0);
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "INSERT INTO sample_blocks (session_id, seq, t_ns, keys, samples) VALUES (%lld, 2, 2000000, "
		 "0, 0)",
		 (long long)sid);
	assert_int_equal(pg_exec(f->uri, sql), 0);
	snprintf(sql, sizeof(sql),
		 "INSERT INTO sample_intervals (session_id, seq, t_ns, keys) VALUES (%lld, 4, 4000000, 0)",
		 (long long)sid);
	assert_int_equal(pg_exec(f->uri, sql), 0);
	for (uint64_t seq = 1; seq <= 5; seq++)
		assert_int_equal(put_samples(s, sid, seq, true), 1);
	/* the commit's log captured: the store says so (w40q), once */
	char logpath[] = "/tmp/spi-log-XXXXXX";
	int lfd = mkstemp(logpath);
	assert_true(lfd >= 0);
	fflush(stderr);
	int saved = dup(2);
	assert_true(saved >= 0 && dup2(lfd, 2) == 2);
	enum log_level lv = log_get_level();
	log_set_level(LOG_LEVEL_WARN);
	int crc = store_commit(s);
	log_set_level(lv);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	char logbuf[4096] = "";
	ssize_t got = pread(lfd, logbuf, sizeof(logbuf) - 1, 0);
	close(lfd);
	unlink(logpath);
	logbuf[got > 0 ? got : 0] = 0;
	fputs(logbuf, stderr);
	assert_int_equal(crc, 0);
	const char want[] = "stored without its ledger row";
	char *w = strstr(logbuf, want);
	assert_non_null(w);
	assert_null(strstr(w + 1, want)); /* one warning */
	assert_non_null(strstr(logbuf, "warn"));
	uint64_t redos = 0, dups = 0;
	store_ahead_redos(s, &redos, &dups);
	assert_int_equal(redos, 1);
	assert_int_equal(dups, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 5);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 5);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 5);
	/* kept: record 2 is acked with the stray 0-sample block, its 9 samples not stored (as the
	 * exact path does), and the warning above says so */
	assert_int_equal(fx_q(f, "SELECT samples FROM sample_blocks WHERE seq = 2"), 0);
	assert_int_equal(fx_q(f, "SELECT samples FROM sample_blocks WHERE seq = 3"), 12);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 5);
	store_close(s);
}

/* PostgreSQL (#40 w40q): the records ledger's foreign key to sessions is dropped at a read-write
 * open without a schema version (older collectors open the store): a store with the key
 * (as made before w40m) is read by a reader that drops nothing; a writer's open that cannot lock
 * records within its lock_timeout (another collector's open transaction wrote to it) goes on with
 * the key; the next open drops it; the schema version is the migrations' alone. */
static void test_store_pg_ingest_ledger_key_unversioned(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-e");
	assert_int_equal(put_samples(s, sid, 1, true), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	const char fk[] =
	    "SELECT COUNT(*) FROM pg_constraint WHERE conrelid = 'records'::regclass AND contype = 'f'";
	assert_int_equal(fx_q(f, fk), 0);
	assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6); /* none for the key */
	assert_int_equal(pg_exec(f->uri, "ALTER TABLE records ADD CONSTRAINT records_session_id_fkey FOREIGN KEY"
					 " (session_id) REFERENCES sessions(id)"),
			 0);
	assert_int_equal(fx_q(f, fk), 1);
	struct store *r = NULL; /* a reader does not alter */
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &r), 0);
	uint64_t n = 0;
	assert_int_equal(store_session_records(r, sid, &n), 0);
	assert_int_equal(n, 1);
	store_close(r);
	assert_int_equal(fx_q(f, fk), 1);
	struct store *w = fx_open_store(f); /* a writer's transaction on records: the ALTER cannot lock it */
	assert_int_equal(fx_q(f, fk), 0);
	assert_int_equal(pg_exec(f->uri, "ALTER TABLE records ADD CONSTRAINT records_session_id_fkey FOREIGN KEY"
					 " (session_id) REFERENCES sessions(id)"),
			 0);
	assert_int_equal(put_samples(w, sid, 2, false), 1);
	s = fx_open_store(f);
	assert_int_equal(fx_q(f, fk), 1); /* kept: the open went on */
	assert_int_equal(store_commit(w), 0);
	store_close(w);
	store_close(s);
	s = fx_open_store(f);
	assert_int_equal(fx_q(f, fk), 0);
	assert_int_equal(put_samples(s, sid, 1, false), 0); /* the ledger still knows it */
	assert_int_equal(put_samples(s, sid, 3, true), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 3);
	assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
}

/* Polls until a backend of this test's database waits on a lock in a statement LIKE "like" (10 s at
 * most): 1 when one does. */
static int waits_in(struct fx *f, const char *like)
{
	char sql[320];
	snprintf(sql, sizeof(sql),
		 "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
		 " AND wait_event_type = 'Lock' AND query LIKE '%s'",
		 like);
	for (int i = 0; i < 1000; i++) {
		if (pg_int(f->uri, sql) > 0)
			return 1;
		usleep(10000);
	}
	return 0;
}

static int64_t lock_waiters(struct fx *f)
{
	return fx_q(f, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
		    " AND wait_event_type = 'Lock'");
}

struct prune_arg {
	struct store *s;
	int64_t sid;
	uint64_t rows;
	int rc;
};

static void *prune_thread(void *arg)
{
	struct prune_arg *a = arg;
	a->rc = store_delete_session(a->s, a->sid, &a->rows);
	return NULL;
}

/* PostgreSQL (#40 w40q): collector A prunes session X while collector B, its agent reconnected,
 * has upserted X's Hello (the row locked) and written records: A waits on B's lock, B commits (its
 * records acked), then A deletes the session and, locking the session's row first, B's committed
 * rows with it: nothing is left without its session (the ledger has no foreign key). B's next
 * commit to the pruned session fails (-ENOENT) and stores nothing. */
static void test_store_pg_ingest_prune_meets_write(void **state)
{
	struct fx *f = *state;
	struct store *b = fx_open_store(f);
	int64_t sid = fx_session(b, "board-f");
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(fx_session(b, "board-f"), sid); /* reconnected: the row locked until B commits */
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_int_equal(put_samples(b, sid, seq, true), 1);
	struct store *a = fx_open_store(f);
	struct prune_arg pa = {.s = a, .sid = sid};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, prune_thread, &pa), 0);
	int waited = waits_in(f, "%sessions%");
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(waited);
	assert_int_equal(pa.rc, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sessions"), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 0);
	assert_int_equal(put_samples(b, sid, 4, true), 1);
	assert_int_equal(store_commit(b), -ENOENT);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 0);
	store_close(a);
	store_close(b);
}

struct ahead_arg {
	struct store *s;
	int64_t sid;
	int rc;
};

static void *ahead_thread(void *arg)
{
	struct ahead_arg *a = arg;
	a->rc = 0;
	for (uint64_t seq = 1; seq <= 140 && a->rc == 0; seq++)
		if (put_samples(a->s, a->sid, seq, true) != 1)
			a->rc = -1;
	if (a->rc == 0)
		a->rc = store_commit(a->s);
	return NULL;
}

/* B of chunk_no_deadlock: seqs 1..140 sent ahead, each stored or found a duplicate (0), no error */
static void *ahead_dup_thread(void *arg)
{
	struct ahead_arg *a = arg;
	a->rc = 0;
	for (uint64_t seq = 1; seq <= 140 && a->rc >= 0; seq++)
		a->rc = put_samples(a->s, a->sid, seq, true);
	if (a->rc >= 0)
		a->rc = store_commit(a->s);
	else
		store_rollback(a->s);
	return NULL;
}

/* PostgreSQL (#40 w40q): every flush of batched rows sends the records ledger's rows first, the
 * second flush of a transaction too (its rows were queued after the interval's and block's of the
 * record that filled the first): B, sending seqs 1..140 ahead that A holds from 65 on, never holds
 * ledger rows A would wait for while waiting on A (a deadlock), and stores them all once A rolls
 * back. With key ids (#40 w45h): B waits on the session's row, taken before any of the session's
 * rows (store_tally_lock), holding nothing of the session, not on the dictionary chunk (first id 0,
 * A's seq 65 holds one too) with its ledger rows 1..64 held. */
static void test_store_pg_ingest_ledger_first(void **state)
{
	struct fx *f = *state;
	struct store *a = fx_open_store(f);
	int64_t sid = fx_session(a, "board-g");
	assert_int_equal(store_commit(a), 0);
	for (uint64_t seq = 65; seq <= 140; seq++)
		assert_int_equal(put_samples(a, sid, seq, true), 1);
	uint64_t n = 0;
	assert_int_equal(store_session_records(a, sid, &n), 0); /* all of A's rows on the server */
	assert_int_equal(n, 76);
	struct store *b = fx_open_store(f);
	struct ahead_arg ba = {.s = b, .sid = sid};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, ahead_thread, &ba), 0);
	int waited = waits_in(f, "%");
	int64_t on_session = fx_q(f, "SELECT COUNT(*) FROM pg_stat_activity WHERE datname = current_database()"
				  " AND wait_event_type = 'Lock' AND query LIKE 'SELECT 1 FROM sessions %'");
	int64_t waiting = lock_waiters(f);
	int64_t b_ledger = fx_q(f, "SELECT COUNT(*) FROM records WHERE seq < 65"); /* uncommitted: 0 */
	store_rollback(a);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_true(waited);
	assert_int_equal(waiting, 1);
	assert_int_equal(on_session, 1);
	assert_int_equal(b_ledger, 0);
	assert_int_equal(ba.rc, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 140);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 140);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 140);
	store_close(a);
	store_close(b);
}

/* PostgreSQL (#40 w45h, review r7 #5): with key ids, A holds seqs 65..140 and the session's first
 * dictionary chunk (first id 0); B sends seqs 1..140 ahead; A then stores seqs 1..64 too and
 * commits. Without the session's row locked first, B held ledger rows 1..64 and waited on A's chunk
 * while A waited on B's seq 1: a deadlock (40P01 after deadlock_timeout, one side's batch rolled
 * back). With it B waits on the session's row holding nothing: A commits all 140, B's 140 are
 * duplicates, each record stored once, every id of the dictionary once. */
static void test_store_pg_ingest_chunk_no_deadlock(void **state)
{
	struct fx *f = *state;
	struct store *a = fx_open_store(f);
	int64_t sid = fx_session(a, "board-k");
	assert_int_equal(store_commit(a), 0);
	for (uint64_t seq = 65; seq <= 140; seq++)
		assert_int_equal(put_samples(a, sid, seq, true), 1);
	uint64_t n = 0;
	assert_int_equal(store_session_records(a, sid, &n), 0);
	assert_int_equal(n, 76);
	struct store *b = fx_open_store(f);
	struct ahead_arg ba = {.s = b, .sid = sid};
	pthread_t t;
	assert_int_equal(pthread_create(&t, NULL, ahead_dup_thread, &ba), 0);
	assert_true(waits_in(f, "%")); /* B waits on A (at most 10 s) */
	int arc = 0;
	for (uint64_t seq = 1; seq <= 64 && arc >= 0; seq++)
		arc = put_samples(a, sid, seq, false);
	if (arc >= 0)
		arc = store_commit(a);
	else
		store_rollback(a);
	assert_int_equal(pthread_join(t, NULL), 0);
	assert_int_equal(arc, 0);
	assert_int_equal(ba.rc, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 140);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 140);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 140);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_key_ids WHERE first_id = 0"), 1);
	store_close(a);
	store_close(b);
}

/* PostgreSQL (#40 w40q): batched rows are kept up to 64 rows and 1 MiB of values: 20 records of
 * about 100 kB blocks each (keys that do not compress) go in several flushes, the bytes kept unsent
 * never past 1 MiB (2 MB were kept before: bounded by rows only), and every record is stored. */
static void test_store_pg_ingest_batch_bytes_bounded(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-h");
	assert_int_equal(store_commit(s), 0);
	enum { N = 8192 };
	int32_t *pid = calloc(N, sizeof(*pid)), *tid = calloc(N, sizeof(*tid));
	uint64_t *ip = calloc(N, sizeof(*ip)), *cnt = calloc(N, sizeof(*cnt));
	uint32_t *stk = calloc(N, sizeof(*stk));
	assert_true(pid && tid && ip && cnt && stk);
	uint64_t x = 88172645463325252ull;
	for (uint64_t seq = 1; seq <= 20; seq++) {
		for (size_t i = 0; i < N; i++) {
			x ^= x << 13, x ^= x >> 7, x ^= x << 17; /* xorshift: keys that do not compress */
			pid[i] = (int32_t)(x & 0x3fffff);
			tid[i] = (int32_t)((x >> 22) & 0x3fffff);
			ip[i] = x >> 8;
			stk[i] = (uint32_t)(x >> 40);
			cnt[i] = 1 + (x & 7);
		}
		struct sample_rec_keys k = {.n = N, .pid = pid, .tid = tid, .ip = ip, .stack_id = stk, .count = cnt};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, seq, &k);
		assert_int_equal(store_put_record_ahead(s, sid, &env, 1000), 1);
	}
	assert_int_equal(store_commit(s), 0);
	size_t peak = store_batch_bytes_peak(s);
	fprintf(stderr, "batched bytes kept at most: %zu\n", peak);
	assert_true(peak > 0);
	assert_true(peak <= (size_t)1 << 20);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 20);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 20);
	/* the keys in the session's dictionary, the blocks their ids (#40 w45a): both batched */
	assert_true(fx_q(f, "SELECT (SELECT SUM(length(data)) FROM sample_blocks) + (SELECT SUM(length(data))"
			    " FROM sample_key_ids)") > 1500000);
	store_close(s);
	free(pid);
	free(tid);
	free(ip);
	free(cnt);
	free(stk);
}

static int sqlite_exec(const char *path, const char *sql)
{
	sqlite3 *h = NULL;
	int rc = sqlite3_open(path, &h) == SQLITE_OK ? sqlite3_exec(h, sql, NULL, NULL, NULL) : -1;
	sqlite3_close(h);
	return rc;
}

/* #40 (w40q): the counters' UPDATE at the commit never moves last_seen back: a later time written
 * meanwhile (a heartbeat of the same transaction, another collector) stays. */
static void test_store_pg_ingest_last_seen_kept(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-i");
	assert_int_equal(put_samples(s, sid, 1, true), 1);
	assert_int_equal(store_commit(s), 0);
	if (f->b == B_PG)
		assert_int_equal(pg_exec(f->uri, "UPDATE sessions SET last_seen = 4102444800"), 0);
	else
		assert_int_equal(sqlite_exec(f->uri, "UPDATE sessions SET last_seen = 4102444800"), 0);
	assert_int_equal(put_samples(s, sid, 2, true), 1);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT last_seen FROM sessions"), 4102444800);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions"), 2);
	store_close(s);
}

static int count_session(const struct store_session_row *row, void *arg)
{
	(void)row;
	++*(int *)arg;
	return 0;
}

/* PostgreSQL (#40 w40q): the session list read on the writing handle while a record sent ahead
 * is a duplicate (another collector stored its seq): the list writes this handle's counters
 * first, which finds the duplicate and redoes the records exactly; the list and the commit then
 * succeed, each record stored once. */
static void test_store_pg_ingest_list_redoes_ahead(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "board-j");
	assert_int_equal(store_commit(s), 0);
	char sql[160];
	snprintf(sql, sizeof(sql), "INSERT INTO records (session_id, seq, kind, bytes) VALUES (%lld, 2, 'samples', 1)",
		 (long long)sid);
	assert_int_equal(pg_exec(f->uri, sql), 0);
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_int_equal(put_samples(s, sid, seq, true), 1);
	int n = 0;
	assert_int_equal(store_list_sessions(s, count_session, &n), 0);
	assert_int_equal(n, 1);
	assert_int_equal(store_commit(s), 0);
	uint64_t redos = 0, dups = 0;
	store_ahead_redos(s, &redos, &dups);
	assert_int_equal(redos, 1);
	assert_int_equal(dups, 1);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 3);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 2);
	store_close(s);
}

/* #40 (w46a): the plan of a report's slice of sample blocks, a range of one session's t_ns read in
 * (t_ns, seq) order (the statement of collector/query/query_blocks.c), on the store's own connection
 * opened as collector report opens it, over 20,000 blocks of ~700 bytes (a 10^8-sample store has
 * 252,526) of which the middle 40 %, in a read transaction with the index's order asked for as
 * qm_keys_from_blocks asks (store_read_index_order): plan lines in plan. analyze: with the table's statistics, else a
 * store just written, never analyzed (autovacuum off on the table). */
static void block_plan(struct fx *f, bool analyze, char *plan, size_t size)
{
	struct store *s = fx_open_store(f);
	store_close(s);
	if (!analyze)
		fx_exec(f, "ALTER TABLE sample_blocks SET (autovacuum_enabled = false)");
	fx_exec(f, "INSERT INTO sample_blocks (session_id, seq, t_ns, keys, data, samples, pid_min, pid_max,"
		   " pid_bits, fmt) SELECT 1, g, g::bigint * 1000000000, 10, decode(repeat(md5(g::text), 44),"
		   " 'hex'), 10, 1000, 1000, 1, 1 FROM generate_series(1, 20000) g");
	if (analyze)
		fx_exec(f, "ANALYZE sample_blocks");
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	int reading = store_read_begin(s); /* as query_run reads, and qm_keys_from_blocks around the slice */
	assert_int_equal(reading, 1);
	store_read_index_order(s, true);
	struct db_stmt *st = store_stmt(s, "EXPLAIN SELECT data, seq, fmt, t_ns FROM sample_blocks WHERE session_id"
					   " = ?1 AND t_ns >= ?2 AND t_ns < ?3 ORDER BY t_ns, seq");
	assert_non_null(st);
	db_bind_i64(st, 1, 1);
	db_bind_i64(st, 2, 4000 * 1000000000ll);
	db_bind_i64(st, 3, 12000 * 1000000000ll);
	plan[0] = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		const char *line = db_col_text(st, 0);
		size_t n = strlen(plan);
		snprintf(plan + n, size - n, "%s\n", line ? line : "");
	}
	db_reset(st);
	assert_int_equal(rc, 0);
	store_read_index_order(s, false);
	store_read_end(s, reading);
	store_close(s);
}

/* A plan's node that sorts the rows it is given whole (not an incremental sort of the index's order). */
static bool sorts_whole(const char *plan)
{
	for (const char *l = plan; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		l += strspn(l, " ");
		if (strncmp(l, "->  ", 4) == 0)
			l += 4;
		if (strncmp(l, "Sort  (", 7) == 0) /* a node, not "Sort Key:" */
			return true;
	}
	return false;
}

/* With statistics: on the (session_id, t_ns) index. At PostgreSQL's default planner settings, which the
 * collector's sessions had, a parallel scan of the whole table and a sort (a report of 10^8 samples read
 * the table two or three times, bench/RESULTS.md w46a). */
static void test_store_pg_ingest_block_slices_use_index(void **state)
{
	char plan[4096];
	block_plan(*state, true, plan, sizeof(plan));
	if (!strstr(plan, "Index Scan using sample_blocks_keys") || strstr(plan, "Seq Scan") || strstr(plan, "Gather") ||
	    sorts_whole(plan))
		fail_msg("the middle 40 %% of the blocks not planned on the index:\n%s", plan);
}

/* Without statistics (a store just written: the bench's report 20 s after its fill): on the index, its
 * order kept; at the default settings an index scan and a sort of the whole slice (on the bench's 10^8
 * samples 76 MB sorted on disk for one slice of 103,739 blocks, the planner expecting 39 rows). */
static void test_store_pg_ingest_block_slices_unsorted_without_stats(void **state)
{
	char plan[4096];
	block_plan(*state, false, plan, sizeof(plan));
	if (!strstr(plan, "Index Scan using sample_blocks_keys") || strstr(plan, "Seq Scan") || sorts_whole(plan))
		fail_msg("the middle 40 %% of a store without statistics sorted whole:\n%s", plan);
}

#define BOTH(t)                                                                                              \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL},                                                     \
	{                                                                                                    \
#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL                                                \
	}

int main(void)
{
	log_init("test_store_pg_ingest", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    BOTH(test_store_pg_ingest_rows_batched),
	    BOTH(test_store_pg_ingest_counters_per_commit),
	    BOTH(test_store_pg_ingest_last_seen_kept),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_ahead_meets_stored_rows, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_ledger_key_unversioned, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_prune_meets_write, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_ledger_first, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_chunk_no_deadlock, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_batch_bytes_bounded, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_list_redoes_ahead, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_block_slices_use_index, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_pg_ingest_block_slices_unsorted_without_stats, fx_setup_pg,
					    fx_teardown),
	};
	return cmocka_run_group_tests_name("store_pg_ingest", tests, fx_group_setup, fx_group_teardown);
}
