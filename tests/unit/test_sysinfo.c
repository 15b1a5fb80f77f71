/* Hello contents: /proc/cpuinfo parsing on fixture files, Hello building. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "generated/config.h"
#include "sysinfo.h"

static void fixture(const char *name, char *out, size_t outlen)
{
	const char *src = getenv("PROF_SRC_DIR");
	snprintf(out, outlen, "%s/tests/data/cpuinfo/%s", src ? src : ".", name);
}

static struct cpu_desc *parse(const char *name, size_t *n)
{
	char path[512];
	fixture(name, path, sizeof(path));
	struct cpu_desc *c;
	int rc = sysinfo_parse_cpuinfo(path, &c, n);
	if (rc < 0)
		fail_msg("parse %s: %d", path, rc);
	assert_int_equal((size_t)rc, *n);
	return c;
}

static void test_sysinfo_cpuinfo_x86(void **state)
{
	(void)state;
	size_t n;
	struct cpu_desc *c = parse("x86_64.txt", &n);
	assert_int_equal(n, 2);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].cpu, i);
		assert_string_equal(c[i].model, "Intel(R) Core(TM) i7-8550U CPU @ 1.80GHz");
		assert_int_equal(c[i].implementer, 0);
		assert_int_equal(c[i].part, 0);
	}
	free(c);
}

/* Exynos 5420 on a 3.4 vendor kernel: global Processor line, then a block
 * per CPU: 4 x Cortex-A15 (0xc0f) + 4 x Cortex-A7 (0xc07). */
static void test_sysinfo_cpuinfo_exynos5420_arm_3_4(void **state)
{
	(void)state;
	size_t n;
	struct cpu_desc *c = parse("exynos5420-arndale-3.4.txt", &n);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].cpu, i);
		assert_int_equal(c[i].implementer, 0x41);
		if (i < 4) {
			assert_int_equal(c[i].part, 0xc0f);
			assert_string_equal(c[i].model, "ARM Cortex-A15");
		} else {
			assert_int_equal(c[i].part, 0xc07);
			assert_string_equal(c[i].model, "ARM Cortex-A7");
		}
	}
	free(c);
}

/* Mainline 3.4 ARM: per-CPU blocks only carry BogoMIPS; the one trailing
 * MIDR block (of the reading CPU) applies to every CPU. */
static void test_sysinfo_cpuinfo_arm_3_4_single_midr(void **state)
{
	(void)state;
	size_t n;
	struct cpu_desc *c = parse("arm-3.4-mainline-single-midr.txt", &n);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].cpu, i);
		assert_int_equal(c[i].implementer, 0x41);
		assert_int_equal(c[i].part, 0xc0f);
		assert_string_equal(c[i].model, "ARM Cortex-A15");
	}
	free(c);
}

static void test_sysinfo_cpuinfo_arm64_big_little(void **state)
{
	(void)state;
	size_t n;
	struct cpu_desc *c = parse("arm64-a55-a76.txt", &n);
	assert_int_equal(n, 8);
	for (size_t i = 0; i < n; i++) {
		assert_int_equal(c[i].implementer, 0x41);
		assert_int_equal(c[i].part, i < 4 ? 0xd05 : 0xd0b);
		assert_string_equal(c[i].model, i < 4 ? "ARM Cortex-A55" : "ARM Cortex-A76");
	}
	free(c);
	assert_string_equal(sysinfo_arm_core_name(0x41, 0xc0f), "Cortex-A15");
	assert_null(sysinfo_arm_core_name(0x41, 0xfff));
}

static void test_sysinfo_cpuinfo_missing_file(void **state)
{
	(void)state;
	struct cpu_desc *c;
	size_t n;
	assert_true(sysinfo_parse_cpuinfo("/nonexistent/cpuinfo", &c, &n) < 0);
	assert_null(c);
}

static void test_sysinfo_hello_build(void **state)
{
	(void)state;
	char path[512];
	fixture("arm64-a55-a76.txt", path, sizeof(path));
	struct sysinfo_opts o = {.agent_id = "board-7",
				 .target = "pid 1",
				 .boot_id = sysinfo_boot_id(),
				 .base_ns = 123,
				 .realtime_ns = 456,
				 .opencl = false,
				 .cpuinfo_path = path};
	Prof__Hello *h;
	assert_int_equal(sysinfo_hello_build(&o, &h), 0);
	assert_int_equal(h->schema_version, PROF_SCHEMA_VERSION);
	assert_string_equal(h->agent_id, "board-7");
	assert_string_equal(h->board, CONFIG_BOARD_NAME);
	assert_string_equal(h->target, "pid 1");
	assert_string_equal(h->agent_version, AGENT_VERSION);
	assert_true(h->boot_id != 0);
	assert_int_equal(h->clock_id, 1);
	assert_int_equal(h->base_ns, 123);
	assert_int_equal(h->realtime_ns, 456);
	assert_true(strlen(h->kernel_release) > 0);
	assert_true(strlen(h->hostname) > 0);
	assert_int_equal(h->n_cpus, 8);
	assert_int_equal(h->cpus[7]->part, 0xd0b);
	assert_string_equal(h->features, sysinfo_features());
	/* It is a valid Hello on the wire. */
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = h;
	uint8_t *f;
	size_t len;
	assert_int_equal(frame_encode(&env, 1 << 20, &f, &len), 0);
	uint32_t body;
	int hl = frame_get_varint(f, len, &body);
	char err[200];
	Prof__Envelope *back = envelope_decode(f + hl, body, err, sizeof(err));
	assert_non_null(back);
	assert_string_equal(back->hello->agent_id, "board-7");
	prof__envelope__free_unpacked(back, NULL);
	free(f);
	sysinfo_hello_free(h);
	/* Two sessions never share a boot_id (in practice). */
	assert_true(sysinfo_boot_id() != sysinfo_boot_id());
}

#ifdef CONFIG_AGENT_OPENCL
static void test_sysinfo_hello_opencl_devices(void **state)
{
	(void)state;
	struct sysinfo_opts o = {.target = "x", .boot_id = 1, .opencl = true};
	Prof__Hello *h;
	assert_int_equal(sysinfo_hello_build(&o, &h), 0);
	printf("# %zu OpenCL device(s)\n", h->n_gpus);
	for (size_t i = 0; i < h->n_gpus; i++) {
		printf("#   %s: %s, %u CU\n", h->gpus[i]->platform, h->gpus[i]->name, h->gpus[i]->compute_units);
		assert_true(strlen(h->gpus[i]->name) > 0);
	}
	sysinfo_hello_free(h);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sysinfo_cpuinfo_x86),
		cmocka_unit_test(test_sysinfo_cpuinfo_exynos5420_arm_3_4),
		cmocka_unit_test(test_sysinfo_cpuinfo_arm_3_4_single_midr),
		cmocka_unit_test(test_sysinfo_cpuinfo_arm64_big_little),
		cmocka_unit_test(test_sysinfo_cpuinfo_missing_file),
		cmocka_unit_test(test_sysinfo_hello_build),
#ifdef CONFIG_AGENT_OPENCL
		cmocka_unit_test(test_sysinfo_hello_opencl_devices),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
