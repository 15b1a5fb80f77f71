/* The store's write path against both back ends: SQLite (a file) and
 * PostgreSQL (a real server started by the test from Debian's packages on
 * 127.0.0.1; skipped with the reason when it cannot run). The same
 * behaviours: sessions found or created, exactly once by (session, seq) also
 * across two store handles on one database (two collectors), rollback,
 * heartbeats, refused records, versioned schema. */
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
#include "pgserver.h"
#include "store.h"
#include "testproc.h"

enum backend { B_SQLITE, B_PG };

struct fx {
	enum backend b;
	char tmp[256];
	char uri[512];
};

static struct pgserver pg;
static int pg_ok;
static char pg_why[512];
static int dbn;

static int group_setup(void **state)
{
	pg_ok = pg_start(&pg, pg_why, sizeof(pg_why)) == 0;
	if (!pg_ok)
		fprintf(stderr, "PostgreSQL back end tests will be skipped: %s\n", pg_why);
	return 0;
}

static int group_teardown(void **state)
{
	pg_stop(&pg);
	return 0;
}

static int setup(void **state, enum backend b)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f)
		return -1;
	f->b = b;
	if (b == B_SQLITE) {
		if (tp_tmpdir(f->tmp, sizeof(f->tmp), "stb") < 0)
			return -1;
		snprintf(f->uri, sizeof(f->uri), "%s/store.db", f->tmp);
	} else if (pg_ok) {
		char name[32];
		snprintf(name, sizeof(name), "t%d", ++dbn);
		if (pg_new_db(&pg, name, f->uri, sizeof(f->uri)) < 0)
			return -1;
	}
	*state = f;
	return 0;
}
static int setup_sqlite(void **state) { return setup(state, B_SQLITE); }
static int setup_pg(void **state) { return setup(state, B_PG); }

static int teardown(void **state)
{
	struct fx *f = *state;
	if (f->tmp[0])
		tp_rm_rf(f->tmp);
	free(f);
	return 0;
}

static struct store *open_store(struct fx *f)
{
	if (f->b == B_PG && !pg_ok) {
		fprintf(stderr, "skipped: %s\n", pg_why);
		skip();
	}
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, 0, &s), 0);
	return s;
}

/* One integer from the database behind the store, the same SQL on both back ends. */
static int64_t q(struct fx *f, const char *sql)
{
	return f->b == B_PG ? pg_int(f->uri, sql) : tp_db_int(f->uri, "%s", sql);
}

static void hello(Prof__Hello *h, const char *agent, uint64_t boot)
{
	prof__hello__init(h);
	h->schema_version = 1;
	h->agent_id = (char *)agent;
	h->boot_id = boot;
	h->board = "host";
}

static int64_t session(struct store *s, const char *agent, uint64_t boot, uint64_t *max_seq, bool *created)
{
	Prof__Hello h;
	hello(&h, agent, boot);
	int64_t id = 0;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &id, max_seq, created), 0);
	assert_true(id > 0);
	return id;
}

/* counters record: one row of two columns (events 1, 2 declared), times t, 2t. */
static int put(struct store *s, int64_t sid, uint64_t seq)
{
	Prof__EventDesc ev[2] = {PROF__EVENT_DESC__INIT, PROF__EVENT_DESC__INIT};
	Prof__EventDesc *evp[2] = {&ev[0], &ev[1]};
	ev[0].id = 1;
	ev[0].name = "cycles";
	ev[1].id = 2;
	ev[1].name = "instructions";
	uint32_t ids[2] = {1, 2};
	uint64_t t[2] = {1000, 1000}, v[4] = {seq, seq * 2, seq * 3, seq * 4};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = 2;
	c.new_events = evp;
	c.n_event_ids = 2;
	c.event_ids = ids;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 4;
	c.values = v;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	return store_put_record(s, sid, &env, 40);
}

static void test_store_backend_sessions_found_or_created(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	uint64_t max = 99;
	bool created = false;
	int64_t a = session(s, "board-a", 1, &max, &created);
	assert_true(created);
	assert_int_equal(max, 0);
	int64_t b = session(s, "board-a", 2, &max, &created);
	assert_true(created);
	assert_true(a != b);
	assert_int_equal(session(s, "board-a", 1, &max, &created), a);
	assert_false(created);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(q(f, "SELECT connects FROM sessions WHERE agent_id = 'board-a' AND boot_id = 1"), 2);
	store_close(s);
}

static void test_store_backend_exactly_once(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	int64_t sid = session(s, "board-b", 7, &(uint64_t){0}, NULL);
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_int_equal(put(s, sid, seq), 1);
	assert_int_equal(store_tx_records(s), 3);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(put(s, sid, 2), 0); /* replayed: ignored */
	assert_int_equal(put(s, sid, 4), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	s = open_store(f);
	uint64_t max = 0;
	assert_int_equal(session(s, "board-b", 7, &max, NULL), sid);
	assert_int_equal(max, 4);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM records"), 4);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM counter_samples"), 16);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM events"), 2);
	assert_int_equal(q(f, "SELECT records FROM sessions WHERE agent_id = 'board-b'"), 4);
	/* delta decoding: the second row of seq 3 is at 2000 ns */
	assert_int_equal(q(f, "SELECT MAX(t_ns) FROM counter_samples WHERE seq = 3"), 2000);
	assert_int_equal(q(f, "SELECT value FROM counter_samples WHERE seq = 3 AND event_id = 2 AND t_ns = 2000"), 12);
}

/* Two collectors on one database: the database enforces the rule. */
static void test_store_backend_two_handles_one_database(void **state)
{
	struct fx *f = *state;
	struct store *a = open_store(f), *b = open_store(f);
	int64_t sa = session(a, "board-c", 9, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(a), 0);
	uint64_t max = 0;
	int64_t sb = session(b, "board-c", 9, &max, NULL);
	assert_int_equal(sa, sb);
	assert_int_equal(store_commit(b), 0);
	for (uint64_t seq = 1; seq <= 5; seq++)
		assert_int_equal(put(a, sa, seq), 1);
	assert_int_equal(store_commit(a), 0);
	int stored = 0, dups = 0;
	for (uint64_t seq = 3; seq <= 8; seq++) {
		int rc = put(b, sb, seq);
		assert_true(rc == 0 || rc == 1);
		stored += rc == 1;
		dups += rc == 0;
	}
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(stored, 3);
	assert_int_equal(dups, 3);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM records"), 8);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM counter_samples"), 32);
	store_close(a);
	store_close(b);
}

static void test_store_backend_rollback_discards(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	int64_t sid = session(s, "board-d", 1, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(put(s, sid, 1), 1);
	assert_true(store_in_tx(s));
	store_rollback(s);
	assert_false(store_in_tx(s));
	assert_int_equal(put(s, sid, 1), 1); /* not a duplicate: the first one is gone */
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM records"), 1);
}

static void test_store_backend_heartbeat_and_refusals(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	int64_t sid = session(s, "board-e", 1, &(uint64_t){0}, NULL);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.spool_dropped = 5;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(store_put_record(s, sid, &env, 10), 1); /* seq 0: outside the ledger */
	Prof__Hello h;
	hello(&h, "x", 1);
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	assert_int_equal(store_put_record(s, sid, &env, 10), -EINVAL);
	/* timestamps that overflow after delta decoding */
	uint32_t id = 1;
	uint64_t t[2] = {UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1}, v[2] = {1, 2};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_event_ids = 1;
	c.event_ids = &id;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 2;
	c.values = v;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	assert_int_equal(store_put_record(s, sid, &env, 10), -ERANGE);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(q(f, "SELECT spool_dropped FROM sessions WHERE agent_id = 'board-e'"), 5);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM records"), 0);
}

/* PostgreSQL only: kinds not ported yet are refused before anything is written. */
static void test_store_backend_pg_other_kinds_need_sqlite(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	int64_t sid = session(s, "board-f", 1, &(uint64_t){0}, NULL);
	Prof__Samples smp = PROF__SAMPLES__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &smp;
	assert_int_equal(store_put_record(s, sid, &env, 10), -EOPNOTSUPP);
	assert_int_equal(store_commit(s), 0);
	/* queries are SQLite only for now: a clear refusal, not a crash */
	assert_int_equal(store_list_sessions(s, NULL, NULL), -EOPNOTSUPP);
	store_close(s);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM records"), 0);
}

/* PostgreSQL only: migrations are versioned, run once, and a newer schema is refused. */
static void test_store_backend_pg_migrations_versioned(void **state)
{
	struct fx *f = *state;
	struct store *s = open_store(f);
	store_close(s);
	s = open_store(f); /* reopening migrates nothing */
	store_close(s);
	assert_int_equal(q(f, "SELECT COUNT(*) FROM prof_schema_migrations"), 1);
	assert_int_equal(q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 1);
	assert_int_equal(pg_exec(f->uri, "INSERT INTO prof_schema_migrations (version) VALUES (99)"), 0);
	assert_int_equal(store_open(f->uri, 0, &s), -EPROTONOSUPPORT);
	assert_null(s);
}

/* Each test twice, named test_..._sqlite and test_..._postgresql. */
#define BOTH(t)                                                                                              \
	{#t "_sqlite", t, setup_sqlite, teardown, NULL}, { #t "_postgresql", t, setup_pg, teardown, NULL }

int main(void)
{
	log_init("test_store_backends", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
		BOTH(test_store_backend_sessions_found_or_created),
		BOTH(test_store_backend_exactly_once),
		BOTH(test_store_backend_two_handles_one_database),
		BOTH(test_store_backend_rollback_discards),
		BOTH(test_store_backend_heartbeat_and_refusals),
		cmocka_unit_test_setup_teardown(test_store_backend_pg_other_kinds_need_sqlite, setup_pg, teardown),
		cmocka_unit_test_setup_teardown(test_store_backend_pg_migrations_versioned, setup_pg, teardown),
	};
	return cmocka_run_group_tests_name("store_backends", tests, group_setup, group_teardown);
}
