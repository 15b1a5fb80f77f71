/* Sessions sampled with different periods in one query (#40): an older agent's timer
 * period is exactly 1/F, a newer one's 1/F + 1/128 of it (agent/sampler.c choose_event),
 * so two sessions at the same frequency differ by 0.8 %. The query result carries one
 * frequency and period (the largest frequency's) to print; every time figure is each
 * stack's count x its own session's period: pprof's cpu values (collector export,
 * /profile) and the roofline overview's CPU time (report_function_samples). A session
 * whose own records differ (an agent upgraded within one boot) counts its samples at their
 * records' mean period (every stack of it: the session's total is exact), also after
 * downsampling (a window is split where the period changes); an older store without
 * sample_blocks.samples opened read-only falls back to one period without an error. A
 * SQLite store written by the store's own path. */
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
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
#include "pgserver.h"
#include "query/query.h"
#include "report/report.h"
#include "sample_rec.h"
#include "store/store.h"
#include "testproc.h"
#include "views/pprof.h"
#include "views/profile.pb-c.h"
#include "views/stacks_query.h"

enum { FREQ = 99, FREQ_OLDER = 97, RECORDS = 3 };

/* the old agent's period (1 s / 99 Hz) and the new one's (1/128 longer) */
static const uint64_t period_old = 1000000000 / FREQ, period_new = period_old + period_old / 128;

struct agent {
	const char *id;
	int32_t pid;
	uint64_t freq;	 /* 0: FREQ */
	uint64_t period; /* 0: the record has none (an older collector's store): 1 s / freq_hz */
	uint64_t samples;
	int64_t sid;
	uint64_t upgraded_at, period_after; /* from this seq on (0: never), records of this period */
	uint64_t ns;			    /* exact: each record's samples x its own period */
};

static uint64_t freq_of(const struct agent *a)
{
	return a->freq ? a->freq : FREQ;
}

/* the ns one sample of the agent's record seq stands for */
static uint64_t period_of(const struct agent *a, uint64_t seq)
{
	uint64_t pd = a->upgraded_at && seq >= a->upgraded_at ? a->period_after : a->period;
	return pd ? pd : 1000000000 / freq_of(a);
}

static void put_agent(struct store *s, struct agent *a)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)a->id;
	h.boot_id = 1;
	h.board = "host";
	h.realtime_ns = 1700000000000000000ull;
	uint64_t max_seq;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &a->sid, &max_seq, NULL), 0);
	for (uint64_t seq = 1; seq <= RECORDS; seq++) {
		/* two stacks a record: samples of both in each; an upgraded agent's second from the
		 * upgrade on is of another thread (a stack met only in the new period's records) */
		bool after = a->upgraded_at && seq >= a->upgraded_at;
		int32_t pid[2] = {a->pid, a->pid}, tid[2] = {a->pid, after ? a->pid + 1 : a->pid};
		uint64_t ip[2] = {0x400000, 0x400040}, count[2] = {seq + (uint64_t)a->pid % 7, 2 * seq};
		uint32_t stack[2] = {0, 0};
		struct sample_rec_keys k = {2, pid, tid, ip, stack, count};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, seq, &k);
		sm.freq_hz = freq_of(a);
		sm.period = after ? a->period_after : a->period;
		assert_int_equal(store_put_record(s, a->sid, &env, 100), 1);
		a->samples += count[0] + count[1];
		a->ns += (count[0] + count[1]) * period_of(a, seq);
	}
}

static void test_query_periods_mixed_sessions_exact(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqp"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	/* the old agent's session first: before #40's fix its period (1/F) was the query's for all */
	struct agent ag[3] = {{.id = "board-old", .pid = 3001, .period = period_old},
			      {.id = "board-new", .pid = 3002, .period = period_new},
			      {.id = "board-older", .pid = 3003, .freq = FREQ_OLDER, .period = 0}};
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	for (int i = 0; i < 3; i++)
		put_agent(s, &ag[i]);
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	query_opts_free(&qo);
	assert_int_equal(r->nsessions, 3);
	assert_int_equal(r->freq_hz, FREQ);
	/* exact: each session's samples x its own period (none: 1 s / freq_hz, its own 97 Hz here:
	 * neither other session's period) */
	uint64_t want_ns = 0, want_total = 0;
	for (int i = 0; i < 3; i++) {
		want_ns += ag[i].samples * period_of(&ag[i], 1);
		want_total += ag[i].samples;
	}
	assert_int_equal(r->total, want_total);
	/* every sample's leaf: one name (unresolved addresses of files that are not there) */
	char leaf[128] = "";
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		assert_int_equal(k->sample_ns, period_of(&ag[k->pid - 3001], 1));
		const char *fn = r->frames[k->frames[0]].function;
		if (!leaf[0])
			snprintf(leaf, sizeof(leaf), "%s", fn);
		assert_string_equal(fn, leaf);
	}
	struct stack_set set;
	assert_int_equal(stack_set_from_query(r, &set), 0);
	query_result_free(r);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&set, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	uint64_t got_ns = 0, got_n = 0, new_ns = 0, new_n = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sp = p->sample[i];
		assert_int_equal(sp->n_value, 2);
		got_n += (uint64_t)sp->value[0];
		got_ns += (uint64_t)sp->value[1];
		for (size_t l = 0; l < sp->n_label; l++)
			if (strcmp(p->string_table[sp->label[l]->key], "pid") == 0 &&
			    sp->label[l]->num == 3002) {
				new_n += (uint64_t)sp->value[0];
				new_ns += (uint64_t)sp->value[1];
			}
	}
	assert_int_equal(got_n, want_total);
	assert_int_equal(new_n, ag[1].samples);
	assert_int_equal(new_ns, ag[1].samples * period_new);
	assert_int_equal(got_ns, want_ns);
	/* the one `period` printed is the highest frequency's, and the comment says they differ */
	assert_int_equal(p->period, period_old); /* 99 Hz: the first session's of it (board-old) */
	assert_int_equal(p->n_comment, 1);
	assert_non_null(strstr(p->string_table[p->comment[0]], "different periods"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	stack_set_free(&set);

	/* the overview's CPU time of a function: its samples x their own period, per session */
	for (int i = 0; i < 3; i++) {
		uint64_t count = 0, ns = 0;
		int64_t freq = 0;
		assert_int_equal(report_function_samples(s, ag[i].sid, NULL, leaf, &count, &freq, &ns), 0);
		assert_int_equal(freq, freq_of(&ag[i]));
		assert_int_equal(count, ag[i].samples);
		assert_int_equal(ns, ag[i].samples * period_of(&ag[i], 1));
	}
	store_close(s);
	tp_rm_rf(tmp);
}

/* An agent upgraded within one boot (one session: agent id and boot): its records 1..2 at the
 * old period, 3 at the new one. The session's samples stand for their records' mean period (to
 * the ns): its time in pprof and the overview is the exact sum within half a ns a sample. Every
 * stack of the session gets that mean, also one met only in record 3 (another thread): not its
 * own record's period (report.h, collector/README.md say so). downsample: the store's blocks
 * merged first (one window over all: records 1..2 merge, 3, of the new period, stays apart). */
static void upgraded_within_session(const char *path, bool downsample)
{
	struct agent ag = {.id = "board-upgraded",
			   .pid = 3004,
			   .period = period_old,
			   .upgraded_at = 3,
			   .period_after = period_new};
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	put_agent(s, &ag);
	assert_int_equal(store_commit(s), 0);
	if (downsample) {
		struct query_downsample_stats ds;
		assert_int_equal(query_downsample(s, INT64_MAX, 3600000000000ll, &ds), 0);
		fprintf(stderr, "downsampled: %llu windows, %llu blocks into %llu\n",
			(unsigned long long)ds.windows, (unsigned long long)ds.blocks_in,
			(unsigned long long)ds.blocks_out);
		assert_int_equal(ds.windows, 1);
		assert_int_equal(ds.blocks_in, RECORDS - 1);
		assert_int_equal(ds.blocks_out, 1);
	}
	store_close(s);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	query_opts_free(&qo);
	assert_int_equal(r->total, ag.samples);
	assert_int_equal(r->nsessions, 1);
	uint64_t half = ag.samples / 2 + 1;
	uint64_t mean = r->sessions[0].sample_ns;
	assert_true(mean > period_old && mean < period_new);
	size_t new_only = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		assert_int_equal(r->stacks[i].sample_ns, mean);
		new_only += r->stacks[i].tid == ag.pid + 1;
	}
	assert_int_equal(new_only, 1); /* the thread of record 3 only: the mean too, not period_new */
	const char *leaf = r->stacks[0].nframes ? r->frames[r->stacks[0].frames[0]].function : "";
	char fn[128];
	snprintf(fn, sizeof(fn), "%s", leaf);
	struct stack_set set;
	assert_int_equal(stack_set_from_query(r, &set), 0);
	query_result_free(r);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&set, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	uint64_t got_ns = 0;
	for (size_t i = 0; i < p->n_sample; i++)
		got_ns += (uint64_t)p->sample[i]->value[1];
	fprintf(stderr,
		"upgraded session: %llu samples, %llu ns exact, %llu ns in pprof (mean period %llu ns)\n",
		(unsigned long long)ag.samples, (unsigned long long)ag.ns, (unsigned long long)got_ns,
		(unsigned long long)mean);
	assert_true(got_ns + half >= ag.ns && got_ns <= ag.ns + half);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	stack_set_free(&set);
	uint64_t count = 0, ns = 0;
	int64_t freq = 0;
	assert_int_equal(report_function_samples(s, ag.sid, NULL, fn, &count, &freq, &ns), 0);
	assert_int_equal(count, ag.samples);
	assert_true(ns + half >= ag.ns && ns <= ag.ns + half);
	store_close(s);
}

static void test_query_periods_upgraded_within_session(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqu"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	upgraded_within_session(path, false);
	tp_rm_rf(tmp);
}

static void test_query_periods_upgraded_downsampled(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqd"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	upgraded_within_session(path, true);
	tp_rm_rf(tmp);
}

static void exec_sql(sqlite3 *db, const char *sql)
{
	char *err = NULL;
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fail_msg("%s: %s", sql, err ? err : "?");
}

/* An older collector's store (sample_blocks without its samples column: test_store_old_samples'
 * ROWS_BESIDE shape less the rows) of an upgraded session, opened read-only as `collector report`
 * opens it (the column is not added): the query and the overview log no error (the sums statement
 * is not run) and count the session at its largest frequency's period, as before the mean. */
static void test_query_periods_older_store_read_only(void **state)
{
	(void)state;
	setenv("PROF_STORE_KEY_IDS", "0", 1); /* an older collector's blocks: whole keys (#40 w45a) */
	char tmp[256], path[300], errf[320];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqo"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	snprintf(errf, sizeof(errf), "%s/stderr", tmp);
	struct agent ag = {.id = "board-upgraded-old",
			   .pid = 3005,
			   .period = period_old,
			   .upgraded_at = 3,
			   .period_after = period_new};
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	put_agent(s, &ag);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	unsetenv("PROF_STORE_KEY_IDS");
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	exec_sql(db, "BEGIN; CREATE TABLE b_old (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
		     " t_ns INTEGER NOT NULL, keys INTEGER, data BLOB, PRIMARY KEY(session_id, seq));"
		     "INSERT INTO b_old SELECT session_id, seq, t_ns, keys, data FROM sample_blocks;"
		     "DROP TABLE sample_blocks; ALTER TABLE b_old RENAME TO sample_blocks;"
		     "CREATE INDEX sample_blocks_time ON sample_blocks(session_id, t_ns);"
		     " DROP TABLE sample_key_ids; PRAGMA user_version = 1; COMMIT");
	sqlite3_close(db);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	assert_false(store_has_column(s, "sample_blocks", "samples"));
	fflush(stderr);
	int saved = dup(2), fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r = NULL;
	int qrc = query_run(s, &qo, &r);
	query_opts_free(&qo);
	uint64_t count = 0, ns = 0;
	int64_t freq = 0;
	int frc = -1;
	if (qrc == 0 && r->nstacks && r->stacks[0].nframes)
		frc = report_function_samples(s, ag.sid, NULL, r->frames[r->stacks[0].frames[0]].function,
					      &count, &freq, &ns);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	struct stat est;
	long errlen = stat(errf, &est) == 0 ? (long)est.st_size : -1;
	if (errlen != 0)
		tp_dump_file(errf);
	assert_int_equal(errlen, 0); /* no "no such column" line, none at all */
	assert_int_equal(qrc, 0);
	assert_int_equal(frc, 0);
	assert_int_equal(r->total, ag.samples);
	assert_int_equal(r->sessions[0].sample_ns, period_old);
	assert_int_equal(count, ag.samples);
	assert_int_equal(ns, ag.samples * period_old);
	query_result_free(r);
	store_close(s);
	tp_rm_rf(tmp);
}

/* upgraded_within_session on a database of a real PostgreSQL server on 127.0.0.1 (skipped with the
 * reason without one). */
static void upgraded_pg(const char *db, bool downsampled)
{
	struct pgserver pg;
	char why[512], uri[512];
	if (pg_start(&pg, why, sizeof(why)) < 0) {
		fprintf(stderr, "skipped: %s\n", why);
		skip();
	}
	int rc = pg_new_db(&pg, db, uri, sizeof(uri));
	if (rc == 0)
		upgraded_within_session(uri, downsampled);
	pg_stop(&pg);
	assert_int_equal(rc, 0);
}

/* The same on PostgreSQL. */
static void test_query_periods_upgraded_within_session_pg(void **state)
{
	(void)state;
	upgraded_pg("periods", false);
}

/* Downsampled first, on PostgreSQL. */
static void test_query_periods_upgraded_downsampled_pg(void **state)
{
	(void)state;
	upgraded_pg("periods_down", true);
}

int main(void)
{
	log_init("test_query_periods", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_periods_mixed_sessions_exact),
	    cmocka_unit_test(test_query_periods_upgraded_within_session),
	    cmocka_unit_test(test_query_periods_upgraded_within_session_pg),
	    cmocka_unit_test(test_query_periods_upgraded_downsampled),
	    cmocka_unit_test(test_query_periods_upgraded_downsampled_pg),
	    cmocka_unit_test(test_query_periods_older_store_read_only),
	};
	return cmocka_run_group_tests_name("query_periods", tests, NULL, NULL);
}
