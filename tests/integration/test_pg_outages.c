/* A PostgreSQL store that misbehaves (issue 31), on a throwaway server on
 * 127.0.0.1 (skipped with the reason when PostgreSQL is missing), with real
 * collectors and agents:
 * - the collector's backend stopped (SIGSTOP) for 4 s: the collector keeps
 *   answering Hellos, logs one "unavailable" and one "back" line, loses nothing
 *   acked; stopped again, SIGTERM ends the collector within 1 s;
 * - a session made while the database is read-only (25006) is replaced once the
 *   database is writable again, within one retry interval;
 * - the collector's INSERT privilege revoked for 10 s: agents' attempts stay at
 *   the retry hint's rate and frames sent stay within 1.2x the records;
 * - least privilege: `collector migrate` as the owner, then a collector as a
 *   role with SELECT/INSERT/UPDATE only starts and stores (and without the
 *   migration it is refused with what to do);
 * - the test server runs synchronous_commit=off: the collector's sessions run
 *   with it on, and its log says what an ack means. */
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
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "frame.h"
#include "pgserver.h"
#include "profiler.pb-c.h"
#include "srvclient.h"
#include "testproc.h"

static struct pgserver pg;
static int pg_ok;
static char pg_why[512];

static int group_setup(void **state)
{
	(void)state;
	pg_ok = pg_start(&pg, pg_why, sizeof(pg_why)) == 0;
	if (!pg_ok)
		fprintf(stderr, "PostgreSQL tests will be skipped: %s\n", pg_why);
	return 0;
}

static int group_teardown(void **state)
{
	(void)state;
	pg_stop(&pg);
	return 0;
}

static void need_pg(void)
{
	if (!pg_ok) {
		fprintf(stderr, "skipped: %s\n", pg_why);
		skip();
	}
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The backend of the collector connected to database db (application_name prof-collector/2). */
static int collector_backend(const char *uri, const char *db)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT pid FROM pg_stat_activity WHERE application_name = 'prof-collector/2' AND datname = '%s'"
		 " ORDER BY backend_start DESC LIMIT 1",
		 db);
	for (int i = 0; i < 50; i++) {
		int64_t pid = pg_int(uri, sql);
		if (pid > 0)
			return (int)pid;
		tp_sleep_ms(100);
	}
	return -1;
}

/* Connect, send a Hello, wait up to wait_ms for any answer (Ack or Error):
 * milliseconds it took, or -1 (no answer). */
static int hello_answer_ms(int port, const char *agent, int wait_ms)
{
	double t0 = now_s();
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	assert_true(fd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent;
	h.boot_id = 7;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	frames_add(&buf, &len, &env);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	free(buf);
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int n = poll(&p, 1, wait_ms);
	uint8_t in[512];
	ssize_t r = n > 0 ? read(fd, in, sizeof(in)) : -1;
	close(fd);
	return r > 0 ? (int)((now_s() - t0) * 1000) : -1;
}

static int64_t agent_records(const char *uri, const char *id, int *complete)
{
	char q[512];
	const char *from = "FROM records r JOIN sessions s ON s.id = r.session_id WHERE s.agent_id = ";
	snprintf(q, sizeof(q), "SELECT COUNT(*) %s'%s'", from, id);
	int64_t n = pg_int(uri, q);
	snprintf(q, sizeof(q), "SELECT COUNT(DISTINCT r.seq) %s'%s'", from, id);
	int64_t d = pg_int(uri, q);
	snprintf(q, sizeof(q), "SELECT COALESCE(MAX(r.seq), 0) %s'%s'", from, id);
	int64_t hi = pg_int(uri, q);
	*complete = n > 0 && d == n && hi == n;
	return n;
}

/* "N failed or refused attempts" and "M retry hints" from the agent's summary. */
static void agent_conn_stats(const char *log, long long *acked_hellos, long long *failed, long long *hints,
			     long long *sent)
{
	char *s = tp_slurp(log);
	*acked_hellos = *failed = *hints = *sent = -1;
	const char *p = s ? strstr(s, " connections: ") : NULL;
	if (p)
		sscanf(p, " connections: %lld acked Hellos, %lld failed or refused attempts, %lld retry hints", acked_hellos,
		       failed, hints);
	p = s ? strstr(s, " records: ") : NULL;
	long long created;
	if (p)
		sscanf(p, " records: %lld created, %lld sent", &created, sent);
	free(s);
}

static void test_pg_outage_backend_stopped(void **state)
{
	(void)state;
	need_pg();
	char uri[512], dir[256], clog[320], alog[320], spool[320];
	assert_int_equal(pg_new_db(&pg, "hang", uri, sizeof(uri)), 0);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgh"), 0);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	snprintf(alog, sizeof(alog), "%s/agent.log", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	const char *extra[] = {"--store-timeout", "1000", NULL};
	int port;
	pid_t coll = tp_start_collector_args(dir, uri, 0, &port, clog, extra);
	assert_true(coll > 0);
	pid_t a = fl_start_agent(port, spool, "hang-board", "100", "8", NULL, alog, NULL);
	assert_true(a > 0);
	for (int i = 0; i < 50 && pg_int(uri, "SELECT COUNT(*) FROM records") < 3; i++)
		tp_sleep_ms(100);
	int be = collector_backend(uri, "hang");
	assert_true(be > 0);
	assert_int_equal(kill(be, SIGSTOP), 0);
	int answered = 0, probes = 0, worst = 0;
	double t0 = now_s();
	while (now_s() - t0 < 4.0) {
		char id[32];
		snprintf(id, sizeof(id), "probe-%d", probes++);
		int ms = hello_answer_ms(port, id, 3500);
		if (ms >= 0)
			answered++;
		if (ms > worst)
			worst = ms;
		tp_sleep_ms(300);
	}
	kill(be, SIGCONT);
	fprintf(stderr, "backend stopped 4 s: %d of %d Hellos answered (slowest %d ms)\n", answered, probes, worst);
	assert_int_equal(answered, probes);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	int complete;
	int64_t stored = agent_records(uri, "hang-board", &complete);
	fprintf(stderr, "agent created %lld, stored %lld (complete %d)\n", (long long)fl_created(alog),
		(long long)stored, complete);
	assert_int_equal(stored, fl_created(alog));
	assert_true(complete);
	assert_int_equal(tp_file_count(clog, "agents are told to retry after"), 1);
	assert_int_equal(tp_file_count(clog, " back after "), 1);

	/* Stopped again, with a commit waiting on it: SIGTERM ends the collector within 1 s. */
	pid_t b = fl_start_agent(port, spool, "hang-board-2", "50", "6", NULL, alog, NULL);
	for (int i = 0; i < 50 && pg_int(uri, "SELECT COUNT(*) FROM sessions WHERE agent_id = 'hang-board-2'") < 1;
	     i++)
		tp_sleep_ms(100);
	be = collector_backend(uri, "hang");
	assert_true(be > 0);
	assert_int_equal(kill(be, SIGSTOP), 0);
	tp_sleep_ms(400);
	double ts = now_s();
	kill(coll, SIGTERM);
	int status;
	int wrc = tp_wait(coll, 3000, &status);
	double took = now_s() - ts;
	kill(be, SIGCONT);
	fprintf(stderr, "SIGTERM with the backend stopped: exited in %.3f s\n", took);
	if (wrc < 0)
		tp_stop(coll, 1000);
	assert_int_equal(wrc, 0);
	assert_true(took < 1.0);
	/* A new collector on the same port: agent b's records all arrive, once. */
	coll = tp_start_collector_args(dir, uri, port, &port, clog, extra);
	assert_true(coll > 0);
	rc = fl_wait_exit(b, 60000);
	assert_int_equal(rc, 0);
	stored = agent_records(uri, "hang-board-2", &complete);
	assert_true(complete);
	tp_stop(coll, 5000);
	tp_rm_rf(dir);
}

static void test_pg_outage_read_only_then_writable(void **state)
{
	(void)state;
	need_pg();
	char uri[512], ro_uri[600], dir[256], clog[320], alog[320], spool[320];
	assert_int_equal(pg_new_db(&pg, "ro", uri, sizeof(uri)), 0);
	/* target_session_attrs=any: the reconnect lands on a read-only session (as a failover to a
	 * standby would), the writes then fail with 25006 and the session must be replaced. */
	snprintf(ro_uri, sizeof(ro_uri), "%s?target_session_attrs=any", uri);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgr"), 0);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	snprintf(alog, sizeof(alog), "%s/agent.log", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	const char *extra[] = {"--store-timeout", "1000", "-v", NULL};
	int port;
	pid_t coll = tp_start_collector_args(dir, ro_uri, 0, &port, clog, extra);
	assert_true(coll > 0);
	pid_t a = fl_start_agent(port, spool, "ro-board", "100", "9", NULL, alog, NULL);
	for (int i = 0; i < 50 && pg_int(uri, "SELECT COUNT(*) FROM records") < 3; i++)
		tp_sleep_ms(100);
	char admin[256];
	snprintf(admin, sizeof(admin), "postgresql://prof@127.0.0.1:%d/postgres", pg.port);
	assert_int_equal(pg_exec(admin, "ALTER DATABASE ro SET default_transaction_read_only = on"), 0);
	int be = collector_backend(uri, "ro");
	assert_true(be > 0);
	char sql[128];
	snprintf(sql, sizeof(sql), "SELECT pg_terminate_backend(%d)", be);
	assert_int_equal(pg_exec(admin, sql), 0);
	tp_sleep_ms(3000);
	int64_t before = pg_int(uri, "SELECT COUNT(*) FROM records");
	assert_int_equal(pg_exec(admin, "ALTER DATABASE ro RESET default_transaction_read_only"), 0);
	double t0 = now_s();
	while (now_s() - t0 < 20 && pg_int(uri, "SELECT COUNT(*) FROM records") <= before)
		tp_sleep_ms(100);
	double resumed = now_s() - t0;
	fprintf(stderr, "read-only 3 s: writes resumed %.1f s after the database became writable\n", resumed);
	/* one retry interval of the collector (1, 2, 4 s ... by then) plus the agent's hint wait */
	assert_true(resumed < 9.0);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(alog);
	assert_int_equal(rc, 0);
	int complete;
	assert_int_equal(agent_records(uri, "ro-board", &complete), fl_created(alog));
	assert_true(complete);
	/* the session made while read-only was refused the writes, and replaced (debug lines) */
	assert_true(tp_file_count(clog, "SQLSTATE 25006") >= 1);
	assert_int_equal(tp_file_count(clog, "agents are told to retry after"), 1);
	assert_int_equal(tp_file_count(clog, " back after "), 1);
	tp_stop(coll, 5000);
	tp_rm_rf(dir);
}

/* collector migrate as the owner, a writer role with SELECT/INSERT/UPDATE only; its INSERT on
 * the records ledger revoked for 10 s while three agents send. */
static void test_pg_outage_revoke_least_privilege(void **state)
{
	(void)state;
	need_pg();
	char uri[512], wuri[512], dir[256], clog[320], mlog[320];
	assert_int_equal(pg_new_db(&pg, "rv", uri, sizeof(uri)), 0);
	snprintf(wuri, sizeof(wuri), "postgresql://writer@127.0.0.1:%d/rv", pg.port);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgv"), 0);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	snprintf(mlog, sizeof(mlog), "%s/migrate.log", dir);
	assert_int_equal(pg_exec(uri, "CREATE ROLE writer LOGIN"), 0);
	const char *extra[] = {"--store-timeout", "1000", NULL};
	int port;
	/* Before the migration the writer cannot create the schema: refused, with what to do. */
	pid_t early = tp_start_collector_args(dir, wuri, 0, &port, clog, extra);
	if (early > 0)
		tp_stop(early, 2000);
	assert_true(early < 0);
	assert_true(tp_file_count(clog, "collector migrate") >= 1);
	char collector[512];
	tp_bin("collector", collector, sizeof(collector));
	char *margv[] = {collector, "migrate", "--store", uri, NULL};
	pid_t m = tp_spawn(margv, mlog);
	int status;
	assert_int_equal(tp_wait(m, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(pg_exec(uri, "GRANT SELECT, INSERT, UPDATE ON ALL TABLES IN SCHEMA public TO writer;"
				      "GRANT USAGE ON ALL SEQUENCES IN SCHEMA public TO writer"),
			 0);
	unlink(clog);
	pid_t coll = tp_start_collector_args(dir, wuri, 0, &port, clog, extra);
	if (coll < 0)
		tp_dump_file(clog);
	assert_true(coll > 0);
	assert_true(tp_file_count(clog, "synchronous_commit=on") >= 1); /* the server's default is off */
	enum { NA = 3 };
	pid_t a[NA];
	char alog[NA][320], id[NA][32];
	for (int i = 0; i < NA; i++) {
		char spool[320];
		snprintf(spool, sizeof(spool), "%s/spool%d", dir, i);
		snprintf(alog[i], sizeof(alog[i]), "%s/agent%d.log", dir, i);
		snprintf(id[i], sizeof(id[i]), "rv-board-%d", i);
		a[i] = fl_start_agent(port, spool, id[i], "50", "15", NULL, alog[i], NULL);
		assert_true(a[i] > 0);
	}
	for (int i = 0; i < 50 && pg_int(uri, "SELECT COUNT(*) FROM records") < 10; i++)
		tp_sleep_ms(100);
	assert_int_equal(pg_exec(uri, "REVOKE INSERT ON records FROM writer"), 0);
	tp_sleep_ms(10000);
	assert_int_equal(pg_exec(uri, "GRANT INSERT ON records TO writer"), 0);
	long long created = 0, sent = 0;
	for (int i = 0; i < NA; i++) {
		int rc = fl_wait_exit(a[i], 60000);
		if (rc != 0)
			tp_dump_file(alog[i]);
		assert_int_equal(rc, 0);
		int complete;
		int64_t c = fl_created(alog[i]);
		assert_int_equal(agent_records(uri, id[i], &complete), c);
		assert_true(complete);
		long long hellos, failed, hints, s;
		agent_conn_stats(alog[i], &hellos, &failed, &hints, &s);
		fprintf(stderr, "%s: %lld created, %lld frames sent, %lld acked Hellos, %lld failed attempts, %lld "
				"retry hints\n",
			id[i], (long long)c, s, hellos, failed, hints);
		/* 10 s of refusals: attempts at the retry hint's pace (1, 2, 4, 8 s plus jitter), not ~10/s */
		assert_true(failed >= 1 && failed <= 12);
		created += c;
		sent += s;
	}
	fprintf(stderr, "REVOKE 10 s: %lld frames for %lld records (%.3fx)\n", sent, created,
		(double)sent / (double)created);
	assert_true((double)sent <= 1.2 * (double)created);
	assert_int_equal(tp_file_count(clog, "agents are told to retry after"), 1);
	assert_int_equal(tp_file_count(clog, " back after "), 1);
	tp_stop(coll, 5000);
	coll = -1;
	assert_int_equal(tp_file_count(clog, ", 0 closed for bad input"), 1); /* store failures are not bad input */
	tp_rm_rf(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pg_outage_backend_stopped),
		cmocka_unit_test(test_pg_outage_read_only_then_writable),
		cmocka_unit_test(test_pg_outage_revoke_least_privilege),
	};
	return cmocka_run_group_tests_name("pg_outages", tests, group_setup, group_teardown);
}
