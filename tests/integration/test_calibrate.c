/* Calibration end to end on loopback: a real collector, `agent calibrate
 * --quick -o` on the OpenCL device here (PoCL) and the host CPU, then
 * `collector calibrate` from the store and offline from the agent's JSON;
 * GPGPU-sim's own init code (../shared/tools/gpgpusim-init, tests/lib/gsim.h)
 * loads the configs written from that fresh calibration.
 * The pipeline runs once (group setup); the tests check what it left. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib/gpgpusim_limits.h"
#include "gsim.h"
#include "testproc.h"

#define QUICK_LIMIT_S 60.0

struct env {
	struct tp_env t;
	char ajson[300], model[300], cfg[300], cfg2[300], ccal[300];
	int agent_status;
	double agent_s;
	double load1; /* load average when the agent started */
	int64_t session;
};

static int teardown(void **state)
{
	struct env *e = *state;
	tp_env_teardown(&e->t);
	free(e);
	return 0;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_env_setup(&e->t, "calib", true) < 0) {
		free(e);
		return -1;
	}
#define F(field, name) tp_env_path(&e->t, name, e->field, sizeof(e->field))
	F(ajson, "agent-model.json");
	F(model, "machine.json");
	F(cfg, "gpgpusim.config");
	F(cfg2, "offline.config");
	F(ccal, "calibrate.log");
#undef F
	char agent[512], coll[64];
	tp_bin("agent", agent, sizeof(agent));
	snprintf(coll, sizeof(coll), "127.0.0.1:%d", e->t.port);
	char *argv[] = {agent, "calibrate", "--collector", coll, "--spool", e->t.spool, "--quick", "-o", e->ajson, NULL};
	FILE *la = fopen("/proc/loadavg", "r");
	if (la) {
		if (fscanf(la, "%lf", &e->load1) != 1)
			e->load1 = 0;
		fclose(la);
	}
	struct timeval t0, t1;
	gettimeofday(&t0, NULL);
	e->agent_status = tp_run(argv, e->t.alog, 300000);
	gettimeofday(&t1, NULL);
	e->agent_s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_usec - t0.tv_usec) * 1e-6;
	fprintf(stderr, "agent calibrate --quick: exit %d in %.1f s (load average %.2f on %ld CPUs)\n", e->agent_status,
		e->agent_s, e->load1, sysconf(_SC_NPROCESSORS_ONLN));
	e->session = tp_db_int(e->t.db, "SELECT MAX(session_id) FROM calib_runs");
	*state = e;
	return 0;
}

static void test_calibrate_agent_streams_records(void **state)
{
	struct env *e = *state;
	if (e->agent_status != 0)
		tp_dump_file(e->t.alog);
	assert_int_equal(e->agent_status, 0);
	assert_true(e->session > 0);
	/* one record per benchmark: device, arith, compute_units, registers, granularity, cache, peak, cpu_peak, mem_slots */
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE kind = 'calibration'"), 9);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_runs"), 9);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_params WHERE session_id = %lld", (long long)e->session) >= 40);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_curves") >= 8);
	const char *must[] = {"compute_units", "l1_line_bytes", "l1_size_bytes", "peak_gflops", "peak_gbps",
			      "cpu_peak_gflops", "cpu_peak_gbps", "mem_latency_ns", "mem_issue_slots", "granularity",
			      "regs_per_work_item", "lat_float_mad_cycles"};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (tp_db_int(e->t.db, "SELECT COUNT(*) FROM calib_params WHERE name = '%s'", must[i]) != 1)
			fail_msg("parameter %s not stored once", must[i]);
	/* progress was shown per benchmark */
	assert_int_equal(tp_file_count(e->t.alog, "[9/9] mem_slots"), 1);
	assert_true(tp_file_count(e->t.alog, "] cache: ") == 1);
	/* the agent's own JSON */
	char *j = tp_slurp(e->ajson);
	assert_non_null(j);
	assert_non_null(strstr(j, "\"params\""));
	assert_non_null(strstr(j, "\"cache_levels\""));
	assert_non_null(strstr(j, "\"roofline\""));
	free(j);
}

static void test_calibrate_quick_run_within_a_minute(void **state)
{
	struct env *e = *state;
	assert_int_equal(e->agent_status, 0);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	if (e->agent_s > QUICK_LIMIT_S && e->load1 > (double)ncpu) {
		fprintf(stderr, "SKIP: took %.1f s > %.0f s, but the host was overloaded (load %.2f on %ld CPUs)\n",
			e->agent_s, QUICK_LIMIT_S, e->load1, ncpu);
		skip();
	}
	if (e->agent_s > QUICK_LIMIT_S)
		fail_msg("agent calibrate --quick took %.1f s (limit %.0f s)", e->agent_s, QUICK_LIMIT_S);
}

static void test_calibrate_collector_writes_model_and_config(void **state)
{
	struct env *e = *state;
	assert_true(e->session > 0);
	char coll[512], sid[32];
	tp_bin("collector", coll, sizeof(coll));
	snprintf(sid, sizeof(sid), "%lld", (long long)e->session);
	char *argv[] = {coll, "calibrate", "--store", e->t.db, "--session", sid, "--emit", e->cfg, "--model", e->model,
			"--gpgpusim-version", "3", "--clamp", NULL};
	int rc = tp_run(argv, e->ccal, 30000);
	if (rc != 0)
		tp_dump_file(e->ccal);
	assert_int_equal(rc, 0);
	char *m = tp_slurp(e->model);
	assert_non_null(m);
	const char *keys[] = {"\"device\": \"", "\"params\"", "\"compute_units\": {\"value\": ", "\"unit\": ",
			      "\"method\": ", "\"spread\": ", "\"cache_levels\": [", "{\"level\": 1, \"size_bytes\": ",
			      "\"roofline\": {\"peak_gflops\": ", "\"peak_gbps\": ", "\"alpha0\": ", "\"m\": "};
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strstr(m, keys[i]))
			fail_msg("machine model lacks %s", keys[i]);
	free(m);
	char *c = tp_slurp(e->cfg);
	assert_non_null(c);
	const char *opts[] = {"\n-gpgpu_n_clusters ", "\n-gpgpu_n_cores_per_cluster 1\n", "\n-gpgpu_shader_registers ",
			      "\n-gpgpu_shader_core_pipeline ", "\n-gpgpu_cache:dl1 ", "# measured: clock_mhz = ",
			      "\n-dram_latency ", "compute_units", "# GPGPU-sim 3.2.2 configuration for "};
	for (size_t i = 0; i < sizeof(opts) / sizeof(opts[0]); i++)
		if (!strstr(c, opts[i]))
			fail_msg("gpgpusim.config lacks %s", opts[i]);
	/* the interconnect file beside it, and GPGPU-sim 3.2.2's limits hold (collector/calib/gpgpusim_limits.c) */
	char icnt_path[300], err[2048];
	snprintf(icnt_path, sizeof(icnt_path), "%.*sconfig_calib_islip.icnt", (int)(strrchr(e->cfg, '/') - e->cfg + 1),
		 e->cfg);
	char *icnt = tp_slurp(icnt_path);
	assert_non_null(icnt);
	if (gs_check_config(c, icnt, 3, NULL, err, sizeof(err)) != 0)
		fail_msg("the PoCL config breaks a GPGPU-sim 3.2.2 limit: %s", err);
	free(c);
	/* offline, from the agent's own JSON, for 4.0 */
	char *argv2[] = {coll, "calibrate", "--from-model", e->ajson, "--emit", e->cfg2, "--gpgpusim-version", "4",
			 "--clamp", NULL};
	assert_int_equal(tp_run(argv2, e->ccal, 30000), 0);
	c = tp_slurp(e->cfg2);
	assert_non_null(c);
	assert_non_null(strstr(c, "\n-gpgpu_cache:dl1 N:"));
	free(icnt);
	icnt = tp_slurp(icnt_path); /* rewritten beside cfg2 */
	assert_non_null(icnt);
	if (gs_check_config(c, icnt, 4, NULL, err, sizeof(err)) != 0)
		fail_msg("the PoCL config breaks a GPGPU-sim 4.0 limit: %s", err);
	free(icnt);
	free(c);
	/* the seed's Mali-T628 model: refused without --clamp (exit 1, the 128 B dl1 limit named,
	 * nothing written), written with it */
	char mali[1024], out3[300];
	const char *srcdir = getenv("PROF_SRC_DIR");
	snprintf(mali, sizeof(mali), "%s/board/arndale-octa/mali-t628.json", srcdir ? srcdir : ".");
	tp_env_path(&e->t, "mali.config", out3, sizeof(out3));
	char *argv3[] = {coll, "calibrate", "--from-model", mali, "--emit", out3, NULL};
	assert_int_equal(tp_run(argv3, e->ccal, 30000), 1);
	assert_int_equal(tp_file_count(e->ccal, "GPGPU-sim 3.2.2 allows at least 128"), 1);
	assert_int_equal(access(out3, F_OK), -1);
	char *argv4[] = {coll, "calibrate", "--from-model", mali, "--emit", out3, "--clamp", NULL};
	assert_int_equal(tp_run(argv4, e->ccal, 30000), 0);
	c = tp_slurp(out3);
	assert_non_null(c);
	assert_non_null(strstr(c, "\n-gpgpu_shader_core_pipeline 72:4\n"));
	free(c);
}

/* The fresh PoCL calibration's configs, for 3.2.2 as released and for 4.0
 * (--clamp: out-of-range values are written clamped, the file says CLAMPED),
 * load in GPGPU-sim's own init code with 0 FAILED steps and no unknown option. */
static void test_calibrate_pocl_config_loads_in_gpgpusim(void **state)
{
	struct env *e = *state;
	char why[1600];
	for (int ver = 3; ver <= 4; ver++)
		if (gsim_tool(ver, why, sizeof(why)) < 0) {
			fprintf(stderr, "SKIP: %s\n", why);
			skip();
		}
	assert_int_equal(e->agent_status, 0);
	char coll[512], dir[300];
	tp_bin("collector", coll, sizeof(coll));
	snprintf(dir, sizeof(dir), "%.*s", (int)(strrchr(e->cfg, '/') - e->cfg), e->cfg);
	for (int ver = 3; ver <= 4; ver++) {
		char out[300], v[4];
		snprintf(v, sizeof(v), "%d", ver);
		tp_env_path(&e->t, ver == 3 ? "gsim3.config" : "gsim4.config", out, sizeof(out));
		char *argv[] = {coll, "calibrate", "--from-model", e->ajson, "--emit", out, "--gpgpusim-version", v,
				"--clamp", NULL};
		assert_int_equal(tp_run(argv, e->ccal, 30000), 0);
		static char text[1 << 16];
		int bad = gsim_run(ver, dir, strrchr(out, '/') + 1, text, sizeof(text), why, sizeof(why));
		fprintf(stderr, "  PoCL calibration, GPGPU-sim %s: %s\n", gs_version_name(ver), why);
		if (bad != 0)
			fprintf(stderr, "%s", text);
		assert_int_equal(bad, 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calibrate_agent_streams_records),
		cmocka_unit_test(test_calibrate_quick_run_within_a_minute),
		cmocka_unit_test(test_calibrate_collector_writes_model_and_config),
		cmocka_unit_test(test_calibrate_pocl_config_loads_in_gpgpusim),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
