/* Unit tests of collector/store/store.c: sessions, exactly-once ledger, counter
 * delta decoding, interned events, heartbeats, read-only reopen. */
#include <errno.h>
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
#include "store/store.h"

/* ---------------------------------------------------------------- fixtures */

struct hello_buf {
	Prof__Hello h;
	Prof__CpuInfo cpu[2];
	Prof__CpuInfo *cpus[2];
	Prof__GpuDevice gpu;
	Prof__GpuDevice *gpus[1];
};

static void make_hello(struct hello_buf *b, const char *agent, uint64_t boot)
{
	memset(b, 0, sizeof(*b));
	prof__hello__init(&b->h);
	b->h.schema_version = 1;
	b->h.agent_id = (char *)agent;
	b->h.boot_id = boot;
	b->h.board = "arndale-octa";
	b->h.kernel_release = "3.4.104";
	b->h.hostname = "board1";
	b->h.machine = "armv7l";
	b->h.agent_version = "0.1.0";
	b->h.features = "opencl";
	b->h.target = "pid 42";
	b->h.clock_id = 1;
	b->h.base_ns = 1000;
	b->h.realtime_ns = 1700000000000000000ull;
	for (int i = 0; i < 2; i++) {
		prof__cpu_info__init(&b->cpu[i]);
		b->cpu[i].cpu = (uint32_t)i;
		b->cpu[i].model = "Cortex-A15";
		b->cpu[i].implementer = 0x41;
		b->cpu[i].part = 0xc0f;
		b->cpu[i].max_freq_khz = 1700000;
		b->cpus[i] = &b->cpu[i];
	}
	b->h.n_cpus = 2;
	b->h.cpus = b->cpus;
	prof__gpu_device__init(&b->gpu);
	b->gpu.name = "Mali-T628";
	b->gpu.vendor = "ARM";
	b->gpu.compute_units = 4;
	b->gpus[0] = &b->gpu;
	b->h.n_gpus = 1;
	b->h.gpus = b->gpus;
}

/* 3 rows x 2 columns (events 1 "cycles" and 2 "instructions"). */
struct counters_buf {
	Prof__Envelope env;
	Prof__Counters c;
	Prof__EventDesc ev[2];
	Prof__EventDesc *evp[2];
	uint32_t ids[2];
	uint64_t t[3];
	uint64_t v[6];
};

static Prof__Envelope *make_counters(struct counters_buf *b, uint64_t seq, bool declare)
{
	memset(b, 0, sizeof(*b));
	prof__envelope__init(&b->env);
	prof__counters__init(&b->c);
	const char *names[] = {"cycles", "instructions"};
	for (int i = 0; i < 2; i++) {
		prof__event_desc__init(&b->ev[i]);
		b->ev[i].id = (uint32_t)i + 1;
		b->ev[i].name = (char *)names[i];
		b->ev[i].config = (uint64_t)i;
		b->evp[i] = &b->ev[i];
		b->ids[i] = (uint32_t)i + 1;
	}
	if (declare) {
		b->c.n_new_events = 2;
		b->c.new_events = b->evp;
	}
	b->c.n_event_ids = 2;
	b->c.event_ids = b->ids;
	b->t[0] = 100;
	b->t[1] = 50;
	b->t[2] = 50;
	b->c.n_t_ns = 3;
	b->c.t_ns = b->t;
	for (int i = 0; i < 6; i++)
		b->v[i] = (uint64_t)(i + 1) * 10; /* rows: (10,20) (30,40) (50,60) */
	b->c.n_values = 6;
	b->c.values = b->v;
	b->c.pid = 42;
	b->env.seq = seq;
	b->env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	b->env.counters = &b->c;
	return &b->env;
}

struct collected {
	int n;
	struct store_sample_row rows[16];
	char names[16][32];
	struct store_event_summary ev[8];
	char evnames[8][32];
	struct store_session_row sess;
	int nsess;
};

static int collect_sample(const struct store_sample_row *r, void *arg)
{
	struct collected *c = arg;
	assert_true(c->n < 16);
	c->rows[c->n] = *r;
	snprintf(c->names[c->n], sizeof(c->names[0]), "%s", r->name);
	c->n++;
	return 0;
}

static int collect_event(const struct store_event_summary *e, void *arg)
{
	struct collected *c = arg;
	assert_true(c->n < 8);
	c->ev[c->n] = *e;
	snprintf(c->evnames[c->n], sizeof(c->evnames[0]), "%s", e->name);
	c->n++;
	return 0;
}

static int collect_session(const struct store_session_row *r, void *arg)
{
	struct collected *c = arg;
	c->sess = *r;
	c->sess.agent_id = c->sess.board = c->sess.target = NULL; /* not valid after the call */
	c->nsess++;
	return 0;
}

static int setup(void **state)
{
	struct store *s;
	if (store_open(":memory:", 0, &s) < 0)
		return -1;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_close(*state);
	return 0;
}

static int64_t open_session(struct store *s, const char *agent, uint64_t boot, uint64_t *max_seq,
			    bool *created)
{
	struct hello_buf hb;
	make_hello(&hb, agent, boot);
	int64_t id = 0;
	assert_int_equal(store_session_open(s, &hb.h, "127.0.0.1:5000", &id, max_seq, created), 0);
	assert_true(id > 0);
	return id;
}

/* ---------------------------------------------------------------- tests */

static void test_store_session_create_and_find(void **state)
{
	struct store *s = *state;
	uint64_t max_seq = 99;
	bool created = false;
	int64_t a = open_session(s, "agent-a", 7, &max_seq, &created);
	assert_true(created);
	assert_int_equal(max_seq, 0);
	int64_t b = open_session(s, "agent-a", 7, &max_seq, &created);
	assert_false(created);
	assert_int_equal(a, b);
	int64_t c = open_session(s, "agent-a", 8, &max_seq, &created); /* new boot: new session */
	assert_true(created);
	assert_int_not_equal(a, c);
	assert_int_equal(store_commit(s), 0);

	struct collected col = {0};
	assert_int_equal(store_get_session(s, a, collect_session, &col), 0);
	assert_int_equal(col.nsess, 1);
	assert_int_equal(col.sess.connects, 2);
	assert_int_equal(col.sess.boot_id, 7);
	assert_int_equal(col.sess.base_ns, 1000);
	assert_int_equal(store_get_session(s, 12345, collect_session, &col), -ENOENT);
	col.nsess = 0;
	assert_int_equal(store_list_sessions(s, collect_session, &col), 0);
	assert_int_equal(col.nsess, 2);
}

static int count_cpu(const struct store_cpu_row *r, void *arg)
{
	assert_string_equal(r->model, "Cortex-A15");
	(*(int *)arg)++;
	return 0;
}

static int count_gpu(const struct store_gpu_row *r, void *arg)
{
	assert_string_equal(r->name, "Mali-T628");
	assert_int_equal(r->compute_units, 4);
	(*(int *)arg)++;
	return 0;
}

static void test_store_session_hardware_once(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "hw", 1, &m, NULL);
	open_session(s, "hw", 1, &m, NULL); /* reconnect: no second copy of the CPUs */
	int ncpu = 0, ngpu = 0;
	assert_int_equal(store_list_cpus(s, id, count_cpu, &ncpu), 0);
	assert_int_equal(store_list_gpus(s, id, count_gpu, &ngpu), 0);
	assert_int_equal(ncpu, 2);
	assert_int_equal(ngpu, 1);
}

static void test_store_counters_delta_decoding(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "delta", 1, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 100), 1);
	assert_int_equal(store_tx_records(s), 1);
	assert_int_equal(store_commit(s), 0);
	assert_false(store_in_tx(s));

	struct collected col = {0};
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	assert_int_equal(col.n, 6);
	const uint64_t t[6] = {100, 100, 150, 150, 200, 200};
	for (int i = 0; i < 6; i++) {
		assert_int_equal(col.rows[i].t_ns, t[i]);
		assert_int_equal(col.rows[i].event_id, (uint32_t)(i % 2) + 1);
		assert_int_equal(col.rows[i].value, (uint64_t)(i + 1) * 10);
		assert_int_equal(col.rows[i].running_pct, 100);
		assert_int_equal(col.rows[i].seq, 1);
	}
	assert_string_equal(col.names[0], "cycles");
	assert_string_equal(col.names[1], "instructions");

	memset(&col, 0, sizeof(col));
	assert_int_equal(store_event_summaries(s, id, collect_event, &col), 0);
	assert_int_equal(col.n, 2);
	assert_string_equal(col.evnames[0], "cycles");
	assert_true(col.ev[0].declared);
	assert_int_equal(col.ev[0].samples, 3);
	assert_int_equal(col.ev[0].total, 10 + 30 + 50);
	assert_int_equal(col.ev[0].first_t_ns, 100);
	assert_int_equal(col.ev[0].last_t_ns, 200);
	assert_int_equal(col.ev[1].total, 20 + 40 + 60);
	assert_int_equal(col.ev[1].config, 1);

	memset(&col, 0, sizeof(col));
	assert_int_equal(store_get_session(s, id, collect_session, &col), 0);
	assert_int_equal(col.sess.records, 1);
	assert_int_equal(col.sess.wire_bytes, 100);
	assert_int_equal(col.sess.samples, 6);
	assert_int_equal(col.sess.last_t_ns, 200);
}

static void test_store_running_pct_kept(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "pct", 1, &m, NULL);
	struct counters_buf cb;
	Prof__Envelope *env = make_counters(&cb, 1, true);
	uint32_t pct[6] = {100, 50, 100, 25, 100, 0};
	cb.c.n_running_pct = 6;
	cb.c.running_pct = pct;
	assert_int_equal(store_put_record(s, id, env, 1), 1);
	struct collected col = {0};
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	for (int i = 0; i < 6; i++)
		assert_int_equal(col.rows[i].running_pct, pct[i]);
}

static void test_store_duplicates_ignored(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "dup", 1, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 5, true), 10), 1);
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 5, true), 10), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 5, false), 10), 0); /* after commit too */
	assert_int_equal(store_tx_records(s), 0);
	assert_int_equal(store_commit(s), 0);
	struct collected col = {0};
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	assert_int_equal(col.n, 6);
	memset(&col, 0, sizeof(col));
	assert_int_equal(store_get_session(s, id, collect_session, &col), 0);
	assert_int_equal(col.sess.records, 1);
	assert_int_equal(col.sess.wire_bytes, 10);
	/* the reconnect reports the highest stored seq */
	open_session(s, "dup", 1, &m, NULL);
	assert_int_equal(m, 5);
}

static void test_store_same_seq_other_session(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t a = open_session(s, "one", 1, &m, NULL);
	int64_t b = open_session(s, "two", 1, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, a, make_counters(&cb, 1, true), 10), 1);
	assert_int_equal(store_put_record(s, b, make_counters(&cb, 1, true), 10), 1);
}

static void test_store_undeclared_event(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "undeclared", 1, &m, NULL);
	struct counters_buf cb;
	Prof__Envelope *env = make_counters(&cb, 1, false);
	cb.ids[1] = 7;
	assert_int_equal(store_put_record(s, id, env, 10), 1);
	struct collected col = {0};
	assert_int_equal(store_event_summaries(s, id, collect_event, &col), 0);
	assert_int_equal(col.n, 2);
	assert_string_equal(col.evnames[0], "event#1");
	assert_false(col.ev[0].declared);
	assert_string_equal(col.evnames[1], "event#7");
	assert_int_equal(col.ev[1].event_id, 7);
	assert_int_equal(col.ev[1].samples, 3);
	memset(&col, 0, sizeof(col));
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	assert_string_equal(col.names[1], "event#7");
}

static void test_store_events_interned_once(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "intern", 1, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 10), 1);
	/* a later redeclaration (replay after reconnect) keeps the first one */
	Prof__Envelope *env = make_counters(&cb, 2, true);
	cb.ev[0].name = "renamed";
	assert_int_equal(store_put_record(s, id, env, 10), 1);
	env = make_counters(&cb, 3, false);
	assert_int_equal(store_put_record(s, id, env, 10), 1);
	struct collected col = {0};
	assert_int_equal(store_event_summaries(s, id, collect_event, &col), 0);
	assert_int_equal(col.n, 2);
	assert_string_equal(col.evnames[0], "cycles");
	assert_int_equal(col.ev[0].samples, 9);
}

static void test_store_heartbeat(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "hb", 1, &m, NULL);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.spool_dropped = 17;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(store_put_record(s, id, &env, 8), 1); /* seq 0: outside the ledger */
	struct collected col = {0};
	assert_int_equal(store_get_session(s, id, collect_session, &col), 0);
	assert_int_equal(col.sess.spool_dropped, 17);
	assert_int_equal(col.sess.records, 0);
	assert_true(col.sess.last_seen > 0);

	env.seq = 3;
	hb.spool_dropped = 20;
	assert_int_equal(store_put_record(s, id, &env, 8), 1);
	assert_int_equal(store_put_record(s, id, &env, 8), 0);
	memset(&col, 0, sizeof(col));
	assert_int_equal(store_get_session(s, id, collect_session, &col), 0);
	assert_int_equal(col.sess.spool_dropped, 20);
	assert_int_equal(col.sess.records, 1);
	open_session(s, "hb", 1, &m, NULL);
	assert_int_equal(m, 3);
}

static void test_store_rejects_overflowing_times(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "overflow", 1, &m, NULL);
	struct counters_buf cb;
	Prof__Envelope *env = make_counters(&cb, 1, true);
	cb.t[1] = (uint64_t)INT64_MAX;
	assert_int_equal(store_put_record(s, id, env, 10), -ERANGE);
	env = make_counters(&cb, (uint64_t)INT64_MAX + 1, true);
	assert_int_equal(store_put_record(s, id, env, 10), -ERANGE);
	struct collected col = {0};
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	assert_int_equal(col.n, 0);
	open_session(s, "overflow", 1, &m, NULL);
	assert_int_equal(m, 0);
}

static void test_store_rejects_non_records(void **state)
{
	struct store *s = *state;
	Prof__Ack ack = PROF__ACK__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	env.seq = 1;
	assert_int_equal(store_put_record(s, 1, &env, 1), -EINVAL);
}

static void test_store_rollback_discards_batch(void **state)
{
	struct store *s = *state;
	uint64_t m;
	int64_t id = open_session(s, "rb", 1, &m, NULL);
	assert_int_equal(store_commit(s), 0);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 10), 1);
	assert_true(store_in_tx(s));
	store_rollback(s);
	assert_false(store_in_tx(s));
	struct collected col = {0};
	assert_int_equal(store_list_samples(s, id, collect_sample, &col), 0);
	assert_int_equal(col.n, 0);
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 10), 1); /* not a duplicate */
}

static void test_store_file_reopen_read_only(void **state)
{
	(void)state;
	char path[] = "/tmp/test_store_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	unlink(path);

	struct store *s;
	assert_int_equal(store_open(path, STORE_SYNC_FULL, &s), 0);
	uint64_t m;
	int64_t id = open_session(s, "file", 9, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 10), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct collected col = {0};
	assert_int_equal(store_list_sessions(s, collect_session, &col), 0);
	assert_int_equal(col.nsess, 1);
	assert_int_equal(col.sess.samples, 6);
	assert_int_equal(col.sess.boot_id, 9);
	store_close(s);

	/* reopening for writing keeps the data (schema already there) */
	assert_int_equal(store_open(path, 0, &s), 0);
	open_session(s, "file", 9, &m, NULL);
	assert_int_equal(m, 1);
	store_close(s);

	char wal[64], shm[64];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	unlink(wal);
	unlink(shm);
	unlink(path);
}

static void test_store_refuses_foreign_database(void **state)
{
	(void)state;
	char path[] = "/tmp/test_store_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	sqlite3 *db;
	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(
	    sqlite3_exec(db, "CREATE TABLE other(x); PRAGMA user_version = 0;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	struct store *s = (struct store *)1;
	assert_true(store_open(path, 0, &s) < 0);
	assert_null(s);

	assert_int_equal(sqlite3_open(path, &db), SQLITE_OK);
	assert_int_equal(sqlite3_exec(db, "PRAGMA user_version = 99;", NULL, NULL, NULL), SQLITE_OK);
	sqlite3_close(db);
	assert_int_equal(store_open(path, 0, &s), -EPROTONOSUPPORT);
	unlink(path);

	assert_int_equal(store_open("/nonexistent-dir/x.db", STORE_READ_ONLY, &s), -ENOENT);
}

/* A new store and its WAL and shared-memory files are the owner's only (0600),
 * whatever the umask; an emptied store file is refused unless STORE_INIT. */
static void test_store_new_file_0600_empty_refused(void **state)
{
	(void)state;
	char dir[] = "/tmp/test_store_dir_XXXXXX";
	assert_non_null(mkdtemp(dir));
	char path[96], wal[100], shm[100];
	snprintf(path, sizeof(path), "%s/p.db", dir);
	snprintf(wal, sizeof(wal), "%s-wal", path);
	snprintf(shm, sizeof(shm), "%s-shm", path);
	mode_t old = umask(022);
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	uint64_t m;
	int64_t id = open_session(s, "perm", 1, &m, NULL);
	struct counters_buf cb;
	assert_int_equal(store_put_record(s, id, make_counters(&cb, 1, true), 10), 1);
	assert_int_equal(store_commit(s), 0);
	const char *files[] = {path, wal, shm};
	for (int i = 0; i < 3; i++) {
		struct stat st;
		assert_int_equal(stat(files[i], &st), 0);
		if ((st.st_mode & 0777) != 0600)
			fail_msg("%s has mode %03o, want 600", files[i], (unsigned)(st.st_mode & 0777));
	}
	store_close(s);
	umask(old);
	unlink(wal);
	unlink(shm);
	/* emptied: refused (and left as it is) unless STORE_INIT */
	assert_int_equal(truncate(path, 0), 0);
	s = (struct store *)1;
	assert_int_equal(store_open(path, 0, &s), -ENODATA);
	assert_null(s);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, 0);
	assert_int_equal(store_open(path, STORE_INIT, &s), 0);
	open_session(s, "perm", 1, &m, NULL);
	assert_int_equal(m, 0);
	store_close(s);
	unlink(wal);
	unlink(shm);
	unlink(path);
	rmdir(dir);
}

int main(void)
{
	log_init("test_store", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_store_session_create_and_find, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_session_hardware_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_counters_delta_decoding, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_running_pct_kept, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_duplicates_ignored, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_same_seq_other_session, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_undeclared_event, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_events_interned_once, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_heartbeat, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_rejects_overflowing_times, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_rejects_non_records, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_store_rollback_discards_batch, setup, teardown),
	    cmocka_unit_test(test_store_file_reopen_read_only),
	    cmocka_unit_test(test_store_refuses_foreign_database),
	    cmocka_unit_test(test_store_new_file_0600_empty_refused),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
