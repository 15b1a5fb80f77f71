/* The calibration benchmarks on a real OpenCL device whose truth is known:
 * PoCL's CPU device (compute units = CL_DEVICE_MAX_COMPUTE_UNITS; caches =
 * the CPU's, from sysfs or, where a VM hides sysfs, from glibc's cpuid
 * sysconf). Skipped, with the reason, where there is no OpenCL device or it
 * is not a CPU device. Timing-sensitive checks retry, and a compute-unit
 * staircase flattened by other processes on a shared host is reported as a
 * skip with the measured parallelism, not a pass. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib/calib_run.h"
#include "calib/cl_env.h"
#include "log.h"

static struct calib_model *run(const char *only)
{
	struct calib_model *m = calloc(1, sizeof(*m));
	struct calib_run_opts o = {.device = -1, .quick = true, .only = only, .progress = stderr};
	int rc = calib_run_all(&o, m, NULL, NULL);
	if (rc <= 0) {
		free(m);
		return NULL;
	}
	return m;
}

/* Skip unless an OpenCL CPU device (PoCL) is there. */
static int have_cpu_device(char *why, size_t len)
{
	struct cl_env *e;
	if (cl_env_open(-1, &e, why, len) < 0)
		return 0;
	int ok = cl_env_info(e)->is_cpu;
	if (!ok)
		snprintf(why, len, "the OpenCL device is not a CPU device: its truth is not known here");
	cl_env_close(e);
	return ok;
}

#define NEED_POCL()                                                                                          \
	do {                                                                                                 \
		char why[512];                                                                               \
		if (!have_cpu_device(why, sizeof(why))) {                                                     \
			fprintf(stderr, "SKIP: %s\n", why);                                                   \
			skip();                                                                               \
		}                                                                                            \
	} while (0)

/* Cache truth: sysfs index<i>, else sysconf (cpuid). 0 if unknown. */
static long truth(int level, const char *what, char *src, size_t len)
{
	for (int i = 0; i < 8; i++) {
		char p[256], buf[64];
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
		FILE *f = fopen(p, "r");
		if (!f)
			break;
		int lv = 0;
		if (fscanf(f, "%d", &lv) != 1)
			lv = 0;
		fclose(f);
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
		f = fopen(p, "r");
		if (!f || !fgets(buf, sizeof(buf), f)) {
			if (f)
				fclose(f);
			continue;
		}
		fclose(f);
		if (lv != level || strncmp(buf, "Instruction", 11) == 0)
			continue;
		snprintf(p, sizeof(p), "/sys/devices/system/cpu/cpu0/cache/index%d/%s", i, what);
		f = fopen(p, "r");
		long v = 0;
		char unit = 0;
		if (f) {
			if (fscanf(f, "%ld%c", &v, &unit) < 1)
				v = 0;
			fclose(f);
		}
		if (unit == 'K')
			v *= 1024;
		snprintf(src, len, "sysfs %s", p);
		return v;
	}
	int name = 0;
	if (strcmp(what, "coherency_line_size") == 0)
		name = level == 1 ? _SC_LEVEL1_DCACHE_LINESIZE : level == 2 ? _SC_LEVEL2_CACHE_LINESIZE : 0;
	else if (strcmp(what, "size") == 0)
		name = level == 1 ? _SC_LEVEL1_DCACHE_SIZE : level == 2 ? _SC_LEVEL2_CACHE_SIZE : 0;
	else if (strcmp(what, "ways_of_associativity") == 0)
		name = level == 1 ? _SC_LEVEL1_DCACHE_ASSOC : level == 2 ? _SC_LEVEL2_CACHE_ASSOC : 0;
	long v = name ? sysconf(name) : 0;
	snprintf(src, len, "sysconf (cpuid; /sys/devices/system/cpu/cpu0/cache is absent here)");
	return v > 0 ? v : 0;
}

static void print_param(const struct calib_model *m, const char *name)
{
	const struct calib_param *p = calib_model_get(m, name);
	if (p)
		fprintf(stderr, "  %s = %g %s (confidence %.2f, spread %.1f%%%s): %s\n", name, p->value, p->unit,
			p->confidence, p->spread * 100, p->flagged ? ", FLAGGED" : "", p->method);
	else
		fprintf(stderr, "  %s: not measured\n", name);
}

/* The 1-minute load average (/proc/loadavg), -1 where it cannot be read. */
static double load1(void)
{
	double l = -1;
	FILE *f = fopen("/proc/loadavg", "r");
	if (f) {
		if (fscanf(f, "%lf", &l) != 1)
			l = -1;
		fclose(f);
	}
	return l;
}

/* Decided on what every attempt measured: a failure counts only where the host was quiet
 * through all of them (each attempt's own parallel speedup >= 0.75 x the CUs and a load
 * average below the CPU count); otherwise the skip says what was measured (issue 43: one
 * busy attempt among three, then a failing one at load 11-19 with a good speedup read
 * beside it, failed the suite). */
static void test_calib_pocl_compute_units_match_device(void **state)
{
	(void)state;
	NEED_POCL();
	double min_par = INFINITY, max_load = -1;
	int reported = 0;
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	for (int attempt = 0; attempt < 3; attempt++) {
		double l0 = load1();
		struct calib_model *m = run("compute_units");
		assert_non_null(m);
		const struct calib_param *cu = calib_model_get(m, "compute_units");
		reported = (int)calib_model_value(m, "compute_units_reported", 0);
		double par = calib_model_value(m, "host_parallel_speedup", 0);
		double l1 = load1();
		min_par = fmin(min_par, par);
		max_load = fmax(max_load, fmax(l0, l1));
		assert_non_null(cu);
		print_param(m, "compute_units");
		bool ok = (int)cu->value == reported && cu->confidence >= 0.5;
		free(m);
		if (ok)
			return;
		sleep(1);
	}
	if (min_par < 0.75 * reported || max_load >= (double)ncpu) {
		fprintf(stderr, "SKIP: HOST BUSY: load average up to %.2f on %ld CPUs, %d threads ran only %.2fx faster "
				"than one in the worst of 3 attempts, so a %d-CU staircase cannot show (rerun on a "
				"quieter machine)\n",
			max_load, ncpu, reported, min_par, reported);
		skip();
	}
	fail_msg("staircase width != CL_DEVICE_MAX_COMPUTE_UNITS (%d) in 3 attempts on a quiet host (load average "
		 "up to %.2f on %ld CPUs, speedup >= %.2fx)",
		 reported, max_load, ncpu, min_par);
}

static void test_calib_pocl_cache_matches_cpu(void **state)
{
	(void)state;
	NEED_POCL();
	char src[512];
	long line = truth(1, "coherency_line_size", src, sizeof(src));
	if (line <= 0) {
		fprintf(stderr, "SKIP: no cache information (sysfs or sysconf) to compare with\n");
		skip();
	}
	fprintf(stderr, "  truth from %s\n", src);
	long l1 = truth(1, "size", src, sizeof(src)), l2 = truth(2, "size", src, sizeof(src));
	char wsrc[512];
	long ways = truth(1, "ways_of_associativity", wsrc, sizeof(wsrc));
	const char *bad = NULL;
	int ways_seen = 0; /* attempts whose l1_assoc was not FLAGGED (a timing figure the host allowed) */
	for (int attempt = 0; attempt < 3; attempt++) {
		struct calib_model *m = run("cache");
		assert_non_null(m);
		double mline = calib_model_value(m, "l1_line_bytes", 0);
		double ml1 = calib_model_value(m, "l1_size_bytes", 0), ml2 = calib_model_value(m, "l2_size_bytes", 0);
		const struct calib_param *mw = calib_model_get(m, "l1_assoc");
		fprintf(stderr, "  attempt %d: line %g (truth %ld), L1 %g (truth %ld), L2 %g (truth %ld), L1 ways %g (truth %ld, %s)\n",
			attempt + 1, mline, line, ml1, l1, ml2, l2, mw ? mw->value : NAN, ways, wsrc);
		print_param(m, "l1_assoc");
		print_param(m, "l3_size_bytes");
		print_param(m, "dram_latency_cycles");
		bad = NULL;
		if ((long)mline != line)
			bad = "line size differs";
		else if (l1 > 0 && !(ml1 >= l1 / 2.0 && ml1 <= l1 * 2.0))
			bad = "L1 size not within 2x";
		else if (l2 > 0 && !(ml2 >= l2 / 2.0 && ml2 <= l2 * 2.0))
			bad = "L2 size not within 2x";
		else if (ways > 0 && mw && !mw->flagged && (long)mw->value != ways)
			bad = "L1 ways differ from the CPU's";
		else if (ways > 0 && (!mw || mw->flagged))
			bad = "L1 ways FLAGGED (the host too busy for the sweep?)";
		ways_seen += ways > 0 && mw && !mw->flagged;
		free(m);
		if (!bad)
			return;
	}
	if (ways > 0 && ways_seen == 0 && strstr(bad, "FLAGGED")) {
		fprintf(stderr, "SKIP: the L1 ways sweep was FLAGGED in all 3 attempts (repetitions disagree: host too busy"
				" for this timing figure); everything else matched\n");
		skip();
	}
	fail_msg("%s in 3 attempts", bad);
}

static void test_calib_pocl_granularity_and_registers_have_confidence(void **state)
{
	(void)state;
	NEED_POCL();
	struct calib_model *m = run("granularity,registers");
	assert_non_null(m);
	const char *names[] = {"granularity", "regs_per_work_item", "regs_per_cu"};
	for (size_t i = 0; i < 3; i++) {
		const struct calib_param *p = calib_model_get(m, names[i]);
		assert_non_null(p);
		print_param(m, names[i]);
		assert_true(p->value >= 1 && p->confidence >= 0 && p->confidence <= 1);
		assert_true(p->flagged == (p->spread > CALIB_SPREAD_MAX || p->confidence < CALIB_CONFIDENCE_MIN));
	}
	/* PoCL runs a work-group as one loop over its work-items: the halves never run independently */
	assert_true(calib_model_value(m, "granularity", 0) >= 2);
	free(m);
}

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_pocl_compute_units_match_device),
		cmocka_unit_test(test_calib_pocl_cache_matches_cpu),
		cmocka_unit_test(test_calib_pocl_granularity_and_registers_have_confidence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
