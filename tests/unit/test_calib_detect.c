/* Calibration detectors (common/calib/calib_detect.c) and statistics on
 * synthetic curves with planted values and noise, and on curves recorded
 * with `agent calibrate --quick` on PoCL (AMD EPYC, 2 vCPUs, shared). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "calib/calib_detect.h"
#include "calib/calib_stats.h"

/* deterministic noise: uniform in [-amp, amp] relative */
static double noisy(double v, double amp, unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	double u = (double)((*s >> 8) & 0xffff) / 65535.0;
	return v * (1 + amp * (2 * u - 1));
}

static void test_calib_stats_median_spread(void **state)
{
	(void)state;
	double v[] = {3, 1, 2, 10, 4};
	struct calib_stat st;
	assert_int_equal(calib_stat(v, 5, &st), 0);
	assert_true(st.median == 3 && st.min == 1 && st.max == 10 && st.n == 5);
	assert_true(fabs(st.spread - 1.5) < 1e-12); /* (10 - 1) / (2 * 3) */
	double even[] = {1, 2, 3, 4};
	assert_true(calib_median(even, 4) == 2.5);
	double bad[] = {1, NAN};
	assert_int_equal(calib_stat(bad, 2, &st), -EINVAL);
	assert_int_equal(calib_stat(v, 0, &st), -EINVAL);
}

static void test_calib_staircase_recovers_planted_width(void **state)
{
	(void)state;
	unsigned seed = 1;
	for (unsigned S = 1; S <= 8; S++) {
		for (int trial = 0; trial < 5; trial++) {
			double x[64], y[64];
			size_t n = 8 * S < 16 ? 16 : 8 * S;
			for (size_t i = 0; i < n; i++) {
				x[i] = (double)(i + 1);
				y[i] = noisy(0.01 * ceil(x[i] / S) + 0.0005, 0.05, &seed);
			}
			struct calib_detect d;
			assert_int_equal(calib_detect_staircase(x, y, n, &d), 0);
			assert_int_equal((int)d.value, (int)S);
			assert_true(d.confidence > 0.3);
		}
	}
}

/* Issue 28: quick runs of the same 2-unit device reported 1..4. With +-10 %
 * uniform relative timing noise (median of 3 repetitions, 8 points: agent
 * calibrate --quick on 2 CUs) the width must come out 2 in all 500 trials,
 * with +-30 % in at least 425 (measured: 500 and 439 with the 1/y^2 weights;
 * the unweighted fit gave 497 and 386). Heavier noise is what the host-busy
 * check and the reported-CU check in agent/calib/bench_cu.c flag. */
static void test_calib_staircase_stable_under_relative_noise(void **state)
{
	(void)state;
	unsigned seed = 28;
	const double noise[] = {0.10, 0.30};
	const int need[] = {500, 425};
	char msg[256] = "";
	for (int k = 0; k < 2; k++) {
		int right = 0;
		for (int trial = 0; trial < 500; trial++) {
			double x[8], y[8];
			for (int i = 0; i < 8; i++) {
				x[i] = i + 1;
				double r[3];
				for (int j = 0; j < 3; j++)
					r[j] = noisy(0.01 * (0.3 + ceil(x[i] / 2)), noise[k], &seed);
				double lo = fmin(r[0], fmin(r[1], r[2])), hi = fmax(r[0], fmax(r[1], r[2]));
				y[i] = r[0] + r[1] + r[2] - lo - hi; /* median */
			}
			struct calib_detect d;
			if (calib_detect_staircase(x, y, 8, &d) == 0 && d.value == 2)
				right++;
		}
		if (right < need[k])
			snprintf(msg + strlen(msg), sizeof(msg) - strlen(msg), "noise %.0f%%: width 2 in %d of 500 (need %d); ",
				 noise[k] * 100, right, need[k]);
	}
	if (msg[0])
		fail_msg("%s", msg);
}

static void test_calib_staircase_flat_is_not_a_staircase(void **state)
{
	(void)state;
	unsigned seed = 7;
	double x[16], y[16];
	for (int i = 0; i < 16; i++) {
		x[i] = i + 1;
		y[i] = noisy(1.0, 0.01, &seed);
	}
	struct calib_detect d;
	assert_int_equal(calib_detect_staircase(x, y, 16, &d), -ENOENT);
	assert_true(d.confidence == 0);
	x[3] = 2.5; /* not integers */
	assert_int_equal(calib_detect_staircase(x, y, 16, &d), -EINVAL);
}

static void test_calib_cliff_recovers_register_count(void **state)
{
	(void)state;
	unsigned seed = 3;
	double x[40], y[40];
	size_t n = 0;
	for (int r = 4; r <= 80; r += 2, n++) {
		x[n] = r;
		y[n] = noisy(r <= 38 ? 1.0 : 2.5, 0.04, &seed);
	}
	struct calib_detect d;
	assert_int_equal(calib_detect_cliff(x, y, n, 1.3, &d), 0);
	assert_int_equal((int)d.value, 38);
	assert_int_equal((int)d.aux, 40);
	assert_true(d.confidence > 0.7);
}

static void test_calib_cliff_ignores_a_spike(void **state)
{
	(void)state;
	double x[12], y[12];
	for (int i = 0; i < 12; i++) {
		x[i] = i + 1;
		y[i] = i < 8 ? 1.0 : 3.0;
	}
	y[3] = 5.0; /* one slow repetition */
	struct calib_detect d;
	assert_int_equal(calib_detect_cliff(x, y, 12, 1.3, &d), 0);
	assert_int_equal((int)d.value, 8);
	for (int i = 0; i < 12; i++)
		y[i] = 1.0 + 0.01 * (i % 2);
	assert_int_equal(calib_detect_cliff(x, y, 12, 1.3, &d), -ENOENT);
}

static void test_calib_levels_recover_planted_caches(void **state)
{
	(void)state;
	unsigned seed = 11;
	double x[40], y[40];
	size_t n = 0;
	for (double b = 4096; b <= 64.0 * 1048576; b *= M_SQRT2, n++) {
		x[n] = b;
		double lat = b <= 32769 ? 4 : b <= 1048577 ? 14 : 200;
		if (b > 32769 && b <= 2 * 32769) /* partial misses just past a level */
			lat = 9;
		if (b > 1048577 && b <= 2 * 1048577)
			lat = 80;
		y[n] = noisy(lat, 0.05, &seed);
	}
	struct calib_level lv[6];
	size_t nlv;
	assert_int_equal(calib_detect_levels(x, y, n, 1.8, lv, 6, &nlv), 0);
	assert_int_equal(nlv, 3);
	assert_true(fabs(lv[0].size - 32768) < 1 && !lv[0].open);
	assert_true(fabs(lv[1].size - 1048576) < 1 && !lv[1].open);
	assert_true(lv[2].open && lv[2].latency > 150);
	assert_true(fabs(lv[0].latency - 4) < 0.4 && fabs(lv[1].latency - 14) < 1.5);
}

static void test_calib_saturation_finds_issue_slots(void **state)
{
	(void)state;
	unsigned seed = 5;
	double x[] = {1, 2, 3, 4, 6, 8, 10, 12, 16, 24, 32}, y[11];
	for (int i = 0; i < 11; i++)
		y[i] = noisy(1e7 * (x[i] < 10 ? x[i] : 10), 0.03, &seed);
	struct calib_detect d;
	assert_int_equal(calib_detect_saturation(x, y, 11, 0.9, &d), 0);
	assert_int_equal((int)d.value, 10);
	assert_true(d.aux > 8 && d.confidence > 0.8);
}

static void test_calib_granularity_from_branch_order(void **state)
{
	(void)state;
	double w[] = {2, 4, 8, 16, 32, 64, 128, 256};
	double warp16[] = {1, 1, 1, 1, 0, 0, 0, 0.1};
	struct calib_detect d;
	assert_int_equal(calib_detect_granularity(w, warp16, 8, &d), 0);
	assert_int_equal((int)d.value, 16);
	assert_true(d.aux == 0 && d.confidence > 0.9);
	double indep[] = {0, 0, 0, 0, 0, 0, 0, 0}; /* Mali: every work-item its own thread */
	calib_detect_granularity(w, indep, 8, &d);
	assert_int_equal((int)d.value, 1);
	double serial[] = {1, 1, 1, 1, 1, 1, 1, 1}; /* a CPU device: the group is one serial unit */
	calib_detect_granularity(w, serial, 8, &d);
	assert_true(d.value == 256 && d.aux == 256);
	double mixed[] = {1, 0, 1, 0, 1, 0, 1, 0};
	calib_detect_granularity(w, mixed, 8, &d);
	assert_true(d.confidence < 0.7);
}

static void test_calib_cycles_per_op(void **state)
{
	(void)state;
	assert_true(fabs(calib_cycles_per_op(0.01, 1e7, 533) - 0.533) < 1e-9); /* 10 ms at 533 MHz over 1e7 ops */
	assert_true(isnan(calib_cycles_per_op(1, 0, 533)));
}

/* Recorded on PoCL (pthread device, AMD EPYC Zen 5, 48 KiB 12-way L1d, 1 MiB
 * L2, line 64 B per getconf), machine shared with other builds. */
static void test_calib_recorded_pocl_curves(void **state)
{
	(void)state;
	double dx[] = {4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
	double dy[] = {6.8442, 6.7639, 6.7466, 6.7598, 6.891, 6.7878, 10.193, 10.071, 10.835, 10.33, 10.058};
	struct calib_detect d;
	assert_int_equal(calib_detect_cliff(dx, dy, 11, 1.3, &d), 0);
	assert_int_equal((int)d.aux, 64); /* line size */

	double wx[24], wy[] = {3.1396, 3.1397, 3.1096, 3.1126, 3.1213, 3.0887, 3.7909, 3.1215,
			       3.1414, 3.3713, 3.6515, 3.164,  25.777, 11.358, 10.578, 10.871,
			       11.6,   14.286, 14.934, 11.991, 11.195, 12.092, 11.812, 12.437};
	for (int i = 0; i < 24; i++)
		wx[i] = i + 1;
	assert_int_equal(calib_detect_cliff(wx, wy, 24, 1.3, &d), 0);
	assert_int_equal((int)d.value, 12); /* ways */

	double sx[] = {4096,   5632,   8192,	11520,	16384,	 23040,	  32768,   46336,   65536,
		       92672,  131072, 185344,	262144, 370688,	 524288,  741376,  1048576, 1482752,
		       2097152, 2965760, 4194304, 5931520, 8388608, 11862976, 16777216, 23726272, 33554432};
	double sy[] = {3.3628, 3.338,  3.0636, 3.0676, 3.0672, 3.082,  3.1253, 3.3876, 9.5838,
		       9.7177, 9.8042, 11.019, 10.439, 10.282, 12.296, 17.193, 25.035, 35.803,
		       56.721, 103.57, 68.177, 264.62, 344.04, 371.95, 425.8,  407.99, 476.75};
	struct calib_level lv[6];
	size_t nlv;
	assert_int_equal(calib_detect_levels(sx, sy, 27, 1.8, lv, 6, &nlv), 0);
	assert_true(nlv >= 2);
	assert_true(lv[0].size >= 49152 / 2 && lv[0].size <= 49152 * 2);
	assert_true(lv[1].size >= 1048576 / 2 && lv[1].size <= 1048576 * 2);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_stats_median_spread),
		cmocka_unit_test(test_calib_staircase_recovers_planted_width),
		cmocka_unit_test(test_calib_staircase_stable_under_relative_noise),
		cmocka_unit_test(test_calib_staircase_flat_is_not_a_staircase),
		cmocka_unit_test(test_calib_cliff_recovers_register_count),
		cmocka_unit_test(test_calib_cliff_ignores_a_spike),
		cmocka_unit_test(test_calib_levels_recover_planted_caches),
		cmocka_unit_test(test_calib_saturation_finds_issue_slots),
		cmocka_unit_test(test_calib_granularity_from_branch_order),
		cmocka_unit_test(test_calib_cycles_per_op),
		cmocka_unit_test(test_calib_recorded_pocl_curves),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
