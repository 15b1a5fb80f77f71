/* GPGPU-sim itself loads what collector/calib/gpgpusim.c writes: the harness
 * in ../shared/tools/gpgpusim-init/ (gsim_v3: 3.2.2 as released, 24f29469;
 * gsim_v4: 4.0, 90ec3399) links GPGPU-sim's own option parser and
 * configuration-time code and prints FAILED for every step the simulator
 * would abort, assert or exit on. Skipped, with the reason, where the tool is
 * absent. The fresh PoCL calibration's config is checked the same way in
 * tests/integration/test_calibrate.c (it has the calibration). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib/calib_io.h"
#include "calib/calib_model.h"
#include "calib/gpgpusim_limits.h"
#include "gsim.h"
#include "log.h"

#define NEED_GSIM(ver)                                                                                       \
	do {                                                                                                 \
		char why_[1200];                                                                             \
		if (gsim_tool(ver, why_, sizeof(why_)) < 0) {                                                \
			fprintf(stderr, "SKIP: %s\n", why_);                                                  \
			skip();                                                                              \
		}                                                                                            \
	} while (0)

static char *read_file(const char *rel, size_t *len)
{
	char path[1024];
	const char *src = getenv("PROF_SRC_DIR");
	snprintf(path, sizeof(path), "%s/%s", src ? src : ".", rel);
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *buf = calloc(1, 1 << 20);
	*len = fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void put_file(const char *dir, const char *name, const char *text)
{
	char p[600];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	assert_non_null(f);
	fputs(text, f);
	assert_int_equal(fclose(f), 0);
}

/* Write m's config for ver (with --clamp) into a fresh folder; returns the folder. */
static char *write_config(const struct calib_model *m, int ver, char *cfg_text, size_t len)
{
	char *dir = strdup("/tmp/prof-gsim-XXXXXX");
	assert_non_null(mkdtemp(dir));
	char p[600], err[2048];
	snprintf(p, sizeof(p), "%s/gpgpusim.config", dir);
	FILE *f = fopen(p, "w");
	snprintf(p, sizeof(p), "%s/config_calib_islip.icnt", dir);
	FILE *fi = fopen(p, "w");
	assert_non_null(f);
	assert_non_null(fi);
	struct calib_gpgpusim_opts o = {.version = ver, .clamp = true};
	int rc = calib_gpgpusim_write(m, &o, f, fi, err, sizeof(err));
	fclose(f);
	fclose(fi);
	if (rc)
		fail_msg("emit for %s: %s", gs_version_name(ver), err);
	size_t n = 0;
	snprintf(p, sizeof(p), "%s/gpgpusim.config", dir);
	f = fopen(p, "r");
	n = fread(cfg_text, 1, len - 1, f);
	cfg_text[n] = 0;
	fclose(f);
	return dir;
}

static void remove_dir(char *dir)
{
	char p[700];
	const char *names[] = {"gpgpusim.config", "config_calib_islip.icnt", "t.config", "t.icnt"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		unlink(p);
	}
	rmdir(dir);
	free(dir);
}

static int loads(int ver, const char *dir, const char *cfg)
{
	static char out[1 << 16];
	char why[1600];
	int bad = gsim_run(ver, dir, cfg, out, sizeof(out), why, sizeof(why));
	fprintf(stderr, "  GPGPU-sim %s on %s/%s: %s\n", gs_version_name(ver), dir, cfg, why);
	if (bad != 0)
		fprintf(stderr, "%s", out);
	assert_true(bad >= 0);
	return bad;
}

/* The seed's published Mali-T628 values (board/arndale-octa/mali-t628.json),
 * written with --clamp (the 64 B dl1 line is below GPGPU-sim's 128 B: the
 * file says CLAMPED), load in both targets with 0 FAILED steps. */
static void test_calib_gsim_mali_t628_loads(void **state)
{
	(void)state;
	NEED_GSIM(3);
	NEED_GSIM(4);
	size_t len = 0;
	char *json = read_file("board/arndale-octa/mali-t628.json", &len);
	assert_non_null(json);
	struct calib_model *m = calloc(1, sizeof(*m));
	char err[256];
	assert_int_equal(calib_model_parse_json(json, len, m, err, sizeof(err)), 0);
	free(json);
	for (int ver = 3; ver <= 4; ver++) {
		static char cfg[1 << 16];
		char *dir = write_config(m, ver, cfg, sizeof(cfg));
		assert_non_null(strstr(cfg, "# target: "));
		assert_non_null(strstr(cfg, gs_version_target(ver)));
		assert_non_null(strstr(cfg, "CLAMPED"));
		assert_int_equal(loads(ver, dir, "gpgpusim.config"), 0);
		remove_dir(dir);
	}
	free(m);
}

/* The value line of option opt in cfg, or "" */
static const char *opt_line(const char *cfg, const char *opt, char *buf, size_t len)
{
	char key[128];
	snprintf(key, sizeof(key), "\n%s ", opt);
	const char *p = strstr(cfg, key);
	buf[0] = 0;
	if (p) {
		p += strlen(key);
		snprintf(buf, len, "%.*s", (int)strcspn(p, "\n"), p);
	}
	return buf;
}

/* A CPU device (PoCL) with every timing input measured, as `agent calibrate`
 * records them on a 2-core host at a 4000 MHz running clock: the L2 becomes a
 * dl2, the DRAM miss of the random page chase becomes -dram_latency, the L2
 * latency the ROP path, the measured bandwidth the DRAM clock, and the
 * arithmetic latencies and throughputs the opcode latencies and initiation
 * intervals; both targets load it. */
static void test_calib_gsim_measured_cpu_model_loads(void **state)
{
	(void)state;
	NEED_GSIM(3);
	NEED_GSIM(4);
	struct calib_model *m = calloc(1, sizeof(*m));
	snprintf(m->device, sizeof(m->device), "cpu-znver5-AMD EPYC");
	calib_model_put(m, "compute_units", 2, "count", "staircase", 0, 0.9);
	calib_model_put(m, "compute_units_reported", 2, "count", "clGetDeviceInfo", 0, 1);
	calib_model_put(m, "host_parallel_speedup", 1.9, "x", "spin", 0, 1);
	calib_model_put(m, "clock_mhz", 4000, "MHz", "running clock: add chain", 0.01, 1);
	calib_model_put(m, "l1_line_bytes", 64, "bytes", "pair", 0, 0.95);
	calib_model_put(m, "l1_size_bytes", 49152, "bytes", "chase", 0.02, 0.9);
	calib_model_put(m, "l1_assoc", 12, "ways", "set", 0, 1);
	calib_model_put(m, "l2_size_bytes", 1048576, "bytes", "chase", 0.02, 0.9);
	calib_model_put(m, "l2_latency_cycles", 14, "cycles", "chase", 0.02, 0.9);
	calib_model_put(m, "cpu_cache_l2_ways", 16, "ways", "sysfs", 0, 1);
	calib_model_put(m, "mem_latency_ns", 110, "ns", "random page chase", 0.03, 1);
	calib_model_put(m, "dram_latency_ns", 60, "ns", "plateau", 0.4, 0.3); /* FLAGGED */
	calib_model_put(m, "peak_gbps", 20, "GB/s", "triad", 0.05, 1);
	const char *ops[] = {"add", "mul", "mad", "div"};
	double lat[] = {1, 3, 4, 13}, tput[] = {16, 8, 8, 0.5};
	for (int i = 0; i < 4; i++) {
		char n[64];
		snprintf(n, sizeof(n), "lat_float_%s_cycles", ops[i]);
		calib_model_put(m, n, lat[i] + 1, "cycles", "chain", 0.02, 1);
		snprintf(n, sizeof(n), "tput_float_%s_per_cycle_cu", ops[i]);
		calib_model_put(m, n, tput[i], "ops/cycle/CU", "chains", 0.02, 1);
		snprintf(n, sizeof(n), "lat_int_%s_cycles", ops[i]);
		calib_model_put(m, n, lat[i], "cycles", "chain", 0.02, 1);
	}
	for (int ver = 3; ver <= 4; ver++) {
		static char cfg[1 << 16];
		char v[256];
		char *dir = write_config(m, ver, cfg, sizeof(cfg));
		/* 2 cores x 1 MiB over 2 sub-partitions of 16 ways x 128 B: 512 sets */
		assert_string_equal(opt_line(cfg, "-gpgpu_cache:dl2", v, sizeof(v)),
				    ver == 3 ? "512:128:16,L:B:m:W,A:32:4,4" : "N:512:128:16,L:B:m:W:L,A:32:4,4");
		/* L2 hit 14 cycles - interconnect 8 = 6; the DRAM clock from 20 GB/s over 16 B per DRAM
		 * cycle = 1250 MHz, so the 36-cycle row miss is 115 core cycles; DRAM 110 ns x 4000 MHz
		 * = 440 - (6 + 8 + 115) = 311 */
		assert_string_equal(opt_line(cfg, gs_rop_option(ver), v, sizeof(v)), "6");
		assert_string_equal(opt_line(cfg, "-dram_latency", v, sizeof(v)), "311");
		assert_non_null(strstr(cfg, "mem_latency_ns = 110 ns x 4000.0 MHz"));
		/* fp <ADD,MAX,MUL,MAD,DIV>: measured 2,-,4,5,14; MAX the shipped 13; initiation 32 / tput */
		assert_string_equal(opt_line(cfg, "-ptx_opcode_latency_fp", v, sizeof(v)), "2,13,4,5,14");
		assert_string_equal(opt_line(cfg, "-ptx_opcode_initiation_fp", v, sizeof(v)), "2,2,4,4,64");
		assert_string_equal(opt_line(cfg, "-ptx_opcode_latency_int", v, sizeof(v)),
				    ver == 3 ? "1,13,3,4,13" : "1,13,3,4,13,21");
		assert_string_equal(opt_line(cfg, "-gpgpu_clock_domains", v, sizeof(v)), "4000.0:4000.0:4000.0:1250.0");
		assert_int_equal(loads(ver, dir, "gpgpusim.config"), 0);
		remove_dir(dir);
	}
	free(m);
}

/* The oracle is not vacuous: what issue 37 found is caught by it. The later
 * 3.x tree's five policy letters abort 3.2.2's cache parser, and 4.0 does not
 * know -rop_latency (its parser exits before any step runs). */
static void test_calib_gsim_catches_wrong_version_syntax(void **state)
{
	(void)state;
	NEED_GSIM(3);
	NEED_GSIM(4);
	struct calib_model *m = calloc(1, sizeof(*m));
	snprintf(m->device, sizeof(m->device), "test device");
	calib_model_put(m, "compute_units", 2, "count", "test", 0, 1);
	calib_model_put(m, "clock_mhz", 1000, "MHz", "test", 0, 1);
	static char cfg[1 << 16], bad[1 << 16];
	for (int ver = 3; ver <= 4; ver++) {
		char *dir = write_config(m, ver, cfg, sizeof(cfg));
		assert_int_equal(loads(ver, dir, "gpgpusim.config"), 0);
		/* the same file with the other version's spelling: 3.2.2 gets the later tree's
		 * fifth letter in dl1 ("L:L:m:N:L,A:32:8,8"), 4.0 gets 3.2.2's -rop_latency */
		const char *key = ver == 3 ? "\n-gpgpu_cache:dl1 " : "\n-gpgpu_l2_rop_latency ";
		char *p = strstr(cfg, key);
		assert_non_null(p);
		if (ver == 3) {
			p = strstr(p, ",A:32:8,8");
			assert_non_null(p);
			snprintf(bad, sizeof(bad), "%.*s:L%s", (int)(p - cfg), cfg, p);
		} else {
			snprintf(bad, sizeof(bad), "%.*s\n-rop_latency %s", (int)(p - cfg), cfg, p + strlen(key));
		}
		put_file(dir, "t.config", bad);
		assert_true(loads(ver, dir, "t.config") > 0);
		remove_dir(dir);
	}
	free(m);
}

int main(void)
{
	log_init("test", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_gsim_mali_t628_loads),
		cmocka_unit_test(test_calib_gsim_measured_cpu_model_loads),
		cmocka_unit_test(test_calib_gsim_catches_wrong_version_syntax),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
