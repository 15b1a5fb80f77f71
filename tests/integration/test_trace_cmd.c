/* agent trace end to end: a real collector, `agent trace --window 2000 --warmup 20000 --every
 * 0.2 --max-duty 50 -- trace_loop 2 3`; the tracee's output and exit code are
 * unchanged, the windows are in the store (trace_windows), and `collector edag
 * --store DB --session N --json` gives plausible metrics (loads, W > 0). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"

struct env {
	struct tp_env t;
	char elog[300];
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "trace-cmd", true) < 0)
		return -1;
	struct env *e = *state;
	tp_env_path(&e->t, "edag.json", e->elog, sizeof(e->elog));
	return 0;
}

/* The number after "key": at or after from (-1 if absent). */
static double json_num(const char *from, const char *key)
{
	const char *p = from ? strstr(from, key) : NULL;
	return p ? atof(p + strlen(key)) : -1;
}

static unsigned summary_count(const char *log, const char *line, const char *what);

/* The stop per window is reported (issue 36): the summary's median and max, and for each
 * window replayed from a snapshot (the agent started the program) a debug line of where
 * its stop went, whose parts in the stop add up to it (to the 0.01 ms printed). */
static void check_stop_report(const char *log)
{
	const char *s = strstr(log, "target stopped per window: median ");
	assert_non_null(s);
	double med = atof(s + strlen("target stopped per window: median "));
	const char *mx = strstr(s, ", max ");
	assert_non_null(mx);
	double max = atof(mx + strlen(", max "));
	unsigned snaps = summary_count(s, "target stopped per window", " replayed from a snapshot");
	unsigned lines = 0;
	for (const char *p = strstr(log, "trace: window "); p; p = strstr(p + 1, "trace: window ")) {
		unsigned i;
		double stop, attach, regs, clone, restore;
		if (sscanf(p, "trace: window %u stop %lf ms: attach %lf, registers %lf, clone %lf, restore and detach %lf",
			   &i, &stop, &attach, &regs, &clone, &restore) != 6)
			continue;
		fprintf(stderr, "# window %u stopped %.2f ms: attach %.2f, registers %.2f, clone %.2f, restore %.2f\n", i,
			stop, attach, regs, clone, restore);
		assert_true(clone > 0 && stop <= max + 0.01);
		double off = attach + regs + clone + restore - stop;
		assert_true(off <= 0.03 && off >= -0.03);
		lines++;
	}
	fprintf(stderr, "# stop per window: median %.2f ms, max %.2f ms; %u from a snapshot, %u broken down\n", med, max,
		snaps, lines);
	assert_true(med > 0 && max >= med);
	assert_true(lines <= snaps && (snaps == 0 || lines >= 1));
}

static void test_trace_cmd_windows_reach_store_and_edag(void **state)
{
	struct env *e = *state;
	char agent[512], loop[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/trace_loop", loop, sizeof(loop));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", e->t.port);
	/* --warmup 20000, not the default 500000: on an overloaded machine (about 10 runnable
	 * threads per CPU) the replay's wall time per instruction grows with the load, the first
	 * window ran out of its stop time in the warm-up (nothing sent) and the learnt cost of a
	 * 502000-instruction window then exceeded what a 50 % cap over 2 s pays for: 0 windows.
	 * The agent kept its duty cap as designed; this test is about the store and the eDAG. */
	char *argv[] = {agent,	  "trace", "--collector", coll, "--window", "2000", "--warmup", "20000", "--every",
			"0.2",	  "--max-duty", "50", "-v", "--", loop, "2", "3", NULL};
	pid_t pid = tp_spawn(argv, e->t.alog);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char *log = tp_slurp(e->t.alog);
	assert_non_null(log);
	if (strstr(log, "not compiled in") ||
	    (strstr(log, "ptrace(SEIZE)") && tp_db_int(e->t.db, "SELECT COUNT(*) FROM trace_windows") <= 0)) {
		fprintf(stderr, "skipping: the agent cannot trace here\n");
		tp_dump_file(e->t.alog);
		free(log);
		skip();
	}
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 3) {
		tp_dump_file(e->t.alog);
		fail_msg("agent trace: status 0x%x, expected the tracee's exit code 3", status);
	}
	/* the tracee's own output, complete */
	assert_non_null(strstr(log, "array 0x"));
	assert_non_null(strstr(log, "trace_loop: "));
	assert_non_null(strstr(log, "signals 0"));
	unsigned taken = summary_count(log, "\n trace: ", " window(s)");
	check_stop_report(log);
	free(log);

	int64_t sid = tp_db_int(e->t.db, "SELECT MAX(session_id) FROM trace_windows");
	/* records of no instructions are windows the agent lost in their warm-up (counted by the collector) */
	int64_t windows =
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM trace_windows WHERE session_id=%lld AND n_insns > 0", (long long)sid);
	/* the agent's summary counts every window it sent, an empty one too (one window_index each) */
	int64_t sent = tp_db_int(e->t.db, "SELECT COUNT(DISTINCT window_index) FROM trace_windows WHERE session_id=%lld",
				 (long long)sid);
	int64_t insns = tp_db_int(e->t.db, "SELECT SUM(n_insns) FROM trace_windows WHERE session_id=%lld", (long long)sid);
	int64_t arch = tp_db_int(e->t.db, "SELECT MIN(arch) FROM trace_windows WHERE session_id=%lld", (long long)sid);
	fprintf(stderr, "# session %lld: %lld windows, %lld instructions, arch %lld\n", (long long)sid, (long long)windows,
		(long long)insns, (long long)arch);
	/* 2 s every 0.2 s: at most 11. How many the duty budget pays for depends on what a replay
	 * costs now (ASan on a loaded machine: the first window ran out of its stop time in the
	 * Unicorn's first translations, the next cost 274 ms: 1 window; 7 on a quieter machine),
	 * so what is checked is what the agent decided: the store holds the windows its summary
	 * says it took (at least one), no more than the period allows */
	if (sid <= 0 || windows < 1 || sent > 12 || sent != (int64_t)taken) {
		tp_dump_file(e->t.alog); /* the agent's summary says how its windows ended */
		fail_msg("%lld windows stored (%lld with instructions), the agent's summary says %u; expected 1..12 and "
			 "equal",
			 (long long)sent, (long long)windows, taken);
	}
	assert_true(insns >= windows && insns <= windows * 2000);

	char cbin[512], sidbuf[32];
	tp_bin("collector", cbin, sizeof(cbin));
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *eargv[] = {cbin, "edag", "--store", e->t.db, "--session", sidbuf, "--json", NULL};
	pid = tp_spawn(eargv, e->elog);
	assert_int_equal(tp_wait(pid, 30000, &status), 0);
	char *js = tp_slurp(e->elog);
	assert_non_null(js);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tp_dump_file(e->elog);
		fail_msg("collector edag failed (status 0x%x)", status);
	}
	const char *win0 = strstr(js, "\"windows\":[");
	const char *est = strstr(js, "\"estimate\":");
	double accesses = json_num(win0, "\"accesses\":");
	double v = json_num(win0, "\"vertices\":");
	double W = json_num(est, "\"W\":{\"value\":");
	double lambda = json_num(est, "\"lambda\":{\"value\":");
	fprintf(stderr, "# collector edag: window 0: %.0f vertices, %.0f accesses; estimate W %.0f, lambda %.1f\n", v,
		accesses, W, lambda);
	/* the summing loop is a handful of instructions with one load each */
	assert_true(v > 0 && accesses >= v / 10 && accesses <= v);
	assert_true(W > 0);
	assert_true(lambda > 0);
	free(js);
}

/* Run `agent trace ARGS -- PROG...` (argv from "trace" on, agent and collector filled in here)
 * for at most 30 s: 0 with its wait status and its log (malloc'd), or skips the test when the
 * agent cannot trace here. */
static int trace_run(struct env *e, const char *const *args, int *status, char **log)
{
	char agent[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", e->t.port);
	char *argv[32] = {agent, "trace", "--collector", coll};
	size_t n = 4;
	for (size_t i = 0; args[i] && n + 1 < sizeof(argv) / sizeof(argv[0]); i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	unlink(e->t.alog);
	pid_t pid = tp_spawn(argv, e->t.alog);
	int rc = tp_wait(pid, 30000, status);
	if (rc != 0)
		tp_stop(pid, 2000);
	*log = tp_slurp(e->t.alog);
	assert_non_null(*log);
	if (rc == 0 && (strstr(*log, "not compiled in") || strstr(*log, "ptrace(SEIZE) thread") == *log)) {
		free(*log);
		skip();
	}
	return rc;
}

/* The command exits while a window single-steps it: the tracer's waitpid
 * collects the exit status, and the agent must still end with the command's
 * exit code (it used to wait forever for a SIGCHLD status that was gone,
 * retrying ptrace(SEIZE) every period, and ignore one SIGTERM). The first
 * window (1.5 s) is the short probe that times a single step (issue 30, 8);
 * the second opens at 3 s; trace_loop stops looping at 3.2 s, well inside
 * that window's 60000 steps. */
static void test_trace_cmd_exit_inside_window(void **state)
{
	struct env *e = *state;
	char loop[512];
	tp_bin("workloads/trace_loop", loop, sizeof(loop));
	const char *args[] = {"-v", "--capture", "step", "--window", "60000", "--every", "1.5", "--max-duty", "90",
			      "--", loop, "3.2", "7", NULL};
	int status;
	char *log;
	int rc = trace_run(e, args, &status, &log);
	if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 7) {
		tp_dump_file(e->t.alog);
		fail_msg("agent trace: %s (status 0x%x), expected the command's exit code 7",
			 rc != 0 ? "did not end within 30 s" : "ended", status);
	}
	assert_non_null(strstr(log, "trace_loop: "));
	fprintf(stderr, "# the exit %s inside a window\n", strstr(log, "thread exited") ? "happened" : "did not happen");
	free(log);
}

/* The count after which "what" comes in the agent's summary line that starts with line
 * ("windows ended: 3 complete, 2 thread blocked": 2 for " thread blocked"), 0 if absent. */
static unsigned summary_count(const char *log, const char *line, const char *what)
{
	const char *l = strstr(log, line);
	if (!l)
		return 0;
	const char *eol = strchr(l + 1, '\n');
	const char *p = strstr(l, what);
	if (!p || (eol && p > eol))
		return 0;
	while (p > l && p[-1] >= '0' && p[-1] <= '9')
		p--;
	return (unsigned)strtoul(p, NULL, 10);
}

/* Single-stepped windows on a thread blocked in a system call (sleep_loop naps 100 ms at
 * a time, longer than a window's stop time; a window that steps into nanosleep and reaches
 * its time limit with the step outstanding ends "thread blocked"). The step's SIGTRAP, queued on the way out of the
 * interrupted call, used to be left pending at detach and killed the program with a core
 * dump (rc 133; 5 of 10 `agent profile` runs of cl_matmul). The program must end as it
 * would alone, every run. How many windows a 1.5 s run gets depends on what a single step
 * costs on the machine now (with 20 ms naps, 66 us a step under ASan on a loaded machine:
 * 1 to 7 windows a run, 0 to 3 of them blocked; once 4 windows on an idle one against the
 * ">= 5" asked here before), so the test counts what the agent decided, not wall time: runs
 * repeat (at most 12) until 5 windows in all ended on the blocked thread (100 ms naps: about
 * 25 in one run here), and each run's stored windows are the ones its summary says it took. */
static void test_trace_cmd_blocked_thread_survives(void **state)
{
	struct env *e = *state;
	char prog[512];
	tp_bin("workloads/sleep_loop", prog, sizeof(prog));
	/* single steps: a replay window never steps (a thread in a system call ends it at once) */
	const char *args[] = {"--capture", "step", "--window", "2000", "--every", "0.05", "--max-duty", "50",
			      "--", prog, "1.5", "100", NULL};
	unsigned blocked = 0, runs = 0, windows = 0;
	for (; runs < 12 && blocked < 5; runs++) {
		int status;
		char *log;
		int rc = trace_run(e, args, &status, &log);
		bool said = strstr(log, "sleep_loop: all naps done") != NULL;
		unsigned taken = summary_count(log, "\n trace: ", " window(s)");
		unsigned b = summary_count(log, "windows ended:", " thread blocked");
		free(log);
		if (rc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0 || !said) {
			tp_dump_file(e->t.alog);
			fail_msg("agent trace -- sleep_loop (run %u): %s (status 0x%x), expected exit 0 and its output",
				 runs + 1, rc != 0 ? "did not end within 30 s" : "ended", status);
		}
		int64_t sid = tp_db_int(e->t.db, "SELECT MAX(session_id) FROM trace_windows");
		int64_t stored = tp_db_int(
		    e->t.db, "SELECT COUNT(DISTINCT window_index) FROM trace_windows WHERE session_id=%lld", (long long)sid);
		fprintf(stderr, "# sleep_loop run %u: %u windows taken (%lld stored), %u ended on the blocked thread\n",
			runs + 1, taken, (long long)stored, b);
		if (taken > 0 && stored != (int64_t)taken) {
			tp_dump_file(e->t.alog);
			fail_msg("run %u: the agent took %u windows, the store has %lld", runs + 1, taken,
				 (long long)stored);
		}
		blocked += b;
		windows += taken;
	}
	fprintf(stderr, "# sleep_loop: %u runs, %u windows, %u ended on the blocked thread, every run exit 0\n", runs,
		windows, blocked);
	if (blocked < 5)
		fail_msg("%u windows in %u runs ended on the blocked thread, fewer than the 5 this test needs", blocked,
			 runs);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trace_cmd_windows_reach_store_and_edag, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_cmd_exit_inside_window, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_cmd_blocked_thread_survives, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("trace_cmd", tests, NULL, NULL);
}
