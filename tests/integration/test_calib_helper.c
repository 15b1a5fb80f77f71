/* agent calibrate through prof-clhelper (issue #35): the OpenCL benchmarks run in the helper's
 * process (agent/calib/calib_helper.c, agent/cl_layer/helper/main.c), as they do for a static
 * musl board agent, which cannot dlopen; here a host agent is handed the helper with
 * PROF_CLHELPER and measures PoCL through it. The results reach the collector as records, the
 * agent's JSON model holds them, and GPGPU-sim's own init code (tests/lib/gsim.h) loads the
 * config the collector writes from that model. A reduced set (device, compute_units,
 * granularity, one repetition: ~4 s) keeps it short; test_calibrate covers the full set in-process. */
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

#include "calib/gpgpusim_limits.h"
#include "gsim.h"
#include "testproc.h"

#define BENCHES "device,compute_units,granularity"

struct env {
	struct tp_env t;
	char helper[512], ajson[300];
	int status;
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_env_setup(&e->t, "clhelper", true) < 0) {
		free(e);
		return -1;
	}
	tp_bin("lib/prof-clhelper", e->helper, sizeof(e->helper));
	tp_env_path(&e->t, "agent-model.json", e->ajson, sizeof(e->ajson));
	char agent[512];
	tp_bin("agent", agent, sizeof(agent));
	setenv("PROF_CLHELPER", e->helper, 1);
	char *argv[] = {agent, "calibrate", "--collector", e->t.coll, "--spool", e->t.spool, "--quick", "--reps", "1",
			"--only", BENCHES, "-o", e->ajson, NULL};
	e->status = tp_run(argv, e->t.alog, 120000);
	unsetenv("PROF_CLHELPER");
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	tp_env_teardown(&e->t);
	free(e);
	return 0;
}

static void test_calib_helper_measures_the_device_and_sends_records(void **state)
{
	struct env *e = *state;
	if (e->status != 0)
		tp_dump_file(e->t.alog);
	assert_int_equal(e->status, 0);
	/* the three OpenCL benchmarks ran in the helper (its progress lines), none in the agent */
	assert_int_equal(tp_file_count(e->t.alog, "3 OpenCL benchmark(s) ran in prof-clhelper"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "[3/3] granularity"), 1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE kind = 'calibration'"), 3);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_runs"), 3);
	const char *must[] = {"clock_mhz", "max_work_group_size", "compute_units", "granularity"};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_params WHERE name = '%s'", must[i]) != 1)
			fail_msg("parameter %s not stored once", must[i]);
	/* the device's name travelled with the helper's records; the curves too */
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_runs WHERE benchmark = 'compute_units' AND "
				       "device <> '' AND device <> 'cpu'") == 1);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_curves") >= 2);
	char *j = tp_slurp(e->ajson);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"compute_units\": {\"value\": "));
	assert_null(strstr(j, "\"device\": \"cpu\""));
	free(j);
}

/* A helper that is not there: the OpenCL benchmarks are skipped with the reason, the agent
 * does not try to load OpenCL itself, and with nothing measured it fails. */
static void test_calib_helper_missing_names_the_reason(void **state)
{
	struct env *e = *state;
	char agent[512], log[300], bad[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_env_path(&e->t, "missing.log", log, sizeof(log));
	tp_env_path(&e->t, "no-such-helper", bad, sizeof(bad));
	setenv("PROF_CLHELPER", bad, 1);
	char *argv[] = {agent, "calibrate", "--collector", e->t.coll, "--spool", e->t.spool, "--quick", "--reps", "1",
			"--only", "device", NULL};
	int rc = tp_run(argv, log, 60000);
	unsetenv("PROF_CLHELPER");
	assert_int_not_equal(rc, 0);
	assert_true(tp_file_count(log, "OpenCL benchmarks skipped: libOpenCL.so.1 not loadable") >= 1);
	assert_true(tp_file_count(log, "No such file or directory") >= 1);
}

static void test_calib_helper_model_gives_a_gpgpusim_config(void **state)
{
	struct env *e = *state;
	char why[1600];
	for (int ver = 3; ver <= 4; ver++)
		if (gsim_tool(ver, why, sizeof(why)) < 0) {
			fprintf(stderr, "SKIP: %s\n", why);
			skip();
		}
	assert_int_equal(e->status, 0);
	char coll[512], dir[300], log[300];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(&e->t, "ccal.log", log, sizeof(log));
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(e->ajson, '/') - e->ajson), e->ajson);
	for (int ver = 3; ver <= 4; ver++) {
		char out[300], v[4];
		snprintf(v, sizeof(v), "%d", ver);
		tp_env_path(&e->t, ver == 3 ? "gsim3.config" : "gsim4.config", out, sizeof(out));
		char *argv[] = {coll, "calibrate", "--from-model", e->ajson, "--emit", out, "--gpgpusim-version", v,
				"--clamp", NULL};
		int rc = tp_run(argv, log, 30000);
		if (rc != 0)
			tp_dump_file(log);
		assert_int_equal(rc, 0);
		char *c = tp_slurp(out);
		assert_non_null(c);
		assert_non_null(strstr(c, "\n-gpgpu_n_clusters "));
		free(c);
		static char text[1 << 16];
		int bad = gsim_run(ver, dir, strrchr(out, '/') + 1, text, sizeof(text), why, sizeof(why));
		fprintf(stderr, "  calibration through prof-clhelper, GPGPU-sim %s: %s\n", gs_version_name(ver), why);
		if (bad != 0)
			fprintf(stderr, "%s", text);
		assert_int_equal(bad, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_helper_measures_the_device_and_sends_records),
		cmocka_unit_test(test_calib_helper_missing_names_the_reason),
		cmocka_unit_test(test_calib_helper_model_gives_a_gpgpusim_config),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
