/* A damaged SQLite store (issue 25 item 5): --check on open refuses it and
 * writes nothing into it; the quick check stops at its time budget; damage
 * met while writing marks the store damaged, and the collector's loop then
 * acks nothing more (every agent gets an Error and keeps its records);
 * `collector recover` copies what can still be read into a new store. Real
 * files under /tmp, damaged by overwriting pages with (seeded) random bytes. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "log.h"
#include "net.h"
#include "sample_rec.h"
#include "server/server.h"
#include "srvclient.h"
#include "store/db.h"
#include "store/store.h"
#include "store/store_sample_keys.h"
#include "testproc.h"

#define PAGE 4096
#define NREC 20000 /* heartbeats: the records ledger spans most of the file's pages */

struct fx {
	char dir[256], db[300], out[300];
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->dir, sizeof(f->dir), "stcheck") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/store.db", f->dir);
	snprintf(f->out, sizeof(f->out), "%s/recovered.db", f->dir);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tp_rm_rf(f->dir);
	free(f);
	return 0;
}

/* A store with one session of n heartbeat records (seq 1..n). */
static void make_store(const char *path, uint64_t n)
{
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "board";
	h.boot_id = 1;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(s, &h, "peer", &sid, &max_seq, NULL), 0);
	for (uint64_t q = 1; q <= n; q++) {
		Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
		hb.t_ns = q;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.seq = q;
		env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
		env.heartbeat = &hb;
		assert_int_equal(store_put_record(s, sid, &env, 20), 1);
		if (q % 1000 == 0)
			assert_int_equal(store_commit(s), 0);
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s); /* the last connection: the WAL is checkpointed into the file */
}

static off_t file_size(const char *path)
{
	struct stat sb;
	assert_int_equal(stat(path, &sb), 0);
	return sb.st_size;
}

/* Overwrite [off, off + len) with bytes of a fixed xorshift sequence. */
static void damage(const char *path, off_t off, size_t len)
{
	uint8_t *b = malloc(len);
	assert_non_null(b);
	uint64_t x = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < len; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		b[i] = (uint8_t)x;
	}
	int fd = open(path, O_WRONLY);
	assert_true(fd >= 0);
	assert_int_equal(pwrite(fd, b, len, off), (ssize_t)len);
	close(fd);
	free(b);
}

static char *slurp_bytes(const char *path, size_t *len)
{
	*len = (size_t)file_size(path);
	char *b = malloc(*len ? *len : 1);
	int fd = open(path, O_RDONLY);
	assert_true(b && fd >= 0);
	assert_int_equal(read(fd, b, *len), (ssize_t)*len);
	close(fd);
	return b;
}

/* 4 KiB of random bytes in the middle of the file (one page): refused by the
 * quick and the full check, for writing and reading; not a byte written. */
static void test_store_check_refuses_damaged_store(void **state)
{
	struct fx *f = *state;
	make_store(f->db, NREC);
	off_t size = file_size(f->db);
	assert_true(size >= 16 * PAGE);
	damage(f->db, size / 2 / PAGE * PAGE, PAGE);
	size_t before_len;
	char *before = slurp_bytes(f->db, &before_len);
	struct store *s = (struct store *)1;
	assert_int_equal(store_open(f->db, STORE_CHECK_QUICK, &s), -EUCLEAN);
	assert_null(s);
	assert_int_equal(store_open(f->db, STORE_CHECK_FULL, &s), -EUCLEAN);
	assert_int_equal(store_open(f->db, STORE_CHECK_QUICK | STORE_READ_ONLY, &s), -EUCLEAN);
	size_t after_len;
	char *after = slurp_bytes(f->db, &after_len);
	assert_int_equal(after_len, before_len);
	assert_memory_equal(after, before, before_len); /* nothing written into it */
	free(before);
	free(after);
	char wal[320];
	snprintf(wal, sizeof(wal), "%s-wal", f->db);
	assert_true(access(wal, F_OK) != 0 || file_size(wal) == 0);
	/* --check off opens it (reading what is still readable is the user's choice) */
	assert_int_equal(store_open(f->db, STORE_READ_ONLY, &s), 0);
	store_close(s);
}

/* The quick check of a large store stops at its budget (a watchdog interrupts
 * SQLite's b-tree check) and says so; without a budget it runs through. */
static void test_store_check_quick_budget(void **state)
{
	struct fx *f = *state;
	struct db *d;
	assert_int_equal(db_open_sqlite(f->db, false, &d), 0);
	assert_int_equal(db_exec(d,
				 "CREATE TABLE t (a INTEGER PRIMARY KEY, b BLOB); CREATE INDEX tb ON t(b);"
				 "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 30000)"
				 " INSERT INTO t (b) SELECT randomblob(500) FROM c;",
				 "fill"),
			 0);
	char why[256];
	uint64_t t0 = clock_mono_ns();
	assert_int_equal(db_check(d, DB_CHECK_QUICK, 1, why, sizeof(why)), 1);
	double ms = (double)(clock_mono_ns() - t0) / 1e6;
	uint64_t t1 = clock_mono_ns();
	assert_int_equal(db_check(d, DB_CHECK_QUICK, 0, why, sizeof(why)), 0);
	double whole = (double)(clock_mono_ns() - t1) / 1e6;
	fprintf(stderr, "quick_check of %lld KiB: stopped after %.1f ms (budget 1 ms), whole %.1f ms\n",
		(long long)(file_size(f->db) / 1024), ms, whole);
	assert_false(db_damaged(d));
	db_close(d);
}

/* Damage met while writing (checks off): the write fails and the store says it is damaged. */
static void test_store_check_damage_found_while_writing(void **state)
{
	struct fx *f = *state;
	make_store(f->db, NREC);
	off_t size = file_size(f->db);
	damage(f->db, size / 2 / PAGE * PAGE, (size_t)(size - size / 2 / PAGE * PAGE)); /* the newest pages */
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	assert_false(store_damaged(s));
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "board";
	h.boot_id = 1;
	int64_t sid;
	uint64_t max_seq;
	int rc = store_session_open(s, &h, "peer", &sid, &max_seq, NULL);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = NREC + 1;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	if (rc == 0)
		rc = store_put_record(s, sid, &env, 20);
	if (rc >= 0)
		rc = store_commit(s);
	assert_true(rc < 0);
	assert_true(store_damaged(s));
	store_close(s);
}

/* The collector's loop over a store that turns out damaged: the agent's Hello
 * and record are not acked, it gets an Error saying so, and the loop stops. */
static void test_store_check_server_stops_acking_on_damage(void **state)
{
	struct fx *f = *state;
	make_store(f->db, NREC);
	off_t size = file_size(f->db);
	damage(f->db, size / 2 / PAGE * PAGE, (size_t)(size - size / 2 / PAGE * PAGE));
	struct store *st;
	assert_int_equal(store_open(f->db, 0, &st), 0); /* --check off */
	struct server *srv;
	assert_int_equal(server_open(st, &(struct server_options){.listen = "127.0.0.1:0", .signal_fd = -1}, &srv), 0);
	struct client c;
	client_open(&c, srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "board", .boot = 1});
	add_counters(&buf, &len, NREC + 1);
	send_and_free(&c, &buf, &len);
	int rc = 0;
	for (int i = 0; i < 400 && rc == 0; i++)
		rc = server_step(srv, 5);
	assert_int_equal(rc, -EUCLEAN);
	assert_int_equal(server_step(srv, 0), -EUCLEAN); /* stays stopped */
	Prof__Envelope *env = client_next(&c, srv);
	assert_non_null(env);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ERROR); /* no Ack first */
	assert_non_null(strstr(env->error->message, "store is damaged"));
	prof__envelope__free_unpacked(env, NULL);
	assert_null(client_next(&c, srv));
	client_close(&c);
	server_close(srv);
	store_close(st);
}

/* collector recover's copy: a store with one damaged page gives a sound new
 * store (it passes the full check) with every row that could be read. */
static void test_store_check_salvage_copies_what_is_readable(void **state)
{
	struct fx *f = *state;
	make_store(f->db, NREC);
	off_t size = file_size(f->db);
	damage(f->db, size / 2 / PAGE * PAGE, PAGE); /* a leaf of the records ledger */
	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	assert_true(ss.damaged_tables >= 1);
	struct store *s;
	assert_int_equal(store_open(f->out, STORE_CHECK_FULL, &s), 0);
	store_close(s);
	int64_t records = tp_db_int(f->out, "SELECT COUNT(*) FROM records");
	fprintf(stderr, "recovered %lld of %d records (%llu rows in all)\n", (long long)records, NREC,
		(unsigned long long)ss.rows);
	assert_true(records > NREC - PAGE / 8 && records < NREC); /* one leaf page holds a few hundred */
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sessions"), 1);
	assert_int_equal(store_salvage(f->db, f->out, &ss), -EEXIST); /* never over an existing file */
}

/* #40 w45a: a store of schema version 1 (before the key ids: no sample_key_ids table, sample_blocks without
 * its fmt column) is recovered into a version 2 store: every table it has copied by its own columns, its
 * blocks whole keys (fmt NULL). */
static void test_store_check_salvage_version1_store(void **state)
{
	struct fx *f = *state;
	make_store(f->db, 10);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(db,
			 "DROP TABLE sample_key_ids; CREATE TABLE b_old (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
			 " t_ns INTEGER NOT NULL, keys INTEGER, data BLOB, samples INTEGER, pid_min INTEGER, pid_max"
			 " INTEGER, pid_bits INTEGER, PRIMARY KEY(session_id, seq));"
			 "INSERT INTO b_old VALUES (1, 5, 5000, 1, X'020002030405', 5, 1, 1, 2);"
			 "DROP TABLE sample_blocks; ALTER TABLE b_old RENAME TO sample_blocks; PRAGMA user_version = 1;",
			 NULL, NULL, NULL),
	    SQLITE_OK);
	sqlite3_close(db);
	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	assert_int_equal(ss.damaged_tables, 0);
	assert_int_equal(tp_db_int(f->out, "PRAGMA user_version"), STORE_SCHEMA_VERSION);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM records"), 10);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_blocks WHERE seq = 5 AND fmt IS NULL AND"
					   " data = X'020002030405' AND samples = 5"),
			 1);
}

/* #40 w46c (review r7 #8): a store whose blocks hold key ids loses, on one unreadable page, the chunk of
 * sample_key_ids that holds a session's last keys while the blocks that refer to them read. A record of n
 * keys (pid 500): with seed, its first keys' ips from a xorshift of seed (a chunk zstd cannot shrink, on
 * overflow pages; n of them, or n / 2 with base too), the others base + 16 i; counts 1 + (i + seq) % 3.
 * The samples of its keys in *seeded. */
#define KEYS_MAX 800
static uint64_t put_ids_rec(struct store *s, int64_t sid, uint64_t seq, size_t n, uint64_t base, uint64_t seed,
			    uint64_t *seeded)
{
	static int32_t pid[KEYS_MAX], tid[KEYS_MAX];
	static uint64_t ip[KEYS_MAX], count[KEYS_MAX];
	static uint32_t stack[KEYS_MAX];
	uint64_t x = 0x2545f4914f6cdd1dull ^ seed, sum = 0;
	size_t nseeded = !seed ? 0 : base ? n / 2 : n;
	assert_true(n <= KEYS_MAX);
	*seeded = 0;
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13, x ^= x >> 7, x ^= x << 17;
		pid[i] = tid[i] = 500;
		ip[i] = i < nseeded ? x : base + 16 * i;
		count[i] = 1 + (i + seq) % 3;
		stack[i] = (uint32_t)(i % 7);
		sum += count[i];
		*seeded += i < nseeded ? count[i] : 0;
	}
	struct sample_rec_keys k = {n, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_commit(s), 0);
	return sum;
}

static int add_count(const struct store_key_row *r, void *arg)
{
	*(uint64_t *)arg += r->count;
	return 0;
}

/* The samples per ip of session sid's keys at ips base + 16 i (i < 16), in c[16]; *other those at any
 * other ip below 0x100000 (the test's unseeded keys; a seeded ip is above it except by chance). */
struct by_ip {
	uint64_t base, c[16], other;
};
static int add_by_ip(const struct store_key_row *r, void *arg)
{
	struct by_ip *b = arg;
	if (r->ip >= b->base && r->ip < b->base + 16 * 16 && (r->ip - b->base) % 16 == 0)
		b->c[(r->ip - b->base) / 16] += r->count;
	else if (r->ip < 0x100000)
		b->other += r->count;
	return 0;
}

/* The samples of session sid as every reader decodes them; -1 where a block does not decode. */
static int64_t samples_of(const char *path, int64_t sid)
{
	struct store *s;
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	uint64_t t = 0;
	int rc = store_list_sample_keys(s, sid, add_count, &t);
	store_close(s);
	return rc == 0 ? (int64_t)t : -1;
}

static void test_store_check_salvage_key_ids(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	int64_t a, b;
	assert_int_equal(sample_rec_session(s, "board-a", &a), 0);
	assert_int_equal(sample_rec_session(s, "board-b", &b), 0);
	uint64_t kept = 0, lost = 0, sum_b = 0, sd;
	for (uint64_t q = 1; q <= 4; q++) { /* four chunks of 16 ids (0..63) and four of b's */
		kept += put_ids_rec(s, a, q, 16, 0x10000 * q, 0, &sd);
		sum_b += put_ids_rec(s, b, q, 16, 0x10000 * q, 0, &sd);
	}
	lost += put_ids_rec(s, a, 5, KEYS_MAX, 0, 5, &sd); /* ids 64..863: the chunk the damage takes */
	kept += put_ids_rec(s, a, 6, 16, 0x10000, 0, &sd); /* ids 0..15 again: decodes */
	/* 8 of seq 5's keys (ids 64..71) and 8 of seq 1's (ids 8..15): cut to the latter */
	uint64_t both = put_ids_rec(s, a, 7, 16, 0x10000, 5, &sd);
	kept += both - sd;
	lost += sd;
	sum_b += put_ids_rec(s, b, 5, 16, 0x90000, 0, &sd);
	store_close(s);
	assert_int_equal(tp_db_int(f->db, "SELECT COUNT(*) FROM sample_blocks WHERE fmt = 1"), 12);
	assert_int_equal(samples_of(f->db, a), (int64_t)(kept + lost));

	/* the page that holds the end of seq 5's chunk (an overflow page of its row, that row's alone) */
	sqlite3 *db;
	sqlite3_stmt *st;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_prepare_v2(db, "SELECT data FROM sample_key_ids WHERE seq = 5", -1, &st, NULL),
			 SQLITE_OK);
	assert_int_equal(sqlite3_step(st), SQLITE_ROW);
	size_t zlen = (size_t)sqlite3_column_bytes(st, 0);
	assert_true(zlen > PAGE + 600); /* past a leaf's most local bytes (4,061): the rest on overflow pages */
	uint8_t *blob = malloc(zlen);
	assert_non_null(blob);
	memcpy(blob, sqlite3_column_blob(st, 0), zlen);
	sqlite3_finalize(st);
	sqlite3_close(db);
	size_t flen;
	char *file = slurp_bytes(f->db, &flen), *at = NULL;
	for (size_t o = PAGE + 100; !at && o + 32 <= zlen; o += 100) /* 32 of its bytes on one overflow page */
		if ((at = memmem(file, flen, blob + o, 32)))
			assert_null(memmem(at + 1, flen - (size_t)(at + 1 - file), blob + o, 32)); /* one place only */
	assert_non_null(at);
	off_t page = (at - file) / PAGE * PAGE;
	free(file);
	free(blob);
	damage(f->db, page, PAGE);

	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	fprintf(stderr, "recovered: %llu rows; id blocks %llu cut, %llu deleted (%llu samples), %llu chunks dropped\n",
		(unsigned long long)ss.rows, (unsigned long long)ss.id_blocks_cut, (unsigned long long)ss.id_blocks_dropped,
		(unsigned long long)ss.id_samples_dropped, (unsigned long long)ss.key_chunks_dropped);
	/* every block kept decodes whole: the sessions' totals are the undamaged ones less the blocks of
	 * lost keys, stated */
	assert_int_equal(samples_of(f->out, b), (int64_t)sum_b);
	assert_int_equal(samples_of(f->out, a), (int64_t)kept);
	assert_int_equal(ss.id_blocks_dropped, 1);
	assert_int_equal(ss.id_blocks_cut, 1);
	assert_int_equal(ss.id_samples_dropped, lost);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_blocks WHERE session_id = %lld", (long long)a),
			 6);
	assert_int_equal(tp_db_int(f->out, "SELECT keys FROM sample_blocks WHERE seq = 7"), 8);
	/* r10 F1: per address, the cut block's keys are its unseeded ones (i 8..15 of base 0x10000), each
	 * with its own count, beside seqs 1 and 6's at the same addresses */
	struct by_ip bi = {.base = 0x10000};
	assert_int_equal(store_open(f->out, STORE_READ_ONLY, &s), 0);
	assert_int_equal(store_list_sample_keys(s, a, add_by_ip, &bi), 0);
	store_close(s);
	for (uint64_t i = 0; i < 16; i++)
		assert_int_equal(bi.c[i], (1 + (i + 1) % 3) + (1 + (i + 6) % 3) + (i >= 8 ? 1 + (i + 7) % 3 : 0));
	uint64_t in_base = 0;
	for (int i = 0; i < 16; i++)
		in_base += bi.c[i];
	assert_int_equal(in_base + bi.other, kept); /* seqs 2..4's keys the rest; no seeded key read */
	assert_int_equal(tp_db_int(f->out, "SELECT SUM(samples) FROM sample_blocks WHERE session_id = %lld", (long long)a),
			 (int64_t)kept);

	/* a collector on the recovered store continues the session: its new keys take ids 64.. again, and
	 * no kept block reads them as its own */
	assert_int_equal(store_open(f->out, 0, &s), 0);
	uint64_t more = put_ids_rec(s, a, 8, KEYS_MAX, 0x7000000, 0, &sd);
	store_close(s);
	assert_int_equal(tp_db_int(f->out, "SELECT first_id FROM sample_key_ids WHERE seq = 8"), 64);
	assert_int_equal(samples_of(f->out, a), (int64_t)(kept + more));
	assert_int_equal(samples_of(f->out, b), (int64_t)sum_b);
}

/* Review r10 F1: a block whose zstd frame does not decompress (zeroed after its first 8 bytes, the magic
 * kept) and one with no data are damaged, not blocks of lost ids: recover deletes them whole, counted as
 * damaged, and keeps no key read from their bytes. It cut the first to 1 made-up key of 6,069 samples
 * (the session 7,670 for 3,201 real) and stopped at the second (-ENOMEM: the whole pass rolled back). */
static void test_store_check_salvage_damaged_id_block(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	int64_t a;
	uint64_t sd;
	assert_int_equal(sample_rec_session(s, "board-a", &a), 0);
	uint64_t first = put_ids_rec(s, a, 1, KEYS_MAX, 0x10000, 0, &sd);
	uint64_t second = put_ids_rec(s, a, 2, KEYS_MAX, 0x50000, 0, &sd);
	uint64_t third = put_ids_rec(s, a, 3, 16, 0x90000, 0, &sd);
	store_close(s);
	assert_int_equal(samples_of(f->db, a), (int64_t)(first + second + third));
	assert_int_equal(tp_db_int(f->db, "SELECT substr(data, 1, 4) = x'28b52ffd' FROM sample_blocks WHERE seq = 2"), 1);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db,
				      "UPDATE sample_blocks SET data = substr(data, 1, 8) || zeroblob(length(data) - 8)"
				      " WHERE seq = 2; UPDATE sample_blocks SET data = x'' WHERE seq = 3",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	fprintf(stderr, "recovered: id blocks %llu cut, %llu deleted, %llu damaged (%llu samples), %llu chunks dropped\n",
		(unsigned long long)ss.id_blocks_cut, (unsigned long long)ss.id_blocks_dropped,
		(unsigned long long)ss.id_blocks_damaged, (unsigned long long)ss.id_samples_dropped,
		(unsigned long long)ss.key_chunks_dropped);
	assert_int_equal(samples_of(f->out, a), (int64_t)first);
	assert_int_equal(ss.id_blocks_damaged, 2);
	assert_int_equal(ss.id_blocks_cut, 0);
	assert_int_equal(ss.id_blocks_dropped, 0);
	assert_int_equal(ss.key_chunks_dropped, 0);
	assert_int_equal(ss.id_samples_dropped, second + third);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_blocks WHERE session_id = %lld", (long long)a),
			 1);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_key_ids WHERE session_id = %lld", (long long)a),
			 tp_db_int(f->db, "SELECT COUNT(*) FROM sample_key_ids WHERE session_id = %lld", (long long)a));
}

/* Review r11 F1: the key chunk after the kept ones lost with its row (the last chunks on an unreadable
 * page: no row of them in the copy), so the chunks that survive end where the kept ids do. The blocks
 * that refer to its ids still read as (id, count) pairs that agree with their rows: cut to their other
 * keys (seq 7) or deleted as left without a key (seq 5), not deleted whole as damaged. With the lost ids
 * bounded by the surviving chunks' end, both were "damaged" and seq 7's 8 good keys lost. */
static void test_store_check_salvage_tail_chunk_lost(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	int64_t a;
	assert_int_equal(sample_rec_session(s, "board-a", &a), 0);
	uint64_t kept = 0, lost = 0, sd;
	for (uint64_t q = 1; q <= 4; q++)
		kept += put_ids_rec(s, a, q, 16, 0x10000 * q, 0, &sd);
	lost += put_ids_rec(s, a, 5, KEYS_MAX, 0, 5, &sd); /* ids 64..863: the last chunk */
	kept += put_ids_rec(s, a, 6, 16, 0x10000, 0, &sd);
	uint64_t both = put_ids_rec(s, a, 7, 16, 0x10000, 5, &sd); /* ids 64..71 and 8..15 */
	kept += both - sd;
	lost += sd;
	store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "DELETE FROM sample_key_ids WHERE seq = 5", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(tp_db_int(f->db, "SELECT MAX(first_id + n) FROM sample_key_ids"), 64);

	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	fprintf(stderr, "tail chunk lost: id blocks %llu cut, %llu deleted, %llu damaged (%llu samples), %llu chunks dropped\n",
		(unsigned long long)ss.id_blocks_cut, (unsigned long long)ss.id_blocks_dropped,
		(unsigned long long)ss.id_blocks_damaged, (unsigned long long)ss.id_samples_dropped,
		(unsigned long long)ss.key_chunks_dropped);
	assert_int_equal(ss.id_blocks_cut, 1);
	assert_int_equal(ss.id_blocks_dropped, 1);
	assert_int_equal(ss.id_blocks_damaged, 0);
	assert_int_equal(ss.key_chunks_dropped, 0);
	assert_int_equal(ss.id_samples_dropped, lost);
	assert_int_equal(samples_of(f->out, a), (int64_t)kept);
	assert_int_equal(tp_db_int(f->out, "SELECT keys FROM sample_blocks WHERE seq = 7"), 8);
	assert_int_equal(tp_db_int(f->out, "SELECT SUM(samples) FROM sample_blocks WHERE session_id = %lld", (long long)a),
			 (int64_t)kept);
}

/* Review r11 F2: one count byte of a raw id block changed (3 -> 6) still parses, its ids all held, but
 * the sum of its counts no longer is its row's samples: recover deletes it whole as damaged and keeps
 * the rest. It was kept as it was, the session reading 3 samples more than its rows say. */
static void test_store_check_salvage_count_byte_changed(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	int64_t a;
	uint64_t sd, sum[4] = {0};
	assert_int_equal(sample_rec_session(s, "board-a", &a), 0);
	for (uint64_t q = 1; q <= 3; q++) /* seq 2's 4 keys: 8 bytes, smaller raw than as a zstd frame */
		sum[q] = put_ids_rec(s, a, q, q == 2 ? 4 : 16, 0x10000 * q, 0, &sd);
	store_close(s);
	/* seq 2: raw pairs, its first id 16 (the difference from -1, less 1, zigzag: 0x20) with count
	 * 1 + (0 + 2) % 3 = 3 */
	assert_int_equal(tp_db_int(f->db, "SELECT substr(data, 1, 4) = x'28b52ffd' FROM sample_blocks WHERE seq = 2"), 0);
	assert_int_equal(tp_db_int(f->db, "SELECT hex(substr(data, 1, 2)) = '2003' FROM sample_blocks WHERE seq = 2"), 1);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE sample_blocks SET data = x'2006' || substr(data, 3) WHERE seq = 2",
				      NULL, NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(samples_of(f->db, a), (int64_t)(sum[1] + sum[2] + 3 + sum[3])); /* it parses */

	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	assert_int_equal(ss.id_blocks_damaged, 1);
	assert_int_equal(ss.id_blocks_cut, 0);
	assert_int_equal(ss.id_blocks_dropped, 0);
	assert_int_equal(ss.key_chunks_dropped, 0);
	assert_int_equal(ss.id_samples_dropped, sum[2]);
	assert_int_equal(samples_of(f->out, a), (int64_t)(sum[1] + sum[3]));
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_blocks WHERE seq = 2"), 0);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_key_ids WHERE session_id = %lld", (long long)a),
			 3);
}

/* The row check needs the row's samples and keys: an older store's block without them (NULL) is not
 * taken for damaged (r11 F2's check skipped there), and recover keeps it as it was. */
static void test_store_check_salvage_row_without_sums(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->db, 0, &s), 0);
	int64_t a;
	uint64_t sd, total = 0;
	assert_int_equal(sample_rec_session(s, "board-a", &a), 0);
	for (uint64_t q = 1; q <= 3; q++)
		total += put_ids_rec(s, a, q, q == 2 ? 4 : 16, 0x10000 * q, 0, &sd);
	store_close(s);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(f->db, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "UPDATE sample_blocks SET samples = NULL, keys = NULL WHERE seq = 2", NULL,
				      NULL, NULL),
			 SQLITE_OK);
	sqlite3_close(db);

	struct store_salvage_stats ss;
	assert_int_equal(store_salvage(f->db, f->out, &ss), 0);
	assert_int_equal(ss.id_blocks_damaged, 0);
	assert_int_equal(ss.id_blocks_cut + ss.id_blocks_dropped + ss.key_chunks_dropped, 0);
	assert_int_equal(samples_of(f->out, a), (int64_t)total);
	assert_int_equal(tp_db_int(f->out, "SELECT COUNT(*) FROM sample_blocks WHERE seq = 2 AND samples IS NULL"), 1);
}

int main(void)
{
	log_init("test_store_check", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_store_check_refuses_damaged_store, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_quick_budget, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_damage_found_while_writing, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_server_stops_acking_on_damage, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_copies_what_is_readable, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_version1_store, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_key_ids, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_damaged_id_block, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_tail_chunk_lost, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_count_byte_changed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_check_salvage_row_without_sums, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
