/* Every enqueue kind is timed and named (issue #41): cl-workloads/cl_kinds
 * enqueues each kind once (images, rects, fills, maps, a native kernel,
 * markers, a barrier, migrations, SVM) and prints, for each the runtime
 * accepted, its CL_COMMAND_* type and the bytes it moves; under `agent run`
 * in layer, preload and auto mode the session must hold exactly those
 * commands, in that order, with those bytes and device times, and
 * `collector report --opencl` must name each kind. Skipped with the reason
 * when no OpenCL device works here. */
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

#include "testproc.h"
#include "tp_cl.h"

static const char *no_opencl;

struct env {
	struct tp_env t;
};

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct env), "clkinds", !no_opencl);
}

static int group_setup(void **state)
{
	(void)state;
	char prog[512];
	tp_bin("cl-workloads/cl_kinds", prog, sizeof(prog));
	if (access(prog, X_OK) != 0) {
		no_opencl = "cl-workloads not built (CONFIG_AGENT_OPENCL off?)";
		return 0;
	}
	char *argv[] = {prog, NULL};
	pid_t p = tp_spawn(argv, "/dev/null");
	int status = -1;
	if (p < 0 || tp_wait(p, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		no_opencl = "no working OpenCL device (cl_kinds fails without the profiler): install pocl-opencl-icd";
	return 0;
}

static const char *kind_name(unsigned type)
{
	switch (type) {
	case 0x11F2: return "native kernel";
	case 0x11F6: return "read image";
	case 0x11F7: return "write image";
	case 0x11F8: return "copy image";
	case 0x11F9: return "copy image to buffer";
	case 0x11FA: return "copy buffer to image";
	case 0x11FC: return "map image";
	case 0x11FD: return "unmap";
	case 0x11FE: return "marker";
	case 0x1201: return "read buffer rect";
	case 0x1202: return "write buffer rect";
	case 0x1203: return "copy buffer rect";
	case 0x1205: return "barrier";
	case 0x1206: return "migrate";
	case 0x1208: return "fill image";
	case 0x120A: return "svm memcpy";
	case 0x120B: return "svm fill";
	case 0x120C: return "svm map";
	case 0x120D: return "svm unmap";
	case 0x120E: return "svm migrate";
	default: return NULL;
	}
}

static void test_opencl_kinds_every_enqueue_timed_and_named(void **state)
{
	if (no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_opencl);
		skip();
	}
	struct env *e = *state;
	static const char *const modes[] = {"layer", "preload", "auto"};
	static char agent[512], prog[512], coll[512], script[700], out[400], rep[400], cmd[2048];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("cl-workloads/cl_kinds", prog, sizeof(prog));
	tp_bin("collector", coll, sizeof(coll));
	for (size_t m = 0; m < 3; m++) {
		snprintf(out, sizeof(out), "%s/%s.out", e->t.dir, modes[m]);
		snprintf(script, sizeof(script), "exec \"$@\" >'%s'", out);
		char *argv[] = {agent, "run", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id",
				(char *)modes[m], "--mode", (char *)modes[m], "--", "/bin/sh", "-c", script, "sh", prog, NULL};
		pid_t p = tp_spawn(argv, e->t.alog);
		assert_true(p > 0);
		int status = -1;
		assert_int_equal(tp_wait(p, 120000, &status), 0);
		assert_true(WIFEXITED(status));
		assert_int_equal(WEXITSTATUS(status), 0); /* cl_kinds: ok */
		int64_t sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", modes[m]);
		assert_true(sid > 0);
		snprintf(rep, sizeof(rep), "%s/%s.report", e->t.dir, modes[m]);
		snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --opencl > %s 2>&1", coll, e->t.db,
			 (long long)sid, rep);
		assert_int_equal(system(cmd), 0);
		char *report = tp_slurp(rep), *text = tp_slurp(out);
		assert_non_null(report);
		assert_non_null(text);
		/* the program's list, in order: the n-th command of the session has its type and bytes */
		long n = 0;
		for (const char *l = strstr(text, "cmd 0x"); l; l = strstr(l + 1, "\ncmd 0x")) {
			unsigned type = 0;
			unsigned long long bytes = 0;
			assert_int_equal(sscanf(l + (*l == '\n'), "cmd 0x%x %llu", &type, &bytes), 2);
			int64_t got = tp_cl_int(e->t.db,
						"SELECT COUNT(*) FROM (SELECT type, bytes, start_ns, end_ns FROM cl_commands"
						" WHERE session_id=%lld ORDER BY cmd_id LIMIT 1 OFFSET %ld) WHERE type=%u AND"
						" bytes=%llu AND end_ns >= start_ns AND start_ns > 0",
						(long long)sid, n, type, bytes);
			if (got != 1)
				fprintf(stderr, "%s: command %ld is not 0x%x with %llu bytes and device times\n", modes[m], n,
					type, bytes);
			assert_int_equal(got, 1);
			const char *name = kind_name(type);
			assert_non_null(name);
			if (!strstr(report, name))
				fprintf(stderr, "%s: the report does not name %s:\n%s", modes[m], name, report);
			assert_non_null(strstr(report, name));
			n++;
		}
		fprintf(stderr, "%s: %ld commands, each timed and named\n", modes[m], n);
		assert_true(n >= 16); /* 21 on PoCL (native kernels and SVM where the device has them) */
		assert_int_equal(tp_cl_int(e->t.db, "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld", (long long)sid),
				 n);
		free(report);
		free(text);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_opencl_kinds_every_enqueue_timed_and_named, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
