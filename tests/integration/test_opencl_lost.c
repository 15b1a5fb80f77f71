/* Commands of processes that end without the capture library's exit
 * (issue #41): pyopencl (Debian python3-pyopencl) programs from
 * tests/workloads/cl_lost.py under `agent run` in layer, preload and auto
 * mode, on PoCL:
 *  - a multiprocessing Pool whose workers are SIGTERM'd when `with Pool()` ends,
 *  - a process that calls os.abort() right after finish(),
 *  - a busy program stopped by `agent run --duration`,
 *  - a finish on one queue while another holds commands, and an abort after the finish of an
 *    out-of-order queue of 1,500.
 * Each program says how many commands it enqueued (its own count is the
 * oracle); every one must be either timed (in the agent's summary and in the
 * collector's store, the same number) or named by the agent as enqueued but
 * never timed, or dropped: timed + untimed + dropped = enqueued, exactly;
 * and what the program waited for (finish) before it died is all timed.
 * Skipped with the reason when OpenCL or pyopencl does not work here. */
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"
#include "tp_cl.h"

#define RUN_TIMEOUT_MS 180000

static const char *no_opencl; /* why the suite is skipped, NULL if it runs */

struct env {
	struct tp_env t;
};

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct env), "cllost", !no_opencl);
}

static int group_setup(void **state)
{
	(void)state;
	char edge[512];
	tp_bin("cl-workloads/cl_edge", edge, sizeof(edge));
	if (access(edge, X_OK) != 0) {
		no_opencl = "cl-workloads not built (CONFIG_AGENT_OPENCL off?)";
		return 0;
	}
	char *argv[] = {edge, "noprof", NULL};
	pid_t p = tp_spawn(argv, "/dev/null");
	int status = -1;
	if (p < 0 || tp_wait(p, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		no_opencl = "no working OpenCL device (cl_edge fails without the profiler): install pocl-opencl-icd";
		return 0;
	}
	char *py[] = {"/usr/bin/python3", "-c", "import pyopencl, numpy", NULL};
	p = access(py[0], X_OK) == 0 ? tp_spawn(py, "/dev/null") : -1;
	if (p < 0 || tp_wait(p, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		no_opencl = "pyopencl does not import here (scripts/deps.sh installs python3-pyopencl)";
	return 0;
}

struct outcome {
	int status; /* the agent's wait status */
	unsigned long long commands, processes, dropped, untimed, stored;
	char log[400], out[400];
	const char *db;
	long long sid;
};

/* agent run [--duration S] --mode MODE -- python3 cl_lost.py ARGS (the program's output in o->out). */
static void run_lost(struct env *e, const char *mode, const char *id, const char *duration, const char *const *args,
		     struct outcome *o)
{
	static char agent[512], src[4096], script[4600], prog[4200];
	memset(o, 0, sizeof(*o));
	tp_bin("agent", agent, sizeof(agent));
	if (!realpath(getenv("PROF_SRC_DIR") ? getenv("PROF_SRC_DIR") : ".", src))
		snprintf(src, sizeof(src), ".");
	snprintf(prog, sizeof(prog), "%s/tests/workloads/cl_lost.py", src);
	snprintf(o->log, sizeof(o->log), "%s/agent-%s.log", e->t.dir, id);
	snprintf(o->out, sizeof(o->out), "%s/prog-%s.out", e->t.dir, id);
	snprintf(script, sizeof(script), "exec \"$@\" >'%s' 2>&1", o->out);
	char *argv[40];
	size_t n = 0;
	/* a loaded machine's collector may take a while to store a busy run's commands */
	const char *pre[] = {agent,	 "run", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", id,
			     "--mode", mode,  "--flush-timeout", "60"};
	for (size_t i = 0; i < sizeof(pre) / sizeof(pre[0]); i++)
		argv[n++] = (char *)pre[i];
	if (duration) {
		argv[n++] = "--duration";
		argv[n++] = (char *)duration;
	}
	const char *cmd[] = {"--", "/bin/sh", "-c", script, "sh", "/usr/bin/python3", prog};
	for (size_t i = 0; i < sizeof(cmd) / sizeof(cmd[0]); i++)
		argv[n++] = (char *)cmd[i];
	for (size_t i = 0; args[i] && n < 38; i++)
		argv[n++] = (char *)args[i];
	argv[n] = NULL;
	pid_t a = tp_spawn(argv, o->log);
	assert_true(a > 0);
	int rc = tp_wait(a, RUN_TIMEOUT_MS, &o->status);
	if (rc < 0) {
		tp_stop(a, 3000);
		tp_dump_file(o->log);
	}
	assert_int_equal(rc, 0);
	char *log = tp_slurp(o->log);
	assert_non_null(log);
	const char *s = log;
	int got = 0;
	for (; (s = strstr(s, " opencl: ")); s++) { /* the summary line, not the log's "opencl: pid ..." */
		got = sscanf(s, " opencl: %llu commands from %llu process(es), %*u kernel(s), %llu dropped by the layer",
			     &o->commands, &o->processes, &o->dropped);
		if (got == 3)
			break;
	}
	const char *u = s ? strstr(s, " dropped by the layer, ") : NULL;
	if (u)
		sscanf(u, " dropped by the layer, %llu enqueued but never timed", &o->untimed);
	if (got != 3)
		fprintf(stderr, "no summary line in the agent's output:\n%s\n", log);
	free(log);
	assert_int_equal(got, 3);
	int64_t sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", id);
	assert_true(sid > 0);
	o->db = e->t.db;
	o->sid = (long long)sid;
	o->stored = (unsigned long long)tp_cl_int(e->t.db, "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld",
						  (long long)sid);
	fprintf(stderr, "%s: %llu timed (%llu stored) from %llu process(es), %llu dropped, %llu never timed\n", id,
		o->commands, o->stored, o->processes, o->dropped, o->untimed);
}

/* The program's "enqueued N". */
static unsigned long long enqueued(const struct outcome *o)
{
	char *out = tp_slurp(o->out);
	assert_non_null(out);
	unsigned long long n = 0;
	const char *p = strstr(out, "enqueued ");
	if (!p || sscanf(p, "enqueued %llu", &n) != 1)
		fprintf(stderr, "the program did not say what it enqueued:\n%s\n", out);
	free(out);
	assert_true(n > 0);
	return n;
}

/* Every command is timed and stored, or named as lost; the lost ones are explained in the log. */
static void check_accounted(const struct outcome *o, unsigned long long want)
{
	if (o->commands + o->dropped + o->untimed != want || o->stored != o->commands)
		tp_dump_file(o->log);
	assert_int_equal(o->commands + o->dropped + o->untimed, want);
	assert_int_equal(o->stored, o->commands);
	if (o->untimed) {
		assert_true(tp_file_count(o->log, "were enqueued but never seen complete") >= 1);
		/* and the session says so: collector report --opencl */
		assert_int_equal(tp_db_int(o->db, "SELECT COUNT(*) FROM target_ends WHERE session_id=%lld AND opencl_note"
						  " LIKE '%%%llu command(s) were enqueued but never%%'",
					   (long long)o->sid, o->untimed),
				 1);
	}
}

static const char *const modes[] = {"layer", "preload", "auto"};

#define SKIP_WITHOUT_OPENCL()                                                                              \
	do {                                                                                               \
		if (no_opencl) {                                                                           \
			fprintf(stderr, "skipped: %s\n", no_opencl);                                       \
			skip();                                                                            \
		}                                                                                          \
	} while (0)

/* 8 tasks of 20 kernels and a read on 2 pool workers; the workers are SIGTERM'd at the end. Each
 * task ends with finish(), so every command is timed before the worker can be killed. */
static void test_opencl_lost_pool_workers_terminated(void **state)
{
	SKIP_WITHOUT_OPENCL();
	struct env *e = *state;
	static const char *const args[] = {"pool", "8", "20", NULL};
	for (size_t m = 0; m < 3; m++) {
		char id[64];
		snprintf(id, sizeof(id), "pool-%s", modes[m]);
		struct outcome o;
		run_lost(e, modes[m], id, NULL, args, &o);
		assert_true(WIFEXITED(o.status));
		assert_int_equal(WEXITSTATUS(o.status), 0); /* the program's own status */
		assert_int_equal(enqueued(&o), 8 * 21);
		check_accounted(&o, 8 * 21);
		assert_true(o.processes >= 2); /* the workers (the parent makes no OpenCL call) */
		assert_int_equal(o.commands, 8 * 21);
		assert_int_equal(o.untimed, 0);
	}
}

/* 50 kernels and a read, finish(), then abort(): no exit handler runs. finish() returns only once
 * its commands are in the ring (the waiting thread writes them, track.c pcl_track_kick): all 51
 * are timed in every mode, none merely counted as lost. */
static void test_opencl_lost_abort_after_finish(void **state)
{
	SKIP_WITHOUT_OPENCL();
	struct env *e = *state;
	static const char *const args[] = {"abort", "50", NULL};
	for (size_t m = 0; m < 3; m++) {
		char id[64];
		snprintf(id, sizeof(id), "abort-%s", modes[m]);
		struct outcome o;
		run_lost(e, modes[m], id, NULL, args, &o);
		assert_true(WIFEXITED(o.status));
		assert_int_equal(WEXITSTATUS(o.status), 128 + SIGABRT); /* the program's own end */
		assert_int_equal(enqueued(&o), 51);
		check_accounted(&o, 51);
		assert_int_equal(o.commands, 51);
		assert_int_equal(o.untimed, 0);
		assert_int_equal(o.dropped, 0);
	}
}

/* A program that never stops, stopped by --duration (SIGTERM): the count it wrote after its last
 * finished round is a lower bound of what it enqueued, one round (11 commands) more an upper one. */
static void test_opencl_lost_duration_stops_busy_program(void **state)
{
	SKIP_WITHOUT_OPENCL();
	struct env *e = *state;
	for (size_t m = 0; m < 3; m++) {
		char id[64], count[400];
		snprintf(id, sizeof(id), "busy-%s", modes[m]);
		snprintf(count, sizeof(count), "%s/busy-%s.count", e->t.dir, modes[m]);
		const char *const args[] = {"busy", count, NULL};
		struct outcome o;
		run_lost(e, modes[m], id, "4", args, &o);
		char *c = tp_slurp(count);
		assert_non_null(c);
		unsigned long long done = strtoull(c, NULL, 10);
		free(c);
		unsigned long long total = o.commands + o.dropped + o.untimed;
		fprintf(stderr, "%s: the program finished %llu commands; %llu accounted for\n", id, done, total);
		if (total < done || total > done + 11 || o.stored != o.commands)
			tp_dump_file(o.log);
		assert_true(done > 0);
		assert_true(total >= done);
		assert_true(total <= done + 11);
		assert_int_equal(o.stored, o.commands);
		if (o.untimed)
			assert_true(tp_file_count(o.log, "were enqueued but never seen complete") >= 1);
	}
}

/* A finish waits for its own queue: the waiting thread's drain (track.c pcl_track_kick) looks
 * at that queue's commands only, and after a finish at all of them. 1,500 kernels wait on an
 * out-of-order queue for a user event while 200 kernel+finish rounds run on an in-order one:
 * the drains of the 200 finishes ask the runtime about their own command each, not about the
 * 1,024 held ones (PROF_CL_DEBUG's exit line counts the status questions); then the event is
 * set and the out-of-order queue finished, and an abort right after loses none of its 1,500
 * (a drain once looked at 1,024 commands of an out-of-order queue at most: 476 of them were
 * lost). Layer mode with the debug line, preload mode with the abort. */
static void test_opencl_lost_finish_drains_its_own_queue(void **state)
{
	SKIP_WITHOUT_OPENCL();
	struct env *e = *state;
	static const char *const quiet[] = {"drain", "200", "1500", NULL};
	struct outcome o;
	setenv("PROF_CL_DEBUG", "1", 1);
	run_lost(e, "layer", "drain-layer", NULL, quiet, &o);
	unsetenv("PROF_CL_DEBUG");
	assert_true(WIFEXITED(o.status));
	assert_int_equal(WEXITSTATUS(o.status), 0);
	assert_int_equal(enqueued(&o), 1700);
	check_accounted(&o, 1700);
	assert_int_equal(o.commands, 1700);
	char *out = tp_slurp(o.out);
	assert_non_null(out);
	unsigned long long drains = 0, questions = 0;
	const char *r = strstr(out, " drains by waiting threads, ");
	while (r && r > out && r[-1] >= '0' && r[-1] <= '9')
		r--;
	int got = r ? sscanf(r, "%llu drains by waiting threads, %llu status questions in them", &drains, &questions)
		    : 0;
	fprintf(stderr, "drain-layer: %llu drains, %llu status questions in them\n", drains, questions);
	if (got != 2 || questions > 4 * 200 + 2 * 1500)
		fprintf(stderr, "%s\n", out);
	free(out);
	assert_int_equal(got, 2);
	assert_true(drains >= 200); /* a finish each, and the last */
	/* 1 or 2 a round, 1,500 at the last finish; looking at the held ones was >= 200 x 1,024 */
	assert_true(questions <= 4 * 200 + 2 * 1500);
	/* the other entry (the drain is the same code in both; one run each keeps the suite short) */
	static const char *const die[] = {"drain", "20", "1500", "abort", NULL};
	run_lost(e, "preload", "drain-abort-preload", NULL, die, &o);
	assert_true(WIFEXITED(o.status));
	assert_int_equal(WEXITSTATUS(o.status), 128 + SIGABRT);
	assert_int_equal(enqueued(&o), 1520);
	check_accounted(&o, 1520);
	assert_int_equal(o.commands, 1520);
	assert_int_equal(o.untimed, 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opencl_lost_pool_workers_terminated, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_lost_abort_after_finish, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_lost_duration_stops_busy_program, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_opencl_lost_finish_drains_its_own_queue, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
