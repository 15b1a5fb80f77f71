/* The ARM PMU's advertised events (agent/pmu_sysfs.c) on fake sysfs trees laid out
 * as the kernel writes them: drivers/perf/arm_pmuv3.c (armv8_pmuv3_event_attrs,
 * shown by armv8pmu_event_attr_is_visible only when PMCEID0/1 has the bit; format
 * "event=0x0011" from armv8pmu_events_sysfs_show), and x86's "cpu" PMU
 * (arch/x86/events/core.c: events/cpu-cycles, with a hyphen). */
#include <errno.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "pmu_sysfs.h"

static void put(const char *root, const char *rel, const char *text)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/%s", root, rel);
	/* mkdir -p of the parent */
	for (char *p = path + strlen(root) + 1; (p = strchr(p, '/')); p++) {
		*p = 0;
		mkdir(path, 0755);
		*p = '/';
	}
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static void rm_rf(const char *root)
{
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", root);
	assert_int_equal(system(cmd), 0);
}

static struct event_desc ev(const char *name)
{
	struct event_desc e;
	assert_int_equal(events_lookup(name, &e), 0);
	return e;
}

/* QEMU's PMUv3 under -icount: PMCEID0 has SW_INCR, INST_RETIRED, CPU_CYCLES only. */
static void test_pmu_sysfs_qemu_pmuv3(void **state)
{
	char root[] = "/tmp/test_pmu_sysfs.XXXXXX";
	assert_non_null(mkdtemp(root));
	put(root, "armv8_pmuv3_0/events/sw_incr", "event=0x0000\n");
	put(root, "armv8_pmuv3_0/events/inst_retired", "event=0x0008\n");
	put(root, "armv8_pmuv3_0/events/cpu_cycles", "event=0x0011\n");
	put(root, "armv8_pmuv3_0/type", "8\n");
	put(root, "software/type", "1\n");
	char why[512];
	struct event_desc e = ev("instructions");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	e = ev("r8");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	e = ev("cycles");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	e = ev("task-clock");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	/* common events QEMU does not implement: refused, naming the PMU */
	e = ev("cache-misses");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "armv8_pmuv3_0"));
	assert_non_null(strstr(why, "0x3 "));
	e = ev("r3");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 0);
	e = ev("branch-misses");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 0);
	/* 0x40..0x3fff (VFP_SPEC 0x75) are never listed by the kernel: cannot tell */
	e = ev("r75");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	/* the extended common range 0x4000-0x403f is listed (PMCEID bits 32-63) */
	e = ev("r4004");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 0);
	rm_rf(root);
}

/* big.LITTLE: two PMUs; an event either advertises counts. x86: no ARM PMU, no check. */
static void test_pmu_sysfs_two_pmus_and_x86(void **state)
{
	char root[] = "/tmp/test_pmu_sysfs.XXXXXX";
	assert_non_null(mkdtemp(root));
	put(root, "armv8_cortex_a53/events/cpu_cycles", "event=0x0011\n");
	put(root, "armv8_cortex_a72/events/cpu_cycles", "event=0x0011\n");
	put(root, "armv8_cortex_a72/events/l1d_cache_refill", "event=0x0003\n");
	char why[512];
	struct event_desc e = ev("cache-misses");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	e = ev("r10");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 0);
	assert_non_null(strstr(why, "armv8_cortex_a53"));
	assert_non_null(strstr(why, "armv8_cortex_a72"));
	rm_rf(root);
	strcpy(root, "/tmp/test_pmu_sysfs.XXXXXX");
	assert_non_null(mkdtemp(root));
	put(root, "cpu/events/cpu-cycles", "event=0x3c\n");
	put(root, "cpu/events/instructions", "event=0xc0\n");
	e = ev("r3");
	assert_int_equal(pmu_sysfs_advertised(root, &e, why, sizeof(why)), 1);
	rm_rf(root);
	e = ev("r3"); /* no such directory at all (old kernels): nothing to check */
	assert_int_equal(pmu_sysfs_advertised("/nonexistent/devices", &e, why, sizeof(why)), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_sysfs_qemu_pmuv3),
		cmocka_unit_test(test_pmu_sysfs_two_pmus_and_x86),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
