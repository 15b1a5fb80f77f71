/* PMU event names resolved through the embedded board tables for the CPUs of
 * a cpuinfo fixture (Exynos 5420 big.LITTLE, an A55+A76 phone, x86). */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "pmu_events.h"

static size_t load(const char *name, struct cpu_desc **cpus)
{
	const char *src = getenv("PROF_SRC_DIR");
	char path[512];
	snprintf(path, sizeof(path), "%s/tests/data/cpuinfo/%s", src ? src : ".", name);
	size_t n = 0;
	assert_true(sysinfo_parse_cpuinfo(path, cpus, &n) >= 0);
	assert_true(n > 0);
	return n;
}

static void test_pmu_events_exynos_big_little(void **state)
{
	struct cpu_desc *cpus;
	size_t n = load("exynos5420-arndale-3.4.txt", &cpus);
	struct event_desc ev[EVENTS_MAX];
	size_t k;
	char err[512];
	assert_int_equal(events_parse_pmu("task-clock,L1D_CACHE_REFILL,VFP_SPEC", cpus, n, ev, EVENTS_MAX, &k, err,
					  sizeof(err)),
			 0);
	assert_int_equal(k, 3);
	assert_string_equal(ev[0].name, "task-clock");
	assert_string_equal(ev[1].name, "L1D_CACHE_REFILL");
	assert_int_equal(ev[1].type, PERF_TYPE_RAW);
	assert_int_equal(ev[1].config, 0x03);
	/* the A15 counts VFP_SPEC, the A7 does not: resolved, with a warning */
	assert_int_equal(ev[2].config, 0x75);
	char msg[256];
	struct event_desc one;
	assert_int_equal(pmu_event_lookup("VFP_SPEC", cpus, n, &one, msg, sizeof(msg)), 0);
	assert_non_null(strstr(msg, "Cortex-A7"));
	/* names no table has, and generic typos, are errors with a reason */
	assert_int_equal(events_parse_pmu("NOT_AN_EVENT", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "not in the PMU event table"));
	assert_int_equal(events_parse_pmu("cyclez", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown event 'cyclez'"));
	assert_int_equal(events_parse_pmu("CPU_CYCLES,CPU_CYCLES", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)),
			 -EINVAL);
	/* a table name and its raw number are one event (issue 30, 6) */
	assert_int_equal(events_parse_pmu("INST_RETIRED,r8", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "same raw event 0x8"));
	assert_int_equal(events_parse_pmu("r11,task-clock,CPU_CYCLES", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)),
			 -EINVAL);
	assert_int_equal(events_parse_pmu("INST_RETIRED,r11", cpus, n, ev, EVENTS_MAX, &k, err, sizeof(err)), 0);
	assert_int_equal(k, 2);
	free(cpus);
}

static void test_pmu_events_phone_and_x86(void **state)
{
	struct cpu_desc *cpus;
	size_t n = load("arm64-a55-a76.txt", &cpus);
	struct event_desc one;
	char msg[256];
	assert_int_equal(pmu_event_lookup("CPU_CYCLES", cpus, n, &one, msg, sizeof(msg)), 0);
	assert_int_equal(one.config, 0x11);
	assert_string_equal(msg, ""); /* both core types have it */
	free(cpus);
	n = load("x86_64.txt", &cpus);
	assert_int_equal(pmu_event_lookup("CPU_CYCLES", cpus, n, &one, msg, sizeof(msg)), -ENOENT);
	assert_non_null(strstr(msg, "no PMU event table"));
	free(cpus);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_events_exynos_big_little),
		cmocka_unit_test(test_pmu_events_phone_and_x86),
	};
	return cmocka_run_group_tests_name("pmu_events", tests, NULL, NULL);
}
