/* Calibration against this host's own truth, with oracles written here
 * (issue 37): the clock the calibration reports against a dependent add
 * chain timed by the wall clock in this file; the physical bounds against
 * what the benchmarks measured (a bound below a measured value is a bug in
 * the bound). Timing figures are compared only when this file's own
 * measurement is stable (best bursts of three rounds agree); on a host too
 * busy for that the test skips and says so. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

#include <cmocka.h>

#include "calib/calib_run.h"
#include "log.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* 8 dependent register adds per iteration, 131072 iterations: a loop written
 * here apart from the calibration's own chain (agent/calib/phys_probe.c). In
 * assembly where we know the ISA, so the sanitizer build's -O1 cannot put
 * moves or a branch per add into the chain; a register operand, since some
 * cores fold small-immediate add chains at rename. */
#define ADD8(op) op op op op op op op op
__attribute__((no_sanitize("address", "undefined"))) static uintptr_t add_chain(uintptr_t x, uintptr_t k)
{
	uintptr_t n = 131072;
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("2:\n\t" ADD8("add %2, %0\n\t") "sub $1, %1\n\tjne 2b" : "+r"(x), "+r"(n) : "r"(k) : "cc");
#elif defined(__aarch64__)
	__asm__ volatile("2:\n\t" ADD8("add %0, %0, %2\n\t") "subs %1, %1, #1\n\tb.ne 2b" : "+r"(x), "+r"(n) : "r"(k) : "cc");
#elif defined(__arm__)
	__asm__ volatile("2:\n\t" ADD8("add %0, %0, %2\n\t") "subs %1, %1, #1\n\tbne 2b" : "+r"(x), "+r"(n) : "r"(k) : "cc");
#else
	for (; n; n--)
		for (int j = 0; j < 8; j++) {
			x += k;
			__asm__ volatile("" : "+r"(x));
		}
#endif
	return x;
}

/* MHz of the best of `bursts` bursts of 8 x 131072 dependent adds against CLOCK_MONOTONIC. */
static double add_chain_mhz(int bursts)
{
	double best = 0;
	uintptr_t x = 0;
	for (int b = 0; b < bursts; b++) {
		double t0 = now_s();
		x = add_chain(x, 3);
		double s = now_s() - t0;
		if (s > 0 && 8.0 * 131072 / s / 1e6 > best)
			best = 8.0 * 131072 / s / 1e6;
	}
	__asm__ volatile("" ::"r"(x));
	return best;
}

/* The oracle's clock, or 0 (with why) when three rounds disagree by more than 3 %. */
static double stable_clock(char *why, size_t len)
{
	double r[3], lo = INFINITY, hi = 0;
	for (int i = 0; i < 3; i++) {
		r[i] = add_chain_mhz(64);
		lo = fmin(lo, r[i]);
		hi = fmax(hi, r[i]);
	}
	if (hi <= 0 || (hi - lo) / hi > 0.03) {
		snprintf(why, len, "host too busy for a clock figure: three rounds of this test's add chain gave %.0f, %.0f, %.0f MHz", r[0], r[1], r[2]);
		return 0;
	}
	return hi;
}

static void print_param(const struct calib_model *m, const char *name)
{
	const struct calib_param *p = calib_model_get(m, name);
	if (p)
		fprintf(stderr, "  %s = %g %s (spread %.1f%%%s): %s\n", name, p->value, p->unit, p->spread * 100,
			p->flagged ? ", FLAGGED" : "", p->method);
	else
		fprintf(stderr, "  %s: not measured\n", name);
}

static struct calib_model *run(const char *only)
{
	struct calib_model *m = calloc(1, sizeof(*m));
	struct calib_run_opts o = {.device = -1, .quick = true, .only = only, .progress = NULL};
	if (calib_run_all(&o, m, NULL, NULL) <= 0) {
		free(m);
		return NULL;
	}
	return m;
}

/* cpu_clock_mhz (the running clock, measured by the calibration) within 10 %
 * of this file's add chain; the base clock is reported beside it. */
static void test_calib_host_clock_is_the_running_clock(void **state)
{
	(void)state;
	struct calib_model *m = run("cpu_peak");
	assert_non_null(m);
	print_param(m, "cpu_clock_mhz");
	print_param(m, "cpu_clock_base_mhz");
	const struct calib_param *c = calib_model_get(m, "cpu_clock_mhz");
	assert_non_null(c);
	assert_non_null(strstr(c->method, "CLOCK_MONOTONIC"));
	char why[300];
	double truth = 0;
	for (int attempt = 0; attempt < 3 && truth == 0; attempt++)
		truth = stable_clock(why, sizeof(why));
	if (truth == 0) {
		free(m);
		fprintf(stderr, "SKIP: %s\n", why);
		skip();
	}
	fprintf(stderr, "  this test's add chain: %.0f MHz; calibrated %.0f MHz (%.3f)\n", truth, c->value,
		c->value / truth);
	if (fabs(c->value - truth) > 0.10 * truth) {
		/* the host may have changed in between: measure both again once */
		struct calib_model *m2 = run("cpu_peak");
		assert_non_null(m2);
		double again = calib_model_value(m2, "cpu_clock_mhz", 0);
		truth = stable_clock(why, sizeof(why));
		free(m2);
		if (truth == 0) {
			free(m);
			fprintf(stderr, "SKIP: %s\n", why);
			skip();
		}
		if (fabs(again - truth) > 0.10 * truth)
			fail_msg("calibrated clock %.0f MHz (then %.0f) vs this test's add chain %.0f MHz: more than 10%%",
				 c->value, again, truth);
	}
	free(m);
}

/* No physical bound below the value it bounds: every *_of_physical <= 1. */
static void test_calib_host_bounds_bound(void **state)
{
	(void)state;
	struct calib_model *m = run("peak,cpu_peak");
	assert_non_null(m);
	unsigned ratios = 0;
	for (size_t i = 0; i < m->nparams; i++) {
		const struct calib_param *p = &m->params[i];
		if (strstr(p->name, "phys") || strstr(p->name, "_of_physical") || strstr(p->name, "peak_g"))
			print_param(m, p->name);
		if (!strstr(p->name, "_of_physical"))
			continue;
		ratios++;
		if (p->value > 1.0)
			fail_msg("%s = %.3f: a physical bound below the value it bounds (%s)", p->name, p->value, p->method);
	}
	/* the compute bounds exist wherever the clock and the ISA are known */
	assert_true(calib_model_get(m, "cpu_phys_peak_gflops") != NULL);
	assert_true(ratios >= 1);
	/* bandwidth: a bound only from what the platform states, never the L1 ports */
	const struct calib_param *bw = calib_model_get(m, "cpu_phys_peak_gbps");
	if (bw)
		assert_non_null(strstr(bw->method, "SMBIOS"));
	free(m);
}

/* This file's random page chase: 256 MiB of 64 B lines in one random cycle
 * (Sattolo, xorshift64), on transparent huge pages where given; ns per access
 * of the best of 5 runs (*worst: the slowest), or 0 (with why) when the two
 * best disagree by > 10 %. */
__attribute__((no_sanitize("address", "undefined"))) static double chase_ns(double *worst, char *why, size_t len)
{
	const size_t bytes = 256u << 20, n = bytes / 64, step = 64 / sizeof(size_t);
	size_t *a = aligned_alloc(2u << 20, bytes);
	assert_non_null(a);
	madvise(a, bytes, MADV_HUGEPAGE);
	size_t *perm = malloc(n * sizeof(size_t));
	assert_non_null(perm);
	for (size_t i = 0; i < n; i++)
		perm[i] = i;
	uint64_t s = 0x9e3779b97f4a7c15ull;
	for (size_t i = n - 1; i > 0; i--) { /* Sattolo: one cycle through every line */
		s ^= s << 13, s ^= s >> 7, s ^= s << 17;
		size_t j = (size_t)(s % i), t = perm[i];
		perm[i] = perm[j], perm[j] = t;
	}
	for (size_t i = 0; i < n; i++)
		a[perm[i] * step] = perm[(i + 1) % n] * step;
	free(perm);
	double best[5];
	size_t p = 0;
	const long steps = 400000;
	for (int r = 0; r < 5; r++) {
		double t0 = now_s();
		for (long i = 0; i < steps; i++)
			p = a[p];
		best[r] = (now_s() - t0) / steps * 1e9;
	}
	__asm__ volatile("" ::"r"(p));
	free(a);
	double lo = INFINITY, lo2 = INFINITY;
	*worst = 0;
	for (int r = 0; r < 5; r++)
		*worst = fmax(*worst, best[r]);
	for (int r = 0; r < 5; r++)
		if (best[r] < lo)
			lo2 = lo, lo = best[r];
		else if (best[r] < lo2)
			lo2 = best[r];
	if (lo2 > 1.10 * lo) {
		snprintf(why, len, "host too busy for a latency figure: this test's chase gave %.0f and %.0f ns in its best two runs",
			 lo, lo2);
		return 0;
	}
	return lo;
}

/* mem_latency_ns (alpha0) within 25 % of this file's random page chase (of its
 * best run, or of its slowest: the calibration reports a median). */
static void test_calib_host_mem_latency_is_a_random_miss(void **state)
{
	(void)state;
	char why[300];
	for (int attempt = 0; attempt < 2; attempt++) {
		struct calib_model *m = run("mem_slots");
		assert_non_null(m);
		print_param(m, "mem_latency_ns");
		const struct calib_param *p = calib_model_get(m, "mem_latency_ns");
		assert_non_null(p);
		assert_non_null(strstr(p->method, "random page chase"));
		double got = p->value;
		free(m);
		double worst = 0, truth = chase_ns(&worst, why, sizeof(why));
		if (truth == 0) {
			fprintf(stderr, "SKIP: %s\n", why);
			skip();
		}
		fprintf(stderr, "  this test's random page chase: %.1f ns (slowest run %.1f); calibrated %.1f ns (%.3f)\n",
			truth, worst, got, got / truth);
		if (got >= 0.75 * truth && got <= 1.25 * worst)
			return;
	}
	fail_msg("mem_latency_ns not within 25%% of this test's random page chase in 2 attempts");
}

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_host_clock_is_the_running_clock),
		cmocka_unit_test(test_calib_host_bounds_bound),
		cmocka_unit_test(test_calib_host_mem_latency_is_a_random_miss),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
