/* Token authentication end to end on loopback: a real collector with and
 * without --token-file, real agents with the right, a wrong or no token. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "testproc.h"

struct env {
	char dir[256], db[300], clog[300], alog[300], spool[300], token[300], wrong[300];
	pid_t collector;
	int port;
};

static int start(void **state, bool with_token)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_tmpdir(e->dir, sizeof(e->dir), "auth") < 0)
		return -1;
	snprintf(e->db, sizeof(e->db), "%s/profile.db", e->dir);
	snprintf(e->clog, sizeof(e->clog), "%s/collector.log", e->dir);
	snprintf(e->alog, sizeof(e->alog), "%s/agent.log", e->dir);
	snprintf(e->spool, sizeof(e->spool), "%s/spool", e->dir);
	snprintf(e->token, sizeof(e->token), "%s/token", e->dir);
	snprintf(e->wrong, sizeof(e->wrong), "%s/wrong-token", e->dir);
	if (fl_write_token(e->token, 0) < 0 || fl_write_token(e->wrong, 1) < 0)
		return -1;
	const char *extra[] = {"--token-file", e->token, NULL};
	e->collector = tp_start_collector_args(e->dir, e->db, 0, &e->port, e->clog, with_token ? extra : NULL);
	if (e->collector < 0)
		return -1;
	*state = e;
	return 0;
}

static int setup_token(void **state) { return start(state, true); }
static int setup_plain(void **state) { return start(state, false); }

static int teardown(void **state)
{
	struct env *e = *state;
	if (e->collector > 0 && tp_alive(e->collector))
		tp_stop(e->collector, 5000);
	tp_rm_rf(e->dir);
	free(e);
	return 0;
}

/* The collector's final stats line after SIGTERM. */
static void stop_collector(struct env *e)
{
	int status;
	kill(e->collector, SIGTERM);
	assert_int_equal(tp_wait(e->collector, 10000, &status), 0);
	e->collector = -1;
}

static void test_auth_right_token_stores_records(void **state)
{
	struct env *e = *state;
	pid_t a = fl_start_agent(e->port, e->spool, "tok-board", "50", "2", e->token, e->alog, NULL);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0) {
		tp_dump_file(e->alog);
		tp_dump_file(e->clog);
	}
	assert_int_equal(rc, 0);
	int complete;
	int64_t n = fl_records(e->db, "tok-board", &complete);
	assert_true(n > 10);
	assert_true(complete);
	assert_int_equal(n, fl_created(e->alog));
	stop_collector(e);
	assert_int_equal(tp_file_count(e->clog, "stats: 0 authentication failures"), 1);
}

static void test_auth_missing_token_refused_clearly(void **state)
{
	struct env *e = *state;
	pid_t a = fl_start_agent(e->port, e->spool, "no-token", "50", "5", NULL, e->alog, NULL);
	int rc = fl_wait_exit(a, 30000);
	tp_dump_file(e->alog);
	assert_int_equal(rc, 1); /* refused for good: exit 1, not a reconnect loop */
	assert_true(tp_file_count(e->alog, "--token-file") >= 1);
	assert_true(tp_file_count(e->clog, "authentication required") >= 1);
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id='no-token'"), 0);
	stop_collector(e);
	assert_int_equal(tp_file_count(e->clog, "stats: 1 authentication failures"), 1);
}

static void test_auth_wrong_token_refused_clearly(void **state)
{
	struct env *e = *state;
	pid_t a = fl_start_agent(e->port, e->spool, "bad-token", "50", "5", e->wrong, e->alog, NULL);
	int rc = fl_wait_exit(a, 30000);
	tp_dump_file(e->alog);
	assert_int_equal(rc, 1);
	assert_true(tp_file_count(e->alog, "refused this agent (token authentication)") >= 1);
	assert_true(tp_file_count(e->clog, "HMAC mismatch") >= 1);
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM records"), 0);
}

/* A collector without a token sends no Challenge: an agent with one still gets in. */
static void test_auth_token_agent_with_plain_collector(void **state)
{
	struct env *e = *state;
	pid_t a = fl_start_agent(e->port, e->spool, "tok-board", "50", "2", e->token, e->alog, NULL);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(e->alog);
	assert_int_equal(rc, 0);
	int complete;
	assert_true(fl_records(e->db, "tok-board", &complete) > 10);
	assert_true(complete);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_auth_right_token_stores_records, setup_token, teardown),
		cmocka_unit_test_setup_teardown(test_auth_missing_token_refused_clearly, setup_token, teardown),
		cmocka_unit_test_setup_teardown(test_auth_wrong_token_refused_clearly, setup_token, teardown),
		cmocka_unit_test_setup_teardown(test_auth_token_agent_with_plain_collector, setup_plain, teardown),
	};
	return cmocka_run_group_tests_name("auth", tests, NULL, NULL);
}
