/* Stores written by older collectors (#40): the samples were then one
 * cpu_samples row per key, alone (before sample_blocks) or beside the blocks
 * (whose samples column did not exist yet); this collector writes only the
 * blocks. Each older shape is built here from its schema and rows directly
 * (the cpu_samples rows inserted by SQL from the records' keys, not from the
 * blocks), then read read-only and after a read-write open (the upgrade):
 * the query model's total, stacks and series and the session's count must
 * agree with the same records stored by this collector. */
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

#include "block_keys.h"
#include "profiler.pb-c.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "testproc.h"

enum { NREC = 4, NKEYS = 24 };

/* The key i of record seq: 3 processes, 2 threads each, 7 addresses; counts vary per record. */
static void key_of(uint64_t seq, int i, int32_t *pid, int32_t *tid, uint64_t *ip, uint64_t *count)
{
	*pid = 100 + i % 3;
	*tid = *pid + i % 2;
	*ip = 0x400000 + 0x40 * (uint64_t)(i % 7);
	*count = 1 + ((uint64_t)i * seq) % 5;
}

static void put_record(struct store *s, int64_t sid, uint64_t seq)
{
	int32_t pid[NKEYS], tid[NKEYS];
	uint64_t ip[NKEYS], count[NKEYS];
	uint32_t stack[NKEYS];
	for (int i = 0; i < NKEYS; i++) {
		key_of(seq, i, &pid[i], &tid[i], &ip[i], &count[i]);
		stack[i] = 0;
	}
	Prof__TaskName tn = PROF__TASK_NAME__INIT, *tnp[1] = {&tn};
	tn.pid = 100;
	tn.tid = 100;
	tn.comm = "old";
	tn.thread = "old";
	/* each process's text mapped from a file this host lacks: one frame per address */
	Prof__Mapping m[3], *mp[3];
	for (int i = 0; i < 3; i++) {
		prof__mapping__init(&m[i]);
		m[i].id = (uint32_t)i + 1;
		m[i].pid = 100 + i;
		m[i].start = 0x400000;
		m[i].end = 0x500000;
		m[i].path = "/nonexistent/old-app";
		mp[i] = &m[i];
	}
	struct sample_rec_keys keys = {NKEYS, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &keys);
	sm.n_new_mappings = seq == 1 ? 3 : 0;
	sm.new_mappings = mp;
	sm.n_new_tasks = seq == 1;
	sm.new_tasks = tnp;
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
}

/* A store of this collector with the NREC records. */
static void write_store(const char *path)
{
	struct store *s = NULL;
	assert_int_equal(store_open(path, 0, &s), 0);
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = 1;
	h.agent_id = "old-agent";
	h.boot_id = 7;
	h.board = "host";
	h.realtime_ns = 1764783000000000000ull; /* a wall clock: an interval starting at 0 reads as none */
	int64_t sid = 0;
	uint64_t max = 0;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &sid, &max, NULL), 0);
	for (uint64_t seq = 1; seq <= NREC; seq++)
		put_record(s, sid, seq);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err);
}

/* The cpu_samples table of the collectors before #40 with the rows of records first..last inserted
 * from their keys. */
static void add_old_rows(sqlite3 *db, uint64_t first, uint64_t last)
{
	exec_sql(db, TP_OLD_CPU_SAMPLES_SCHEMA);
	sqlite3_stmt *st;
	assert_int_equal(
	    sqlite3_prepare_v2(db, "INSERT INTO cpu_samples VALUES (1, ?1, ?2, 0, 0, ?3, ?4, ?5, 0, 0, ?6)",
			       -1, &st, NULL),
	    SQLITE_OK);
	for (uint64_t seq = first; seq <= last; seq++)
		for (int i = 0; i < NKEYS; i++) {
			int32_t pid, tid;
			uint64_t ip, count;
			key_of(seq, i, &pid, &tid, &ip, &count);
			sqlite3_bind_int64(st, 1, (sqlite3_int64)seq);
			sqlite3_bind_int64(st, 2, (sqlite3_int64)(1000000 * seq));
			sqlite3_bind_int64(st, 3, pid);
			sqlite3_bind_int64(st, 4, tid);
			sqlite3_bind_int64(st, 5, (sqlite3_int64)ip);
			sqlite3_bind_int64(st, 6, (sqlite3_int64)count);
			assert_int_equal(sqlite3_step(st), SQLITE_DONE);
			sqlite3_reset(st);
		}
	sqlite3_finalize(st);
}

enum shape {
	PRE_BLOCKS,   /* rows only: no sample_blocks table */
	ROWS_BESIDE,  /* rows and blocks of every record, the blocks without their samples column */
	UPGRADED_MID, /* records 1-2 as rows only (older collector), 3-4 as summed blocks (this one) */
};

/* The store at path (written by this collector) turned into an older collector's. */
static void make_old(const char *path, enum shape shape)
{
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, "BEGIN");
	switch (shape) {
	case PRE_BLOCKS:
		exec_sql(db, "DROP TABLE sample_blocks");
		add_old_rows(db, 1, NREC);
		break;
	case ROWS_BESIDE:
		exec_sql(db, "CREATE TABLE b_old (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
			     " t_ns INTEGER NOT NULL, keys INTEGER, data BLOB, PRIMARY KEY(session_id, seq));"
			     "INSERT INTO b_old SELECT session_id, seq, t_ns, keys, data FROM sample_blocks;"
			     "DROP TABLE sample_blocks; ALTER TABLE b_old RENAME TO sample_blocks;"
			     "CREATE INDEX sample_blocks_time ON sample_blocks(session_id, t_ns);"
			     /* before the key ids (#40 w45a): schema version 1, no dictionary */
			     "DROP TABLE sample_key_ids; PRAGMA user_version = 1;");
		add_old_rows(db, 1, NREC);
		break;
	case UPGRADED_MID:
		exec_sql(db, "DELETE FROM sample_blocks WHERE seq <= 2");
		add_old_rows(db, 1, 2);
		break;
	}
	exec_sql(db, "COMMIT");
	sqlite3_close(db);
}

struct figures {
	uint64_t total, series, session_samples;
	size_t nstacks;
	char stacks[4096]; /* "pid/tid/leaf=count;" sorted */
};

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

static int session_cb(const struct store_session_row *r, void *arg)
{
	struct figures *fg = arg;
	fg->session_samples += r->cpu_samples;
	return 0;
}

static void read_figures(const char *path, struct figures *fg)
{
	memset(fg, 0, sizeof(*fg));
	struct store *s = NULL;
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = 1; /* the one session (no wall clock: the default time range would miss it) */
	qo.f.nsessions = 1;
	qo.series = true;
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	assert_int_equal(r->skipped, 0);
	fg->total = r->total;
	fg->nstacks = r->nstacks;
	for (size_t i = 0; i < r->npoints; i++)
		fg->series += r->points[i].count;
	char **lines = calloc(r->nstacks, sizeof(*lines));
	assert_non_null(lines);
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		const struct query_frame *leaf = &r->frames[k->frames[0]];
		assert_true(asprintf(&lines[i], "%d/%d/%s@%llx=%llu;", k->pid, k->tid, leaf->function,
				     (unsigned long long)leaf->ip, (unsigned long long)k->count) > 0);
	}
	qsort(lines, r->nstacks, sizeof(*lines), cmp_str);
	for (size_t i = 0; i < r->nstacks; i++) {
		strncat(fg->stacks, lines[i], sizeof(fg->stacks) - strlen(fg->stacks) - 1);
		free(lines[i]);
	}
	free(lines);
	query_result_free(r);
	assert_int_equal(store_list_sessions(s, session_cb, fg), 0);
	store_close(s);
}

static void assert_same(const struct figures *want, const struct figures *got, const char *what)
{
	fprintf(stderr, "%s: total %llu (want %llu), series %llu, session %llu, %zu stacks\n", what,
		(unsigned long long)got->total, (unsigned long long)want->total,
		(unsigned long long)got->series, (unsigned long long)got->session_samples, got->nstacks);
	assert_int_equal(got->total, want->total);
	assert_int_equal(got->series, want->total);
	assert_int_equal(got->session_samples, want->total);
	assert_int_equal(got->nstacks, want->nstacks);
	assert_string_equal(got->stacks, want->stacks);
}

static uint64_t keys_total(void)
{
	uint64_t t = 0;
	for (uint64_t seq = 1; seq <= NREC; seq++)
		for (int i = 0; i < NKEYS; i++) {
			int32_t pid, tid;
			uint64_t ip, count;
			key_of(seq, i, &pid, &tid, &ip, &count);
			t += count;
		}
	return t;
}

static void check_shape(enum shape shape, const char *what)
{
	char dir[256], ref[320], old[320];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "oldstore"), 0);
	snprintf(ref, sizeof(ref), "%s/new.db", dir);
	snprintf(old, sizeof(old), "%s/old.db", dir);
	write_store(ref);
	write_store(old);
	struct figures want, got;
	read_figures(ref, &want);
	assert_int_equal(want.total, keys_total()); /* this collector's blocks hold every key's count */
	assert_int_equal(want.series, want.total);
	assert_int_equal(want.session_samples, want.total);
	make_old(old, shape);
	read_figures(old, &got); /* read-only, as the older collector left it */
	assert_same(&want, &got, what);
	struct store *s = NULL; /* a read-write open upgrades it (sample_blocks.samples added) */
	assert_int_equal(store_open(old, 0, &s), 0);
	assert_true(store_has_column(s, "sample_blocks", "samples"));
	assert_true(store_has_table(s, "cpu_samples")); /* its rows stay: records without a block */
	store_close(s);
	read_figures(old, &got);
	assert_same(&want, &got, what);
	tp_rm_rf(dir);
}

static void test_store_old_samples_rows_only(void **state)
{
	(void)state;
	check_shape(PRE_BLOCKS, "rows only (before sample_blocks)");
}

static void test_store_old_samples_rows_beside_blocks(void **state)
{
	(void)state;
	check_shape(ROWS_BESIDE, "rows beside unsummed blocks");
}

static void test_store_old_samples_upgraded_mid_session(void **state)
{
	(void)state;
	check_shape(UPGRADED_MID, "rows, then summed blocks in one session");
}

int main(void)
{
	/* the older collectors' stores these cases build held whole keys in their blocks (#40 w45a) */
	setenv("PROF_STORE_KEY_IDS", "0", 1);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_old_samples_rows_only),
	    cmocka_unit_test(test_store_old_samples_rows_beside_blocks),
	    cmocka_unit_test(test_store_old_samples_upgraded_mid_session),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
