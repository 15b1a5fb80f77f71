/* The calibration benchmarks on a real OpenCL device whose truth is known:
 * PoCL's CPU device (compute units = CL_DEVICE_MAX_COMPUTE_UNITS; caches =
 * the CPU's, from sysfs or, where a VM hides sysfs, from glibc's cpuid
 * sysconf). Skipped, with the reason, where there is no OpenCL device or it
 * is not a CPU device. Timing-sensitive checks retry; each attempt prints
 * every figure it decided on and what else used the host's CPUs meanwhile
 * (/proc/stat). A check fails where an attempt failed on a quiet host; where
 * every attempt ran on a busy one it is a skip with the measured load, never
 * a pass. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib/calib_run.h"
#include "calib/cl_env.h"
#include "host_use.h"
#include "log.h"

static struct calib_model *run(const char *only)
{
	struct calib_model *m = calloc(1, sizeof(*m));
	struct calib_run_opts o = {.device = -1, .quick = true, .only = only, .progress = stderr};
	int rc = calib_run_all(&o, m, NULL, NULL);
	if (rc <= 0) {
		fprintf(stderr, "  calib_run_all(--only %s) ran no benchmark: %d (%s)\n", only, rc,
			rc < 0 ? strerror(-rc) : "every one skipped");
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

/* What else used the host's CPUs while an attempt ran (issue 43; tests/lib/host_use.h): other
 * processes' CPUs (PoCL's workers and any compiler it starts are this process's), steal, load. */
static void host_use_print(const struct host_use *u, int attempt)
{
	char line[256];
	host_use_format(u, line, sizeof(line));
	fprintf(stderr, "  attempt %d: %s\n", attempt, line);
}

/* The staircase's width against CL_DEVICE_MAX_COMPUTE_UNITS, up to 3 attempts; one confident
 * match passes. A miss fails the test where the calibration was wrong and should have known:
 * a wrong width it did not flag (confidence >= 0.5) on a quiet host (host_use, and the
 * benchmark's own n threads >= 0.75 x n faster than one), or any miss on a host whose n threads
 * ran >= 0.9 x n faster than one (a clean step to find). A miss it flagged on a host where n
 * threads gave less (the CI host of b407b42: 2 vCPUs 1.47-1.69x one, staircase 1 or 2 at
 * confidence 0.29-0.35, flagged) is the calibration saying what it could not see: skipped with
 * the figures, as a miss on a busy host is (issue 43). */
static void test_calib_pocl_compute_units_match_device(void **state)
{
	(void)state;
	NEED_POCL();
	int reported = 0, quiet_fails = 0;
	for (int attempt = 1; attempt <= 3; attempt++) {
		struct host_use u;
		host_use_begin(&u);
		struct calib_model *m = run("compute_units");
		host_use_end(&u);
		host_use_print(&u, attempt);
		assert_non_null(m);
		const struct calib_param *cu = calib_model_get(m, "compute_units");
		reported = (int)calib_model_value(m, "compute_units_reported", 0);
		double par = calib_model_value(m, "host_parallel_speedup", 0);
		print_param(m, "compute_units");
		print_param(m, "host_parallel_speedup");
		print_param(m, "compute_units_reported");
		bool ok = cu && (int)cu->value == reported && cu->confidence >= 0.5;
		bool quiet = u.quiet && par >= 0.75 * reported;
		bool clean = u.quiet && par >= 0.9 * reported; /* a step the staircase must find */
		bool should_know = clean || (quiet && cu && cu->confidence >= 0.5);
		fprintf(stderr,
			"  attempt %d: staircase %g CUs, %d reported, confidence %.2f (>= 0.50 asked); speedup %.2fx (a quiet "
			"host gives >= %.2fx): %s, %s host\n",
			attempt, cu ? cu->value : NAN, reported, cu ? cu->confidence : NAN, par, 0.75 * reported,
			ok ? "match" : "NO MATCH", quiet ? "quiet" : "busy");
		if (!ok)
			fprintf(stderr, "  attempt %d: %s\n", attempt,
				should_know ? "a miss the calibration should not make here (counted)"
					    : "flagged by the calibration on a host whose threads gave < 0.9 x n, or busy (not counted)");
		free(m);
		if (ok)
			return;
		quiet_fails += should_know;
		if (attempt < 3)
			sleep(1);
	}
	if (quiet_fails == 0) {
		fprintf(stderr, "SKIP: HOST BUSY: every attempt that missed the %d-CU staircase was flagged by the calibration "
				"on a host whose %d threads ran < %.1fx one, or ran on a busy host (figures above; rerun on a "
				"quieter machine)\n",
			reported, reported, 0.9 * reported);
		skip();
	}
	fail_msg("staircase width != CL_DEVICE_MAX_COMPUTE_UNITS (%d) in %d attempt(s) where the calibration should have "
		 "found it (figures above)",
		 reported, quiet_fails);
}

/* Line size, L1 and L2 sizes (within 2x) and L1 ways against the CPU's, up to 3 attempts; the
 * same quiet/busy rule as above (a pointer chase's plateaus are timings). An L1 ways sweep the
 * calibrator FLAGGED (its repetitions disagree) in every attempt is a skip, everything else
 * having matched. */
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
	fprintf(stderr, "  truth: line %ld B, L1 %ld B, L2 %ld B, L1 ways %ld (%s); 0: unknown, not compared\n", line, l1, l2,
		ways, wsrc);
	const char *bad = NULL, *quiet_bad = NULL;
	int ways_seen = 0; /* attempts whose l1_assoc was not FLAGGED (a timing figure the host allowed) */
	for (int attempt = 1; attempt <= 3; attempt++) {
		struct host_use u;
		host_use_begin(&u);
		struct calib_model *m = run("cache");
		host_use_end(&u);
		host_use_print(&u, attempt);
		assert_non_null(m);
		double mline = calib_model_value(m, "l1_line_bytes", 0);
		double ml1 = calib_model_value(m, "l1_size_bytes", 0), ml2 = calib_model_value(m, "l2_size_bytes", 0);
		const struct calib_param *mw = calib_model_get(m, "l1_assoc");
		static const char *const shown[] = {"l1_line_bytes", "l1_size_bytes",	"l2_size_bytes",      "l1_assoc",
						    "l3_size_bytes", "dram_latency_cycles", "dram_latency_ns"};
		for (size_t i = 0; i < sizeof(shown) / sizeof(shown[0]); i++)
			print_param(m, shown[i]);
		bad = NULL;
		if ((long)mline != line)
			bad = "line size differs";
		else if (l1 > 0 && !(ml1 >= l1 / 2.0 && ml1 <= l1 * 2.0))
			bad = "L1 size not within 2x";
		else if (l2 > 0 && !(ml2 >= l2 / 2.0 && ml2 <= l2 * 2.0))
			bad = "L2 size not within 2x";
		/* the ways a kernel's data gets: the runtime's own data (PoCL's work-group context, the
		 * kernel's arguments) lives in the chased set too and takes some (bench_cache.c's
		 * ways()); on the 12-way L1 of this VM's AMD EPYC (family 26) a quiet host read 9, 10
		 * and 11 in three attempts, unflagged. More than the CPU's, or under 3/4 of them, is
		 * wrong; between, the figure is what a kernel gets, printed as such. */
		else if (ways > 0 && mw && !mw->flagged && ((long)mw->value > ways || mw->value * 4 < 3.0 * (double)ways))
			bad = "L1 ways differ from the CPU's (more, or under 3/4)";
		else if (ways > 0 && (!mw || mw->flagged))
			bad = "L1 ways FLAGGED (the host too busy for the sweep?)";
		ways_seen += ways > 0 && mw && !mw->flagged;
		fprintf(stderr,
			"  attempt %d: line %g (truth %ld), L1 %g (truth %ld, 0.5x-2x), L2 %g (truth %ld, 0.5x-2x), L1 ways %g%s "
			"(truth %ld): %s, %s host\n",
			attempt, mline, line, ml1, l1, ml2, l2, mw ? mw->value : NAN, mw && mw->flagged ? " FLAGGED" : "", ways,
			bad ? bad : mw && ways > 0 && (long)mw->value != ways ? "match (fewer ways: what a kernel gets)" : "match",
			u.quiet ? "quiet" : "busy");
		free(m);
		if (!bad)
			return;
		if (u.quiet && !strstr(bad, "FLAGGED"))
			quiet_bad = bad;
	}
	if (quiet_bad)
		fail_msg("%s on a quiet host (3 attempts, figures above)", quiet_bad);
	if (ways > 0 && ways_seen == 0 && strstr(bad, "FLAGGED")) {
		fprintf(stderr, "SKIP: the L1 ways sweep was FLAGGED in all 3 attempts (repetitions disagree: host too busy"
				" for this timing figure); everything else matched\n");
		skip();
	}
	fprintf(stderr, "SKIP: HOST BUSY: every attempt that missed (last: %s) ran on a busy host (figures above; rerun on "
			"a quieter machine)\n",
		bad);
	skip();
}

/* Structure, not timing: every figure there, a value >= 1, a confidence in [0, 1], flagged exactly
 * where spread or confidence say so, and PoCL's lock-stepped work-group (granularity >= 2, a flag
 * test). Every figure is printed before the verdict. */
static void test_calib_pocl_granularity_and_registers_have_confidence(void **state)
{
	(void)state;
	NEED_POCL();
	struct host_use u;
	host_use_begin(&u);
	struct calib_model *m = run("granularity,registers");
	host_use_end(&u);
	host_use_print(&u, 1);
	assert_non_null(m);
	const char *names[] = {"granularity", "regs_per_work_item", "regs_per_cu"};
	const char *bad = NULL, *which = NULL;
	for (size_t i = 0; i < 3; i++) {
		const struct calib_param *p = calib_model_get(m, names[i]);
		print_param(m, names[i]);
		const char *why = NULL;
		if (!p)
			why = "not measured";
		else if (!(p->value >= 1 && p->confidence >= 0 && p->confidence <= 1))
			why = "value < 1 or confidence outside [0, 1]";
		else if (p->flagged != (p->spread > CALIB_SPREAD_MAX || p->confidence < CALIB_CONFIDENCE_MIN))
			why = "FLAGGED where spread and confidence do not say so, or the reverse";
		if (why && !bad) {
			bad = why;
			which = names[i];
		}
	}
	print_param(m, "threads_per_cu");
	/* PoCL runs a work-group as one loop over its work-items: the halves never run independently */
	double gran = calib_model_value(m, "granularity", 0);
	fprintf(stderr, "  granularity %g (>= 2 asked: PoCL's work-group is one serial loop)\n", gran);
	free(m);
	if (bad)
		fail_msg("%s: %s (figures above; spread max %.2f, confidence min %.2f)", which, bad, CALIB_SPREAD_MAX,
			 CALIB_CONFIDENCE_MIN);
	if (!(gran >= 2))
		fail_msg("granularity %g < 2: PoCL's work-group halves ran independently (figures above)", gran);
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
