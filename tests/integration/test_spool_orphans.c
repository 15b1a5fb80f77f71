/* Records a run leaves in its spool (issue 25 item 7), with the real agent and
 * collector on 127.0.0.1: a run whose collector goes away before the end exits
 * 1 and says what it left where; the next run of the same agent id and
 * collector sends them in their own session, each record once (the collector
 * had part of them already); `agent spool send` sends them on request. Not
 * sent: a running agent's session, another agent id's. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "testproc.h"

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "orphans", false);
}

/* `agent ARGS` (a shell line), output appended to log; its exit status. */
static int agent_cmd(const char *args, const char *log)
{
	char bin[512], cmd[2048];
	tp_bin("agent", bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "timeout 120 %s %s >>%s 2>&1", bin, args, log);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* One run of `agent stat ... -- sleep secs` for id, flush timeout flush_s; its exit status. */
static int run(struct tp_env *e, int port, const char *id, const char *secs, const char *flush_s, const char *log)
{
	char args[1024];
	snprintf(args, sizeof(args),
		 "stat --collector 127.0.0.1:%d --spool %s --agent-id %s -I 20 --flush-timeout %s -- /bin/sleep %s", port,
		 e->spool, id, flush_s, secs);
	return agent_cmd(args, log);
}

static void check_complete(struct tp_env *e, int64_t sid, int64_t created)
{
	int64_t n = tp_db_int(e->db, "SELECT COUNT(*) FROM records WHERE session_id = %lld", (long long)sid);
	int64_t top = tp_db_int(e->db, "SELECT MAX(seq) FROM records WHERE session_id = %lld", (long long)sid);
	fprintf(stderr, "session %lld: %lld records stored (seqs up to %lld), %lld created\n", (long long)sid,
		(long long)n, (long long)top, (long long)created);
	assert_int_equal(n, created); /* none lost, none twice */
	assert_int_equal(top, created);
}

/* The collector stops in the middle of run 1: part of its records stored, the
 * rest left in its spool; run 2 sends them into run 1's session. */
static void test_spool_orphans_next_run_delivers(void **state)
{
	struct tp_env *e = *state;
	assert_int_equal(tp_env_start_collector(e, 0, NULL), 0);
	int port = e->port;
	char log1[320], log2[320], ls[320];
	snprintf(log1, sizeof(log1), "%s/run1.log", e->dir);
	snprintf(log2, sizeof(log2), "%s/run2.log", e->dir);
	snprintf(ls, sizeof(ls), "%s/ls.log", e->dir);
	char agent[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", port);
	char *argv[] = {agent, "stat", "--collector", coll, "--spool", e->spool, "--agent-id", "orph", "-I", "20",
			"--flush-timeout", "1", "--", "/bin/sleep", "2", NULL};
	pid_t a = tp_spawn(argv, log1);
	/* the collector goes away while run 1 goes on, once it stored some of it (issue 43: a fixed
	 * 700 ms, which an agent slow to start on a loaded machine can outlast with nothing stored) */
	for (int i = 0; i < 1000 && tp_db_int(e->db, "SELECT COUNT(*) FROM records r JOIN sessions s ON s.id = "
						      "r.session_id WHERE s.agent_id = 'orph'") < 1; i++)
		tp_sleep_ms(20);
	tp_stop(e->collector, 5000);
	e->collector = 0;
	int status = -1;
	assert_int_equal(tp_wait(a, 30000, &status), 0);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 1); /* records left behind: not a success */
	assert_int_equal(tp_file_count(log1, "NOT DELIVERED: "), 1);
	assert_int_equal(tp_file_count(log1, "the next run of agent id orph with this collector sends them"), 1);
	int64_t created1 = fl_created(log1);
	int64_t sid1 = tp_db_int(e->db, "SELECT id FROM sessions WHERE agent_id = 'orph'");
	int64_t stored1 = tp_db_int(e->db, "SELECT COUNT(*) FROM records WHERE session_id = %lld", (long long)sid1);
	fprintf(stderr, "run 1: %lld created, %lld stored before the collector went away\n", (long long)created1,
		(long long)stored1);
	assert_true(sid1 > 0 && stored1 > 0 && stored1 < created1);
	char args[1024];
	snprintf(args, sizeof(args), "spool ls --spool %s", e->spool);
	assert_int_equal(agent_cmd(args, ls), 0);
	assert_int_equal(tp_file_count(ls, " left "), 1);

	assert_int_equal(tp_env_start_collector(e, port, NULL), 0);
	assert_int_equal(run(e, port, "orph", "0.3", "10", log2), 0);
	/* a healthy run: records spooled before its connection was up are not "sent again" (issue 42) */
	assert_int_equal(tp_file_count(log2, "sent (0 of them again after a lost connection)"), 1);
	assert_int_equal(tp_file_count(log2, "sent again:"), 0);
	assert_int_equal(tp_file_count(log2, "earlier runs: "), 1);
	assert_int_equal(tp_file_count(log2, "(1 of 1 session(s))"), 1);
	check_complete(e, sid1, created1); /* the rest of run 1, in run 1's session */
	int64_t sid2 = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id = 'orph'");
	assert_true(sid2 > sid1);
	check_complete(e, sid2, fl_created(log2));
	assert_int_equal(agent_cmd(args, ls), 0);
	assert_int_equal(tp_file_count(ls, "no spooled sessions"), 1);
}

/* Another agent id's orphan is not sent by this one; `agent spool send` sends
 * what ended runs left, not a running agent's session; with no collector it
 * gives up after --timeout, exit 1, keeping the records. */
static void test_spool_orphans_spool_send(void **state)
{
	struct tp_env *e = *state;
	int port = tp_free_port();
	char log1[320], logb[320], logs[320], logl[320], logs2[320], logs3[320];
	snprintf(log1, sizeof(log1), "%s/run1.log", e->dir);
	snprintf(logb, sizeof(logb), "%s/other.log", e->dir);
	snprintf(logs, sizeof(logs), "%s/send.log", e->dir);
	snprintf(logl, sizeof(logl), "%s/live.log", e->dir);
	snprintf(logs2, sizeof(logs2), "%s/send2.log", e->dir);
	snprintf(logs3, sizeof(logs3), "%s/send3.log", e->dir);
	assert_int_equal(run(e, port, "gone", "0.2", "0.3", log1), 1); /* no collector at all */
	int64_t created = fl_created(log1);
	assert_true(created > 0);
	char args[1024];
	snprintf(args, sizeof(args), "spool send --collector 127.0.0.1:%d --spool %s --timeout 1", port, e->spool);
	assert_int_equal(agent_cmd(args, logs), 1); /* still no collector */
	assert_int_equal(tp_file_count(logs, "not delivered within --timeout"), 1);

	assert_int_equal(tp_env_start_collector(e, port, NULL), 0);
	assert_int_equal(run(e, port, "other", "0.2", "10", logb), 0); /* another agent id: not its to send */
	assert_int_equal(tp_file_count(logb, "earlier runs: "), 0);
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id = 'gone'"), 0);

	/* a running agent of the same id: its own session is not taken */
	char agent[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", port);
	char *argv[] = {agent, "stat", "--collector", coll, "--spool", e->spool, "--agent-id", "live", "-I", "20",
			"--", "/bin/sleep", "3", NULL};
	pid_t live = tp_spawn(argv, logl);
	tp_sleep_ms(800);
	assert_int_equal(agent_cmd(args, logs2), 0);
	char want[96];
	snprintf(want, sizeof(want), "sent %lld record(s) of 1 session(s)", (long long)created);
	assert_int_equal(tp_file_count(logs2, want), 1);
	int64_t sid = tp_db_int(e->db, "SELECT id FROM sessions WHERE agent_id = 'gone'");
	check_complete(e, sid, created);
	assert_int_equal(agent_cmd(args, logs3), 0);
	assert_int_equal(tp_file_count(logs3, "nothing to send in"), 1);
	int status = -1;
	assert_int_equal(tp_wait(live, 30000, &status), 0);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	int64_t sidl = tp_db_int(e->db, "SELECT id FROM sessions WHERE agent_id = 'live'");
	check_complete(e, sidl, fl_created(logl));
}

/* Issue 42 item 3: the command the NOT DELIVERED line prints names the spool and the token
 * file the run used, and run as printed (once the collector is there) it sends the records. */
static void test_spool_orphans_printed_command_sends(void **state)
{
	struct tp_env *e = *state;
	int port = tp_free_port();
	char log1[320], logs[320], token[320], spool[400];
	snprintf(log1, sizeof(log1), "%s/run1.log", e->dir);
	snprintf(logs, sizeof(logs), "%s/send.log", e->dir);
	snprintf(token, sizeof(token), "%s/token", e->dir);
	snprintf(spool, sizeof(spool), "%s/own spool", e->dir); /* a blank: the printed command quotes it */
	assert_int_equal(fl_write_token(token, 0), 0);
	char args[1400];
	snprintf(args, sizeof(args),
		 "stat --collector 127.0.0.1:%d --spool '%s' --agent-id printed --token-file %s -I 20 "
		 "--flush-timeout 0.3 -- /bin/sleep 0.2",
		 port, spool, token);
	assert_int_equal(agent_cmd(args, log1), 1); /* no collector yet */
	int64_t created = fl_created(log1);
	assert_true(created > 0);
	char *text = tp_slurp(log1);
	assert_non_null(text);
	const char *from = strstr(text, "(or `agent spool send ");
	if (!from)
		tp_dump_file(log1);
	assert_non_null(from);
	from += strlen("(or `agent ");
	const char *to = strchr(from, '`');
	assert_non_null(to);
	char printed[1024];
	snprintf(printed, sizeof(printed), "%.*s", (int)(to - from), from);
	free(text);
	fprintf(stderr, "printed: agent %s\n", printed);
	assert_non_null(strstr(printed, "--token-file "));
	assert_non_null(strstr(printed, "--spool '"));

	const char *extra[] = {"--token-file", token, NULL};
	assert_int_equal(tp_env_start_collector(e, port, extra), 0);
	assert_int_equal(agent_cmd(printed, logs), 0);
	char want[96];
	snprintf(want, sizeof(want), "sent %lld record(s) of 1 session(s)", (long long)created);
	if (tp_file_count(logs, want) != 1)
		tp_dump_file(logs);
	assert_int_equal(tp_file_count(logs, want), 1);
	check_complete(e, tp_db_int(e->db, "SELECT id FROM sessions WHERE agent_id = 'printed'"), created);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_spool_orphans_next_run_delivers, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_spool_orphans_spool_send, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_spool_orphans_printed_command_sends, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
