/* PMU event tables (board/<name>/pmu-events) and the choice of table per
 * CPU from /proc/cpuinfo fixtures: Exynos 5420 (A15 + A7) and an arm64
 * big.LITTLE phone (A55 + A76). */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pmu_table.h"
#include "sysinfo.h"

static void src_path(const char *rel, char *out, size_t len)
{
	const char *src = getenv("PROF_SRC_DIR");
	snprintf(out, len, "%s/%s", src ? src : ".", rel);
}

static void load(const char *board, struct pmu_table *t)
{
	char path[512], err[256];
	snprintf(path, sizeof(path), "board/%s/pmu-events", board);
	char full[600];
	src_path(path, full, sizeof(full));
	int rc = pmu_table_parse(full, t, err, sizeof(err));
	if (rc < 0)
		fail_msg("%s", err);
}

static struct cpu_desc *cpuinfo(const char *name, size_t *n)
{
	char rel[256], path[512];
	snprintf(rel, sizeof(rel), "tests/data/cpuinfo/%s", name);
	src_path(rel, path, sizeof(path));
	struct cpu_desc *c = NULL;
	assert_true(sysinfo_parse_cpuinfo(path, &c, n) > 0);
	return c;
}

static void test_pmu_table_exynos5420_big_little(void **state)
{
	struct pmu_table t;
	load("arndale-octa", &t);
	size_t n;
	struct cpu_desc *c = cpuinfo("exynos5420-arndale-3.4.txt", &n);
	assert_int_equal(n, 8);
	const struct pmu_core *per[8];
	assert_int_equal(pmu_select(&t, c, n, per), 2);
	for (size_t i = 0; i < 4; i++)
		assert_string_equal(per[i]->name, "Cortex-A15");
	for (size_t i = 4; i < 8; i++)
		assert_string_equal(per[i]->name, "Cortex-A7");
	uint64_t raw;
	assert_int_equal(pmu_core_event(per[0], "L1D_CACHE_REFILL", &raw), 0);
	assert_int_equal(raw, 0x03);
	assert_int_equal(pmu_core_event(per[0], "VFP_SPEC", &raw), 0);
	assert_int_equal(raw, 0x75);
	assert_int_equal(pmu_core_event(per[4], "INST_RETIRED", &raw), 0);
	assert_int_equal(raw, 0x08);
	assert_int_equal(pmu_core_event(per[4], "VFP_SPEC", &raw), -ENOTSUP); /* A7 lacks it */
	assert_int_equal(pmu_core_event(per[4], "ASE_SPEC", &raw), -ENOTSUP);
	assert_int_equal(pmu_core_event(per[4], "NO_SUCH", &raw), -ENOENT);
	free(c);
}

static void test_pmu_table_android_a55_a76(void **state)
{
	struct pmu_table t;
	load("android-arm64", &t);
	size_t n;
	struct cpu_desc *c = cpuinfo("arm64-a55-a76.txt", &n);
	assert_int_equal(n, 8);
	const struct pmu_core *per[8];
	assert_int_equal(pmu_select(&t, c, n, per), 2);
	int a55 = 0, a76 = 0;
	for (size_t i = 0; i < n; i++) {
		assert_non_null(per[i]);
		a55 += strcmp(per[i]->name, "Cortex-A55") == 0;
		a76 += strcmp(per[i]->name, "Cortex-A76") == 0;
	}
	assert_int_equal(a55, 4);
	assert_int_equal(a76, 4);
	uint64_t raw;
	assert_int_equal(pmu_core_event(per[n - 1], "L2D_CACHE_REFILL", &raw), 0);
	assert_int_equal(raw, 0x17);
	const struct pmu_core *a53 = pmu_table_core(&t, 0x41, 0xd03);
	assert_non_null(a53);
	assert_int_equal(pmu_core_event(a53, "ASE_SPEC", &raw), -ENOTSUP);
	free(c);
}

/* Issue 30: the cores users have, by MIDR part (tools/perf/pmu-events/arch/arm64/mapfile.csv),
 * and whether they count VFP_SPEC/ASE_SPEC (<core>/instruction.json lists them or not). */
static void test_pmu_table_arm64_cores(void **state)
{
	static const struct {
		const char *name;
		uint32_t part;
		bool fp;
	} want[] = {
		{"Cortex-A53", 0xd03, false}, {"Cortex-A55", 0xd05, true}, {"Cortex-A57", 0xd07, true},
		{"Cortex-A72", 0xd08, true},  {"Cortex-A73", 0xd09, true}, {"Cortex-A75", 0xd0a, true},
		{"Cortex-A76", 0xd0b, true},  {"Cortex-A77", 0xd0d, true}, {"Cortex-A78", 0xd41, true},
		{"Cortex-X1", 0xd44, true},
	};
	struct pmu_table t;
	load("android-arm64", &t);
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const struct pmu_core *c = pmu_table_core(&t, 0x41, want[i].part);
		assert_non_null(c);
		assert_string_equal(c->name, want[i].name);
		uint64_t raw;
		assert_int_equal(pmu_core_event(c, "CPU_CYCLES", &raw), 0);
		assert_int_equal(raw, 0x11);
		assert_int_equal(pmu_core_event(c, "INST_RETIRED", &raw), 0);
		assert_int_equal(raw, 0x08);
		assert_int_equal(pmu_core_event(c, "L2D_CACHE_REFILL", &raw), 0);
		assert_int_equal(raw, 0x17);
		assert_int_equal(pmu_core_event(c, "VFP_SPEC", &raw), want[i].fp ? 0 : -ENOTSUP);
		assert_int_equal(pmu_core_event(c, "ASE_SPEC", &raw), want[i].fp ? 0 : -ENOTSUP);
	}
	load("arndale-octa", &t);
	assert_non_null(pmu_table_core(&t, 0x41, 0xc0f)); /* A15 */
	assert_non_null(pmu_table_core(&t, 0x41, 0xc07)); /* A7 */
}

static void test_pmu_table_x86_has_no_arm_core(void **state)
{
	struct pmu_table t;
	load("android-arm64", &t);
	size_t n;
	struct cpu_desc *c = cpuinfo("x86_64.txt", &n);
	const struct pmu_core **per = calloc(n, sizeof(*per));
	assert_int_equal(pmu_select(&t, c, n, per), 0); /* generic PERF_TYPE_HARDWARE events instead */
	free(per);
	free(c);
}

static void test_pmu_table_rejects_bad_lines(void **state)
{
	char path[] = "/tmp/prof-pmu-XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	const char *bad[] = {
		"CPU_CYCLES 0x11\n",                               /* before any core */
		"core A 0x41\n",                                   /* missing part */
		"core A 0x41 0xc0f\nCPU_CYCLES zz\n",              /* bad number */
		"core A 0x41 0xc0f\nCPU_CYCLES 0x11\nCPU_CYCLES 0x11\n", /* twice */
		"# only a comment\n",                              /* no core */
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		FILE *f = fopen(path, "w");
		fputs(bad[i], f);
		fclose(f);
		struct pmu_table t;
		char err[256] = "";
		assert_int_equal(pmu_table_parse(path, &t, err, sizeof(err)), -EINVAL);
		assert_non_null(strstr(err, path));
	}
	close(fd);
	unlink(path);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_pmu_table_exynos5420_big_little),
		cmocka_unit_test(test_pmu_table_android_a55_a76),
		cmocka_unit_test(test_pmu_table_arm64_cores),
		cmocka_unit_test(test_pmu_table_x86_has_no_arm_core),
		cmocka_unit_test(test_pmu_table_rejects_bad_lines),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
