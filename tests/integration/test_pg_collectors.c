/* Several collectors, one PostgreSQL database (a real server started by the
 * test on 127.0.0.1; skipped with the reason when PostgreSQL is missing):
 * simulated agents on both collectors at once and a real agent's counters;
 * every record is in the database exactly once and the schema was migrated
 * once. (Exactly once across two writers of the same session is
 * test_store_backends' two-handles test.) */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "loadgen.h"
#include "pgserver.h"
#include "testproc.h"

static void test_pg_two_collectors_one_database(void **state)
{
	struct pgserver pg;
	char why[512], uri[512];
	if (pg_start(&pg, why, sizeof(why)) < 0) {
		fprintf(stderr, "skipped: %s\n", why);
		pg_stop(&pg);
		skip();
	}
	assert_int_equal(pg_new_db(&pg, "fleet", uri, sizeof(uri)), 0);
	char dir[256], clog[2][320], alog[320], spool[320];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgc"), 0);
	snprintf(alog, sizeof(alog), "%s/agent.log", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	pid_t coll[2];
	int port[2];
	for (int i = 0; i < 2; i++) {
		char sub[300];
		snprintf(sub, sizeof(sub), "%s/c%d", dir, i);
		assert_int_equal(mkdir(sub, 0755), 0);
		snprintf(clog[i], sizeof(clog[i]), "%s/collector.log", sub);
		coll[i] = tp_start_collector(sub, uri, 0, &port[i], clog[i]);
		if (coll[i] < 0)
			fl_dump(clog[i]);
		assert_true(coll[i] > 0);
	}
	/* A real agent on collector 1; simulated agents on collector 0 (in a child) and 1. */
	pid_t a = fl_start_agent(port[1], spool, "pg-board", "20", "3", NULL, alog, NULL);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		struct loadgen_opts o = {.port = port[0], .agents = 30, .rate = 20, .seconds = 3, .drain_s = 20,
					 .prefix = "pga", .quiet = 1};
		struct loadgen_result r;
		_exit(loadgen_run(&o, &r) == 0 && r.acked == r.generated ? 0 : 1);
	}
	struct loadgen_opts o = {.port = port[1], .agents = 30, .rate = 20, .seconds = 3, .drain_s = 20,
				 .prefix = "pgb", .quiet = 1};
	struct loadgen_result r;
	assert_int_equal(loadgen_run(&o, &r), 0);
	assert_int_equal(fl_wait_exit(child, 60000), 0);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0) {
		fl_dump(alog);
		fl_dump(clog[1]);
	}
	assert_int_equal(rc, 0);
	int64_t pgb = pg_int(uri, "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = r.session_id "
				  "WHERE s.agent_id LIKE 'pgb-%'");
	int64_t pga = pg_int(uri, "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = r.session_id "
				  "WHERE s.agent_id LIKE 'pga-%'");
	int64_t real = pg_int(uri, "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = r.session_id "
				   "WHERE s.agent_id = 'pg-board'");
	int64_t hi = pg_int(uri, "SELECT MAX(r.seq) FROM records r JOIN sessions s ON s.id = r.session_id "
				 "WHERE s.agent_id = 'pg-board'");
	int64_t created = fl_created(alog);
	fprintf(stderr, "PostgreSQL: %lld + %lld simulated records (sent %llu each side), real agent %lld of %lld\n",
		(long long)pga, (long long)pgb, (unsigned long long)r.generated, (long long)real, (long long)created);
	assert_int_equal(pgb, (int64_t)r.generated);
	assert_true(pga > 0);
	assert_int_equal(real, created);
	assert_int_equal(hi, created);
	assert_true(pg_int(uri, "SELECT COUNT(*) FROM counter_samples c JOIN sessions s ON s.id = c.session_id "
				"WHERE s.agent_id = 'pg-board'") > 0);
	for (int i = 0; i < 2; i++)
		tp_stop(coll[i], 5000);
	/* Both collectors wrote one schema: migrated once. */
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM prof_schema_migrations"), 1);
	tp_rm_rf(dir);
	pg_stop(&pg);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pg_two_collectors_one_database),
	};
	return cmocka_run_group_tests_name("pg_collectors", tests, NULL, NULL);
}
