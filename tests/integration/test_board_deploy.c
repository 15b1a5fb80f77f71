/* The board deployment (issue 35): board/arndale-octa/deploy.sh run against a directory
 * standing for the board's root (its /etc/machine-id written first, as a Linux board has
 * one) installs the agent, the capture libraries, the runner and the service; the installed
 * init script, run as the board runs it (PROF_ROOT: the same paths under that directory),
 * starts continuous `prof-agent record -a` against a real collector that requires a token:
 * the session arrives under the machine id as agent id, with samples; an agent killed by a
 * signal is restarted (a new session of the same agent id); an over-size log is rotated;
 * `stop` ends runner and agent, the agent flushing (every record acked). The host agent
 * stands in for the board's (same command line; the boards' own runs are emulated in
 * board-test). */
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
#include "testproc.h"

#define MACHINE_ID "3f1c0ffee0d2b4a6c8e0f2a4b6c8d0e2"

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "deploy", false);
}

/* sh -c cmd with stdout+stderr into log; its exit status (-1 if it did not end in 120 s). */
static int sh(const char *log, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int sh(const char *log, const char *fmt, ...)
{
	char cmd[2048];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	char *const argv[] = {"/bin/sh", "-c", cmd, NULL};
	pid_t p = tp_spawn(argv, log);
	int st = 0;
	if (p < 0 || tp_wait(p, 120000, &st) < 0)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int64_t sessions(const struct tp_env *e)
{
	return tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id='" MACHINE_ID "'");
}

/* Poll (every 200 ms, at most ms) until f(e) >= want; the last value. */
static int64_t await(const struct tp_env *e, int64_t (*f)(const struct tp_env *), int64_t want, int ms)
{
	int64_t v = -1;
	for (int t = 0; t <= ms; t += 200) {
		v = f(e);
		if (v >= want)
			break;
		tp_sleep_ms(200);
	}
	return v;
}

static int64_t sampled_sessions(const struct tp_env *e)
{
	return tp_db_int(e->db, "SELECT COUNT(DISTINCT r.session_id) FROM records r JOIN sessions s ON s.id = "
				"r.session_id WHERE s.agent_id='" MACHINE_ID "' AND r.kind='samples'");
}

static pid_t read_pid(const char *path)
{
	char *s = tp_slurp(path);
	pid_t p = s ? (pid_t)atoi(s) : 0;
	free(s);
	return p;
}

static void test_board_deploy_service_records_restarts_rotates(void **state)
{
	struct tp_env *e = *state;
	if (geteuid() != 0) { /* tests run as root */
		fprintf(stderr, "skipped: the service samples the whole system (agent record -a): needs root\n");
		skip();
	}
	const char *src = getenv("PROF_SRC_DIR") ? getenv("PROF_SRC_DIR") : ".";
	char token[300], root[300], log[300], bin[256], lib[256], p[512], alog[512];
	tp_env_path(e, "token", token, sizeof(token));
	tp_env_path(e, "root", root, sizeof(root));
	tp_env_path(e, "deploy.log", log, sizeof(log));
	assert_int_equal(fl_write_token(token, 0), 0);
	const char *extra[] = {"--token-file", token, NULL};
	assert_int_equal(tp_env_start_collector(e, 0, extra), 0);

	/* the board's root: /etc/machine-id, as systemd or dbus write it */
	snprintf(p, sizeof(p), "%s/etc", root);
	assert_int_equal(sh(log, "mkdir -p %s && echo %s >%s/machine-id", p, MACHINE_ID, p), 0);
	tp_bin("agent", bin, sizeof(bin));
	tp_bin("lib", lib, sizeof(lib));
	assert_int_equal(sh(log, "AGENT=%s CL_LIB_DIR=%s %s/board/arndale-octa/deploy.sh root %s --collector %s "
				 "--token-file %s",
			    bin, lib, src, root, e->coll, token),
			 0);
	static const char *const files[] = {"usr/local/bin/prof-agent", "usr/local/lib/profcl/libprofcl_layer.so",
					    "usr/local/lib/profcl/libprofcl_preload.so",
					    "usr/local/lib/profcl/libprofcl_bridge.so",
					    "usr/local/lib/profcl/prof-clhelper",
					    "usr/local/lib/profcl/prof-agent-run", "etc/init.d/prof-agent",
					    "etc/rc2.d/S99prof-agent", "etc/systemd/system/prof-agent.service",
					    "etc/default/prof-agent", "etc/prof-agent/token"};
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", root, files[i]);
		struct stat st;
		if (stat(p, &st) != 0)
			fail_msg("deploy did not install %s", files[i]);
		if (strcmp(files[i], "etc/prof-agent/token") == 0)
			assert_int_equal(st.st_mode & 077, 0); /* the collector's secret: 0600 */
	}
	/* an over-size log (2 KiB cap, checked every second): rotated by the runner */
	snprintf(p, sizeof(p), "%s/etc/default/prof-agent", root);
	assert_int_equal(sh(log, "mkdir -p %s/var/log && head -c 4096 /dev/zero >%s/var/log/prof-agent.log && "
				 "printf 'LOG_MAX_KB=2\\nLOG_CHECK_S=1\\n' >>%s",
			    root, root, p),
			 0);

	/* the service, as the board's init starts it */
	assert_int_equal(sh(log, "PROF_ROOT=%s %s/etc/init.d/prof-agent start", root, root), 0);
	int64_t n = await(e, sampled_sessions, 1, 60000);
	snprintf(alog, sizeof(alog), "%s/var/log/prof-agent.log", root);
	if (n < 1) {
		tp_dump_file(alog);
		tp_dump_file(e->clog);
		fail_msg("no session with samples under agent id %s in 60 s", MACHINE_ID);
	}
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id='" MACHINE_ID
					  "' AND target='system-wide'"),
			 sessions(e));
	snprintf(p, sizeof(p), "%s/var/log/prof-agent.log.1", root);
	struct stat st;
	for (int t = 0; t < 50 && stat(p, &st) != 0; t++)
		tp_sleep_ms(200);
	assert_int_equal(stat(p, &st), 0);
	assert_true(st.st_size >= 4096);

	/* the agent dies: the runner starts it again, a new session of the same agent id */
	snprintf(p, sizeof(p), "%s/var/run/prof-agent.agent.pid", root);
	pid_t agent = read_pid(p);
	assert_true(agent > 0);
	assert_int_equal(kill(agent, SIGKILL), 0);
	n = await(e, sampled_sessions, 2, 60000);
	if (n < 2)
		tp_dump_file(alog);
	assert_int_equal(n, 2);
	assert_true(tp_file_count(alog, "agent exited with status 137: restarting") >= 1);
	pid_t agent2 = read_pid(p);
	assert_true(agent2 > 0 && agent2 != agent);

	snprintf(p, sizeof(p), "%s/var/run/prof-agent.pid", root);
	pid_t runner = read_pid(p);
	assert_true(runner > 0);
	assert_int_equal(sh(log, "PROF_ROOT=%s %s/etc/init.d/prof-agent stop", root, root), 0);
	assert_int_equal(kill(agent2, 0), -1);
	assert_int_equal(kill(runner, 0), -1);
	assert_true(tp_file_count(alog, "prof-agent-run: stopped") == 1);
	assert_true(tp_file_count(alog, " 0 spooled (unacked), 0 dropped") >= 1); /* the agent flushed on stop */
}

static int64_t serial_sessions(const struct tp_env *e)
{
	return tp_db_int(e->db, "SELECT COUNT(*) FROM sessions WHERE agent_id='R58M12ABCDE'");
}

/* A board without a machine id (Android): the runner takes the serial from `getprop ro.serialno`.
 * The getprop here is a double of Android's (system/core/toolbox/getprop.cpp, toybox getprop:
 * the property's value and a newline; "" for an unknown one). */
static void test_board_runner_android_serial_as_agent_id(void **state)
{
	struct tp_env *e = *state;
	if (geteuid() != 0) {
		fprintf(stderr, "skipped: the service samples the whole system (agent record -a): needs root\n");
		skip();
	}
	const char *src = getenv("PROF_SRC_DIR") ? getenv("PROF_SRC_DIR") : ".";
	char root[300], log[300], bin[256], lib[256], fake[300];
	tp_env_path(e, "root", root, sizeof(root));
	tp_env_path(e, "deploy.log", log, sizeof(log));
	tp_env_path(e, "fakebin", fake, sizeof(fake));
	assert_int_equal(tp_env_start_collector(e, 0, NULL), 0);
	tp_bin("agent", bin, sizeof(bin));
	tp_bin("lib", lib, sizeof(lib));
	assert_int_equal(sh(log, "AGENT=%s CL_LIB_DIR=%s %s/board/arndale-octa/deploy.sh root %s --collector %s", bin,
			    lib, src, root, e->coll),
			 0);
	assert_int_equal(sh(log, "mkdir -p %s && printf '#!/bin/sh\n[ \"$1\" = ro.serialno ] && echo R58M12ABCDE || echo\n' "
				 ">%s/getprop && chmod +x %s/getprop",
			    fake, fake, fake),
			 0);
	assert_int_equal(sh(log, "PATH=%s:$PATH PROF_ROOT=%s %s/etc/init.d/prof-agent start", fake, root, root), 0);
	int64_t n = await(e, serial_sessions, 1, 60000);
	char alog[512];
	snprintf(alog, sizeof(alog), "%s/var/log/prof-agent.log", root);
	if (n < 1)
		tp_dump_file(alog);
	assert_true(sh(log, "PROF_ROOT=%s %s/etc/init.d/prof-agent stop", root, root) == 0);
	assert_int_equal(n, 1);
	assert_true(tp_file_count(alog, "agent id 'R58M12ABCDE'") == 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_board_deploy_service_records_restarts_rotates, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_board_runner_android_serial_as_agent_id, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
