/* Collectors on a PostgreSQL store (a real server started by the test on
 * 127.0.0.1; skipped with the reason when PostgreSQL is missing):
 * - several collectors, one database: simulated agents on both collectors at
 *   once and a real agent's counters; every record is in the database exactly
 *   once and the schema was migrated once;
 * - one agent's records sent to one collector, then replayed (with new ones)
 *   to the other: the duplicates are stored once;
 * - records one collector sends ahead (#40) that another stored meanwhile: its
 *   batch redone, each record once, the acks and both collectors' counts exact;
 * - `agent record` into a PostgreSQL-backed collector, read back by
 *   `collector report --top` and `collector sessions` with --store URI;
 * - the listening collector's own downsampling (--downsample-after) on a
 *   PostgreSQL store (tests/lib/downsample_listen.h). */
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
#include <unistd.h>

#include <cmocka.h>

#include "downsample_listen.h"
#include "fleet.h"
#include "loadgen.h"
#include "pgserver.h"
#include "profiler.pb-c.h"
#include "srvclient.h"
#include "testproc.h"

static struct pgserver pg;
static int pg_ok;
static char pg_why[512];

static int group_setup(void **state)
{
	pg_ok = pg_start(&pg, pg_why, sizeof(pg_why)) == 0;
	if (!pg_ok)
		fprintf(stderr, "PostgreSQL tests will be skipped: %s\n", pg_why);
	return 0;
}

static int group_teardown(void **state)
{
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

static void test_pg_two_collectors_one_database(void **state)
{
	need_pg();
	char uri[512];
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
			tp_dump_file(clog[i]);
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
		tp_dump_file(alog);
		tp_dump_file(clog[1]);
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
	/* Both collectors wrote one schema: migrated once (each of its 5 migrations applied once). */
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM prof_schema_migrations"), 6);
	tp_rm_rf(dir);
}

/* An agent's connection over TCP with its Hello (agent, boot 5) sent; the socket. */
static int agent_hello(int port, const char *agent)
{
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
	h.boot_id = 5;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	frames_add(&buf, &len, &env);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	free(buf);
	return fd;
}

/* Counters seq from..to on the connection; returns the highest seq acked (waits up to 15 s for to). */
static uint64_t agent_records(int fd, uint64_t from, uint64_t to)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	for (uint64_t seq = from; seq <= to; seq++)
		add_counters(&buf, &len, seq);
	assert_int_equal(write(fd, buf, len), (ssize_t)len);
	free(buf);
	struct frame_decoder dec;
	assert_int_equal(frame_decoder_init(&dec, SRVCLIENT_MAX_FRAME), 0);
	uint64_t acked = 0;
	for (int waited = 0; acked < to && waited < 15000;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, 100) <= 0) {
			waited += 100;
			continue;
		}
		uint8_t in[4096];
		ssize_t n = read(fd, in, sizeof(in));
		if (n <= 0)
			break;
		assert_int_equal(frame_decoder_feed(&dec, in, (size_t)n), 0);
		const uint8_t *pl;
		size_t pln;
		while (frame_decoder_next(&dec, &pl, &pln) == 1) {
			Prof__Envelope *e = prof__envelope__unpack(NULL, pln, pl);
			assert_non_null(e);
			if (e->body_case == PROF__ENVELOPE__BODY_ACK && e->ack->seq > acked)
				acked = e->ack->seq;
			prof__envelope__free_unpacked(e, NULL);
		}
	}
	frame_decoder_free(&dec);
	return acked;
}

/* One agent session over TCP: Hello and counters seq from..to; the highest seq acked. */
static uint64_t send_records(int port, const char *agent, uint64_t from, uint64_t to)
{
	int fd = agent_hello(port, agent);
	uint64_t acked = agent_records(fd, from, to);
	close(fd);
	return acked;
}

/* An agent's records 1..20 on collector 0, then (as after a failover) 11..30
 * on collector 1: 11..20 are duplicates from another collector, stored once. */
static void test_pg_duplicates_across_collectors_stored_once(void **state)
{
	need_pg();
	char uri[512], dir[256];
	assert_int_equal(pg_new_db(&pg, "dups", uri, sizeof(uri)), 0);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgd"), 0);
	pid_t coll[2];
	int port[2];
	char clog[2][320];
	for (int i = 0; i < 2; i++) {
		char sub[300];
		snprintf(sub, sizeof(sub), "%s/c%d", dir, i);
		assert_int_equal(mkdir(sub, 0755), 0);
		snprintf(clog[i], sizeof(clog[i]), "%s/collector.log", sub);
		coll[i] = tp_start_collector(sub, uri, 0, &port[i], clog[i]);
		assert_true(coll[i] > 0);
	}
	assert_int_equal(send_records(port[0], "dup-board", 1, 20), 20);
	assert_int_equal(send_records(port[1], "dup-board", 11, 30), 30);
	assert_int_equal(send_records(port[0], "dup-board", 1, 30), 30); /* everything again */
	for (int i = 0; i < 2; i++)
		tp_stop(coll[i], 5000);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sessions"), 1);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM records"), 30);
	assert_int_equal(pg_int(uri, "SELECT COUNT(DISTINCT seq) FROM counter_samples"), 30);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM counter_samples"), 30); /* one row per record */
	assert_int_equal(pg_int(uri, "SELECT records FROM sessions"), 30);
	assert_int_equal(pg_int(uri, "SELECT connects FROM sessions"), 3);
	tp_rm_rf(dir);
}

/* Wait up to 10 s for a line with needle in a log; its count. */
static int wait_log(const char *log, const char *needle, int want)
{
	int n = 0;
	for (int i = 0; i < 200 && (n = tp_file_count(log, needle)) < want; i++)
		usleep(50000);
	return n;
}

/* #40: records sent ahead (store_ahead.c) meet seqs another collector stored meanwhile. A
 * forged agent's record 1 reaches collector 1 (its session row made, the highest seq it knows
 * then 1: every later record of that connection is sent ahead); records 2..10 then reach
 * collector 0 (stored, acked); then 2..20 reach collector 1: its batch proves 2..10 duplicates
 * at the database, rolls back to its savepoint and redoes them one by one. Each record once,
 * every seq acked, and each collector's counts (the connection's line and the stop line) exact:
 * before #40's fix of the connection's counts its line said 20 stored (record 1 and the batch's
 * 19), 0 duplicates. */
static void test_pg_ahead_redone_across_collectors(void **state)
{
	need_pg();
	char uri[512], dir[256];
	assert_int_equal(pg_new_db(&pg, "ahead", uri, sizeof(uri)), 0);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pga"), 0);
	pid_t coll[2];
	int port[2];
	char clog[2][320];
	for (int i = 0; i < 2; i++) {
		char sub[300];
		snprintf(sub, sizeof(sub), "%s/c%d", dir, i);
		assert_int_equal(mkdir(sub, 0755), 0);
		snprintf(clog[i], sizeof(clog[i]), "%s/collector.log", sub);
		coll[i] = tp_start_collector(sub, uri, 0, &port[i], clog[i]);
		assert_true(coll[i] > 0);
	}
	int fd = agent_hello(port[1], "ahead-board");
	assert_int_equal(agent_records(fd, 1, 1), 1);
	assert_int_equal(send_records(port[0], "ahead-board", 2, 10), 10);
	assert_int_equal(agent_records(fd, 2, 20), 20);
	close(fd);
	assert_int_equal(wait_log(clog[1], "disconnected:", 1), 1);
	for (int i = 0; i < 2; i++)
		tp_stop(coll[i], 5000);
	int redone = tp_file_count(clog[1], "redone one by one");
	if (redone < 1 || tp_file_count(clog[1], "stopped: 11 records stored, 9 duplicates") != 1 ||
	    tp_file_count(clog[1], "disconnected: 11 records stored, 9 duplicates") != 1) {
		tp_dump_file(clog[0]);
		tp_dump_file(clog[1]);
	}
	assert_true(redone >= 1); /* the ahead batch met the duplicates: rolled back and redone */
	assert_int_equal(tp_file_count(clog[0], "stopped: 9 records stored, 0 duplicates"), 1);
	assert_int_equal(tp_file_count(clog[0], "disconnected: 9 records stored, 0 duplicates"), 1);
	assert_int_equal(tp_file_count(clog[1], "stopped: 11 records stored, 9 duplicates"), 1);
	assert_int_equal(tp_file_count(clog[1], "disconnected: 11 records stored, 9 duplicates"), 1);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sessions"), 1);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM records"), 20);
	assert_int_equal(pg_int(uri, "SELECT COUNT(DISTINCT seq) FROM counter_samples"), 20);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM counter_samples"), 20);
	assert_int_equal(pg_int(uri, "SELECT records FROM sessions"), 20);
	tp_rm_rf(dir);
}

static char *run_cli(char *const argv[], const char *log)
{
	unlink(log);
	pid_t pid = tp_spawn(argv, log);
	int status;
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	char *out = tp_slurp(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("%s %s failed: %s", argv[0], argv[1], out ? out : "");
	return out;
}

/* agent record (CPU samples) into a PostgreSQL store; report --top and sessions read it back. */
static void test_pg_record_report_top_and_sessions(void **state)
{
	need_pg();
	char uri[512], dir[256], clog[320], alog[320], rlog[320], spool[320];
	assert_int_equal(pg_new_db(&pg, "rec", uri, sizeof(uri)), 0);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgr"), 0);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	snprintf(alog, sizeof(alog), "%s/agent.log", dir);
	snprintf(rlog, sizeof(rlog), "%s/out.txt", dir);
	snprintf(spool, sizeof(spool), "%s/spool", dir);
	int port;
	pid_t c = tp_start_collector(dir, uri, 0, &port, clog);
	assert_true(c > 0);
	char agent[512], busy[512], collector[512], addr[64];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/busy", busy, sizeof(busy));
	tp_bin("collector", collector, sizeof(collector));
	snprintf(addr, sizeof(addr), "127.0.0.1:%d", port);
	char *argv[] = {agent, "record", "--collector", addr, "--spool", spool, "--agent-id", "pg-rec", "-F", "500",
			"-I", "300", "--backend", "ring", "--", busy, "-1", "1", "0", NULL};
	/* busy -1: until it has had 1 s of CPU (~500 samples at 500 Hz) on a loaded machine too: 1.5 s of
	 * wall time gave 85-94 samples at load 18 (issue 43) */
	pid_t a = tp_spawn(argv, alog);
	int status;
	assert_int_equal(tp_wait(a, 30000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		char *log = tp_slurp(alog);
		bool perm = log && (strstr(log, "run as root") || strstr(log, "not compiled in"));
		tp_dump_file(alog);
		free(log);
		tp_stop(c, 5000);
		if (perm)
			skip();
		tp_dump_file(clog);
		fail_msg("agent record failed (status 0x%x)", status);
	}
	tp_stop(c, 5000);
	int64_t sid = pg_int(uri, "SELECT MAX(id) FROM sessions WHERE agent_id = 'pg-rec'");
	assert_true(sid > 0);
	/* the blocks are the only store of the samples (#40): each with the sum of its keys' counts, which
	 * the report (decoding the blocks) must match */
	int64_t samples = pg_int(uri, "SELECT SUM(samples) FROM sample_blocks");
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema ="
				     " current_schema() AND table_name = 'cpu_samples'"),
			 0);
	fprintf(stderr, "PostgreSQL: session %lld, %lld CPU samples stored\n", (long long)sid, (long long)samples);
	assert_true(samples > 100);
	assert_true(pg_int(uri, "SELECT COUNT(*) FROM records WHERE kind = 'samples'") >= 2);

	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rargv[] = {collector, "report", "--store", uri, "--session", sidbuf, "--top", "--limit", "5", NULL};
	char *out = run_cli(rargv, rlog);
	fprintf(stderr, "%s", out);
	char *first = tp_top_first_row(out);
	assert_non_null(first);
	assert_non_null(strstr(first, " spin"));
	assert_non_null(strstr(first, "busy"));
	free(out);

	char *sargv[] = {collector, "sessions", "--store", uri, NULL};
	out = run_cli(sargv, rlog);
	fprintf(stderr, "%s", out);
	assert_non_null(strstr(out, "pg-rec"));
	free(out);

	/* The query model over PostgreSQL (issue 27): the store's top processes without --session; the
	 * program named from the agent's task names; every sample is the program's. */
	char *qargv[] = {collector, "report", "--store", uri, "--since", "10m", "--by", "process", "--json", NULL};
	out = run_cli(qargv, rlog);
	char want[96];
	snprintf(want, sizeof(want), "\"samples\":%lld,", (long long)samples);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "{\"name\":\"busy\""));
	free(out);
	char *jargv[] = {collector, "sessions", "--store", uri, "--json", NULL};
	out = run_cli(jargv, rlog);
	snprintf(want, sizeof(want), "\"cpu_samples\":%lld,", (long long)samples);
	assert_non_null(strstr(out, want));
	free(out);
	/* prune: every sample is older than 1 ms; the session (its agent just left) stays, without them */
	char *pargv[] = {collector, "prune", "--store", uri, "--older-than", "1ms", NULL};
	out = run_cli(pargv, rlog);
	fprintf(stderr, "%s", out);
	free(out);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sample_blocks"), 0);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sample_intervals"), 0);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sessions"), 1);
	assert_true(pg_int(uri, "SELECT (SELECT COUNT(*) FROM sample_mappings) + (SELECT COALESCE(SUM(n), 0) FROM sample_map_blocks)") > 0);
	/* and a session deleted whole */
	char *dargv[] = {collector, "prune", "--store", uri, "--session", sidbuf, "--live-grace", "0", NULL};
	out = run_cli(dargv, rlog);
	free(out);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM sessions"), 0);
	assert_int_equal(pg_int(uri, "SELECT (SELECT COUNT(*) FROM sample_mappings) + (SELECT COALESCE(SUM(n), 0) FROM sample_map_blocks)"), 0);
	assert_int_equal(pg_int(uri, "SELECT COUNT(*) FROM records"), 0);
	tp_rm_rf(dir);
}

static void test_pg_downsample_listen(void **state)
{
	(void)state;
	need_pg();
	char uri[512], dir[256];
	assert_int_equal(pg_new_db(&pg, "downsample", uri, sizeof(uri)), 0);
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "pgdsl"), 0);
	tp_downsample_listen(dir, uri, true);
	tp_rm_rf(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pg_two_collectors_one_database),
		cmocka_unit_test(test_pg_duplicates_across_collectors_stored_once),
		cmocka_unit_test(test_pg_ahead_redone_across_collectors),
		cmocka_unit_test(test_pg_record_report_top_and_sessions),
		cmocka_unit_test(test_pg_downsample_listen),
	};
	return cmocka_run_group_tests_name("pg_collectors", tests, group_setup, group_teardown);
}
