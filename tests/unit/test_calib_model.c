/* Machine model (common/calib/calib_model.c), its JSON reader and the
 * GPGPU-sim config writer (collector/calib/), the Calibration record checks
 * (proto/validate_calib.c) and the store's calibration tables. The seed's
 * Mali-T628 values (board/arndale-octa/mali-t628.json) and a PoCL calibration
 * must give configs that GPGPU-sim 3.2.2 and 4.0 load (the limits table of
 * collector/calib/gpgpusim_limits.c, each row from the source line that
 * enforces it). */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "calib/calib_history.h"
#include "calib/calib_io.h"
#include "calib/calib_model.h"
#include "calib/gpgpusim_limits.h"
#include "log.h"
#include "store/store.h"
#include "store/store_calib.h"
#include "validate.h"
#include "validate_calib.h"

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

/* Emit for version with opts; returns the config text (and icnt text in *icnt), or NULL with err set. */
static char *emit_v(const struct calib_model *m, struct calib_gpgpusim_opts *o, char **icnt, int *rc, char *err,
		    size_t errlen)
{
	char *out = NULL, *ic = NULL;
	size_t len = 0, ilen = 0;
	FILE *f = open_memstream(&out, &len), *fi = open_memstream(&ic, &ilen);
	assert_non_null(f);
	assert_non_null(fi);
	*rc = calib_gpgpusim_write(m, o, f, fi, err, errlen);
	fclose(f);
	fclose(fi);
	if (*rc < 0) {
		assert_int_equal(len, 0); /* nothing written when refused */
		free(out);
		free(ic);
		return NULL;
	}
	if (icnt)
		*icnt = ic;
	else
		free(ic);
	return out;
}

static char *emit(const struct calib_model *m, const char *base)
{
	struct calib_gpgpusim_opts o = {.version = 3, .clamp = true, .base = base};
	char err[2048];
	int rc;
	char *out = emit_v(m, &o, NULL, &rc, err, sizeof(err));
	if (rc)
		fail_msg("emit: %s", err);
	return out;
}

/* The value line of option opt ("-opt value"), or NULL. */
static const char *opt_line(const char *cfg, const char *opt, char *buf, size_t len)
{
	char key[128];
	snprintf(key, sizeof(key), "\n%s ", opt);
	const char *p = strstr(cfg, key);
	if (!p)
		return NULL;
	p += strlen(key);
	size_t n = strcspn(p, "\n");
	snprintf(buf, len, "%.*s", (int)n, p);
	return buf;
}

static struct calib_model *mali_model(void)
{
	size_t len = 0;
	char *json = read_file("board/arndale-octa/mali-t628.json", &len);
	assert_non_null(json);
	struct calib_model *m = calloc(1, sizeof(*m));
	char err[256];
	assert_int_equal(calib_model_parse_json(json, len, m, err, sizeof(err)), 0);
	free(json);
	return m;
}

/* The seed's section-2 values map onto a config GPGPU-sim 3.2.2 and 4.0 load:
 * 73 threads with per-thread PCs become 72:4 (the seed's 128-bit vector core
 * as 4 lanes; 73:1 broke WARP_PER_CTA_MAX and generated no memory access),
 * and the 30 KB dl1 of 1 KB sets (64 B lines, 16 ways) becomes 16 sets of
 * 16 x 128 B lines (30 sets do not index; 64 B lines are below the 128 B a
 * coalesced access needs, so only --clamp writes it). */
static void test_calib_mali_t628_maps_to_a_loadable_config(void **state)
{
	(void)state;
	struct calib_model *m = mali_model();
	assert_int_equal(calib_model_value(m, "compute_units", 0), 4);
	for (int ver = 3; ver <= 4; ver++) {
		struct calib_gpgpusim_opts o = {.version = ver};
		char err[2048], *icnt = NULL, v[256];
		int rc;
		/* without --clamp: refused, the limit named */
		assert_null(emit_v(m, &o, NULL, &rc, err, sizeof(err)));
		assert_int_equal(rc, -ERANGE);
		assert_non_null(strstr(err, "-gpgpu_cache:dl1 dl1 line bytes 64"));
		assert_non_null(strstr(err, "allows at least 128"));
		o.clamp = true;
		char *cfg = emit_v(m, &o, &icnt, &rc, err, sizeof(err));
		assert_int_equal(rc, 0);
		assert_non_null(cfg);
		assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "4");
		assert_string_equal(opt_line(cfg, "-gpgpu_n_cores_per_cluster", v, sizeof(v)), "1");
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_registers", v, sizeof(v)), "2774");
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_core_pipeline", v, sizeof(v)), "72:4");
		assert_string_equal(opt_line(cfg, "-gpgpu_shmem_warp_parts", v, sizeof(v)), "1");
		assert_string_equal(opt_line(cfg, "-gpgpu_cache:dl1", v, sizeof(v)),
				    ver == 3 ? "16:128:16,L:L:m:N,A:32:8,8" : "N:16:128:16,L:L:m:N:L,A:32:8,8");
		assert_non_null(strstr(cfg, "CLAMPED: measured dl1 line bytes 64, GPGPU-sim"));
		assert_non_null(strstr(cfg, "16 x 128 x 16 = 32768 B modelled vs 30720 B published"));
		/* the seed's values are labelled published, never measured */
		assert_non_null(strstr(cfg, "# published: compute_units = 4"));
		assert_null(strstr(cfg, "# measured:"));
		assert_string_equal(opt_line(cfg, "-gpgpu_clock_domains", v, sizeof(v)), "533.0:533.0:533.0:533.0");
		assert_string_equal(opt_line(cfg, "-inter_config_file", v, sizeof(v)), "config_calib_islip.icnt");
		assert_non_null(strstr(icnt, "\nk = 6;\nn = 1;\n")); /* 4 clusters + 2 memory sub-partitions */
		assert_non_null(strstr(cfg, "mapped as the seed did"));
		assert_non_null(strstr(cfg, "128-bit vector core (seed 1.2"));
		assert_non_null(strstr(cfg, "fallback: GPGPU-sim's default 30"));
		/* every init step of the version: the limits table accepts it */
		enum gs_limit_id which = GS_NLIMITS;
		assert_int_equal(gs_check_config(cfg, icnt, ver, &which, err, sizeof(err)), 0);
		/* and the other version's syntax does not */
		assert_int_equal(gs_check_config(cfg, icnt, 7 - ver, &which, err, sizeof(err)), -ERANGE);
		assert_int_equal(which, GS_CACHE_SYNTAX);
		free(cfg);
		free(icnt);
	}
	free(m);
}

/* What `agent calibrate --quick` recorded for PoCL on this host (three runs
 * of issue 28: granularity 4096, 128 threads, clock 2596 MHz, CUs 1-4). */
static void put_pocl(struct calib_model *m, double cus, double cu_spread)
{
	snprintf(m->device, sizeof(m->device), "cpu-haswell-AMD EPYC 7B13 64-Core Processor");
	calib_model_put(m, "compute_units", cus, "count", "staircase", cu_spread, 0.9);
	calib_model_put(m, "compute_units_reported", 2, "count", "clGetDeviceInfo", 0, 1);
	calib_model_put(m, "host_parallel_speedup", 1.9, "x", "spin", 0, 1);
	calib_model_put(m, "granularity", 4096, "work-items", "branch order", 0, 1);
	calib_model_put(m, "threads_per_cu", 128, "work-items", "cliff", 0.05, 0.8);
	calib_model_put(m, "regs_per_cu", 4096, "registers", "cliff", 0.05, 0.8);
	calib_model_put(m, "l1_line_bytes", 64, "bytes", "pair", 0, 0.95);
	calib_model_put(m, "l1_size_bytes", 32768, "bytes", "chase", 0.02, 0.9);
	calib_model_put(m, "l1_assoc", 8, "ways", "set", 0, 1);
	calib_model_put(m, "clock_mhz", 2596, "MHz", "clGetDeviceInfo", 0, 1);
	calib_model_put(m, "dram_latency_ns", 110, "ns", "chase", 0.05, 0.9);
}

static void test_calib_pocl_calibration_maps_to_a_loadable_config(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	put_pocl(m, 2, 0.0);
	for (int ver = 3; ver <= 4; ver++) {
		struct calib_gpgpusim_opts o = {.version = ver, .clamp = true};
		char err[2048], *icnt = NULL, v[256];
		int rc;
		char *cfg = emit_v(m, &o, &icnt, &rc, err, sizeof(err));
		if (rc)
			fail_msg("%s", err);
		/* 128 threads stay 128 (the old writer made them 4096:4096) */
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_core_pipeline", v, sizeof(v)), "128:32");
		assert_non_null(strstr(cfg, "PoCL's serial loop"));
		assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "2");
		/* one clock for the four domains, never 2596 next to 650/650/800 */
		assert_string_equal(opt_line(cfg, "-gpgpu_clock_domains", v, sizeof(v)), "2596.0:2596.0:2596.0:2596.0");
		/* 110 ns x 2596 MHz = 286 cycles, minus the modelled path 85 + 8 + 36 = 129 */
		assert_string_equal(opt_line(cfg, "-dram_latency", v, sizeof(v)), "157");
		assert_string_equal(opt_line(cfg, "-gpgpu_cache:dl1", v, sizeof(v)),
				    ver == 3 ? "32:128:8,L:L:m:N,A:32:8,8" : "N:32:128:8,L:L:m:N:L,A:32:8,8");
		assert_int_equal(gs_check_config(cfg, icnt, ver, NULL, err, sizeof(err)), 0);
		free(cfg);
		free(icnt);
	}
	/* a FLAGGED compute-unit count (the runs disagreed) never reaches the config silently */
	struct calib_model *f = calloc(1, sizeof(*f));
	put_pocl(f, 4, 0.5);
	assert_true(calib_model_get(f, "compute_units")->flagged);
	struct calib_gpgpusim_opts o = {.version = 3, .clamp = true};
	char err[2048], v[256];
	int rc;
	char *cfg = emit_v(f, &o, NULL, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "2");
	assert_non_null(strstr(cfg, "compute_units = 4 count is FLAGGED"));
	assert_true(o.flagged_out >= 1);
	free(cfg);
	o.use_flagged = true;
	cfg = emit_v(f, &o, NULL, &rc, err, sizeof(err));
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "4");
	assert_non_null(strstr(cfg, "used because of --use-flagged"));
	free(cfg);
	free(f);
	free(m);
}

/* A FLAGGED lower bound ("no cliff up to ...: lower bound", or a value built on
 * one) is not a measurement: no option takes it, not even with --use-flagged
 * (issue 37: regs_per_cu from the lower bound of regs_per_work_item made the
 * pipeline 1536:32, 64:32 or 96:32 between runs). */
static void test_calib_gpgpusim_never_uses_a_lower_bound(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	put_pocl(m, 2, 0.0);
	calib_model_put(m, "threads_per_cu", 1536, "work-items",
			"second cliff at 128 vars; at 128 vars, the lower bound of regs_per_work_item: not a measurement",
			0.05, 0);
	calib_model_put(m, "regs_per_cu", 196608, "registers",
			"second cliff at 128 vars; at 128 vars, the lower bound of regs_per_work_item: not a measurement",
			0.05, 0);
	calib_model_put(m, "regs_per_work_item", 128, "registers",
			"no cliff of time/op up to 128 live private floats: lower bound", INFINITY, 0);
	for (int use = 0; use <= 1; use++) {
		struct calib_gpgpusim_opts o = {.version = 3, .clamp = true, .use_flagged = use};
		char err[2048], v[256];
		int rc;
		char *cfg = emit_v(m, &o, NULL, &rc, err, sizeof(err));
		assert_int_equal(rc, 0);
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_registers", v, sizeof(v)), "16384");
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_core_pipeline", v, sizeof(v)), "1536:32"); /* 3.2.2's most */
		assert_non_null(strstr(cfg, "fallback: T = 1536, the most the version allows"));
		assert_non_null(strstr(cfg, "is a FLAGGED lower bound"));
		assert_null(strstr(cfg, "measured: T from"));
		free(cfg);
	}
	free(m);
}

/* Stability across runs: a key that moved beyond its spread against the recent
 * calibrations is FLAGGED (so the config falls back, said so); keys within
 * their spread, and keys the earlier runs did not have, are left alone. */
static void test_calib_history_flags_moved_keys(void **state)
{
	(void)state;
	struct calib_model *prev[3], *cur = calloc(1, sizeof(*cur));
	double cus[3] = {2, 2, 2}, lat[3] = {110, 118, 104};
	for (int i = 0; i < 3; i++) {
		prev[i] = calloc(1, sizeof(*prev[i]));
		put_pocl(prev[i], cus[i], 0.0);
		calib_model_put(prev[i], "mem_latency_ns", lat[i], "ns", "random page chase", 0.03, 1);
		calib_model_put(prev[i], "l1_assoc", 12, "ways", "set", 0, 1);
	}
	put_pocl(cur, 4, 0.0); /* the staircase read 4 this time */
	calib_model_put(cur, "mem_latency_ns", 116, "ns", "random page chase", 0.03, 1); /* within spread */
	calib_model_put(cur, "l1_assoc", 6, "ways", "set", 0, 1);			/* moved */
	calib_model_put(cur, "l2_size_bytes", 1 << 20, "bytes", "chase", 0.02, 0.9);	/* new key */
	assert_false(calib_model_get(cur, "compute_units")->flagged);
	const struct calib_model *const pv[3] = {prev[0], prev[1], prev[2]};
	assert_int_equal(calib_history_flag_moved(cur, pv, 3), 2);
	const struct calib_param *cu = calib_model_get(cur, "compute_units");
	assert_true(cu->flagged);
	assert_non_null(strstr(cu->method, "MOVED: 4 here vs 2 (2..2) in the 3 previous calibrations"));
	assert_true(calib_model_get(cur, "l1_assoc")->flagged);
	assert_false(calib_model_get(cur, "mem_latency_ns")->flagged);
	assert_false(calib_model_get(cur, "l2_size_bytes")->flagged);
	/* the moved count never reaches the config: the reported CUs stand in, said so */
	struct calib_gpgpusim_opts o = {.version = 3, .clamp = true};
	char err[2048], v[256];
	int rc;
	char *cfg = emit_v(cur, &o, NULL, &rc, err, sizeof(err));
	assert_int_equal(rc, 0);
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "2");
	assert_non_null(strstr(cfg, "compute_units = 4 count is FLAGGED"));
	free(cfg);
	/* no history: nothing flagged */
	assert_int_equal(calib_history_flag_moved(prev[0], NULL, 0), 0);
	for (int i = 0; i < 3; i++)
		free(prev[i]);
	free(cur);
}

/* Out-of-range measurements: refused with the limit named, or clamped with
 * "measured X, GPGPU-sim allows at most Y". */
static void test_calib_gpgpusim_refuses_or_clamps(void **state)
{
	(void)state;
	struct {
		const char *param;
		double value;
		int version;
		const char *refusal;
		const char *pipeline; /* with --clamp */
	} cases[] = {
		{"granularity", 64, 3, "warp size 64: GPGPU-sim 3.2.2 allows at most 32", "1024:32"},
		{"threads_per_cu", 4096, 3, "threads per core 4096: GPGPU-sim 3.2.2 allows at most 2048", "1536:32"},
		{"threads_per_cu", 4096, 4, "threads per core 4096: GPGPU-sim 4.0 allows at most 2048", "2048:32"},
		{"threads_per_cu", 1600, 3, "warps per core 50: GPGPU-sim 3.2.2 allows at most 48", "1536:32"},
		{"threads_per_cu", 1600, 4, NULL, "1600:32"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct calib_model *m = calloc(1, sizeof(*m));
		snprintf(m->device, sizeof(m->device), "some GPU");
		calib_model_put(m, "granularity", 32, "work-items", "t", 0, 1);
		calib_model_put(m, "threads_per_cu", 1024, "work-items", "t", 0, 1);
		calib_model_put(m, "l1_line_bytes", 128, "bytes", "t", 0, 1);
		calib_model_put(m, cases[i].param, cases[i].value, "x", "t", 0, 1);
		struct calib_gpgpusim_opts o = {.version = cases[i].version};
		char err[2048], v[64], *icnt = NULL;
		int rc;
		char *cfg = emit_v(m, &o, NULL, &rc, err, sizeof(err));
		if (cases[i].refusal) {
			assert_null(cfg);
			assert_int_equal(rc, -ERANGE);
			if (!strstr(err, cases[i].refusal))
				fail_msg("case %zu: %s", i, err);
		} else {
			assert_int_equal(rc, 0);
			free(cfg);
		}
		o.clamp = true;
		cfg = emit_v(m, &o, &icnt, &rc, err, sizeof(err));
		assert_int_equal(rc, 0);
		assert_string_equal(opt_line(cfg, "-gpgpu_shader_core_pipeline", v, sizeof(v)), cases[i].pipeline);
		if (cases[i].refusal)
			assert_non_null(strstr(cfg, "CLAMPED: measured"));
		assert_int_equal(gs_check_config(cfg, icnt, cases[i].version, NULL, err, sizeof(err)), 0);
		free(cfg);
		free(icnt);
		free(m);
	}
}

/* A config that loads, for editing one value at a time. */
static const char good3[] = "-gpgpu_n_clusters 2\n-gpgpu_n_cores_per_cluster 1\n-gpgpu_n_mem 2\n"
			    "-gpgpu_n_sub_partition_per_mchannel 1\n-gpgpu_clock_domains 500.0:500.0:500.0:500.0\n"
			    "-gpgpu_shader_registers 16384\n-gpgpu_shader_core_pipeline 1024:32\n-gpgpu_shader_cta 8\n"
			    "-gpgpu_simd_model 1\n-gpgpu_shmem_warp_parts 1\n"
			    "-gpgpu_cache:dl1 32:128:4,L:L:m:N,A:32:8,8\n-gpgpu_cache:dl2 none\n"
			    "-gpgpu_cache:il1 4:128:4,L:R:f:N,A:2:32,4\n-gpgpu_tex_cache:l1 8:128:4,L:R:m:N,F:128:4,128:2\n"
			    "-gpgpu_const_cache:l1 64:64:2,L:R:f:N,A:2:32,4\n-network_mode 1\n"
			    "-inter_config_file x.icnt\n-gpgpu_dram_timing_opt 4:2:8:12:21:13:34:9:4:5:13:1:0:0\n"
			    "-gpgpu_n_mem_per_ctrlr 1\n-gpgpu_dram_buswidth 4\n-gpgpu_dram_burst_length 4\n"
			    "-dram_latency 30\n";
/* 3.2.2 as released registers -rop_latency; 4.0 renamed it -gpgpu_l2_rop_latency */
static const char good3_rop[] = "-rop_latency 85\n";
static const char good4_caches[] = "-gpgpu_l2_rop_latency 85\n-gpgpu_cache:dl1 N:32:128:4,L:L:m:N:L,A:32:8,8\n"
				   "-gpgpu_cache:il1 N:4:128:4,L:R:f:N:L,A:2:32,4\n"
				   "-gpgpu_tex_cache:l1 N:8:128:4,L:R:m:N:L,F:128:4,128:2\n"
				   "-gpgpu_const_cache:l1 N:64:64:2,L:R:f:N:L,A:2:32,4\n";
static const char icnt4[] = "topology = fly;\nk = 4;\nn = 1;\n";

/* good3 (with the 4.x cache strings for version 4) and option name set to
 * value (appended: the last one counts). */
static char *with(int version, const char *name, const char *value)
{
	size_t len = sizeof(good3) + sizeof(good3_rop) + sizeof(good4_caches) + 256;
	char *s = malloc(len);
	snprintf(s, len, "%s%s%s %s\n", good3, version == 4 ? good4_caches : good3_rop, name, value);
	return s;
}

/* Every row of the limits table, value by value: the last legal value passes,
 * the first illegal one is refused with that row's id. */
static void test_gpgpusim_limits_table_value_by_value(void **state)
{
	(void)state;
	char err[2048];
	enum gs_limit_id which;
	char *g3 = with(3, "-gpgpu_shader_cta", "8");
	assert_int_equal(gs_check_config(g3, icnt4, 3, &which, err, sizeof(err)), 0);
	struct {
		const char *name, *ok, *bad;
		int version;
		enum gs_limit_id id;
	} rows[] = {
		{"-gpgpu_shader_core_pipeline", "1536:32", "2080:32", 3, GS_THREADS_MAX},
		{"-gpgpu_shader_core_pipeline", "2048:32", "2080:32", 4, GS_THREADS_MAX},
		{"-gpgpu_shader_core_pipeline", "128:32", "130:32", 3, GS_THREADS_MULTIPLE},
		{"-gpgpu_shader_core_pipeline", "128:32", "4096:4096", 3, GS_WARP_MAX},
		{"-gpgpu_shader_core_pipeline", "64:32", "64:64", 4, GS_WARP_MAX},
		{"-gpgpu_shader_core_pipeline", "48:1", "49:1", 3, GS_WARPS_MAX},
		{"-gpgpu_shader_core_pipeline", "64:1", "65:1", 4, GS_WARPS_MAX},
		{"-gpgpu_shader_core_pipeline", "1536:32", "1568:32", 3, GS_WARPS_MAX},
		{"-gpgpu_shmem_warp_parts", "32", "64", 3, GS_SUBWARP_MIN},
		{"-gpgpu_shader_cta", "32", "33", 3, GS_CTA_MAX},
		{"-gpgpu_shader_cta", "32", "33", 4, GS_CTA_MAX},
		{"-gpgpu_simd_model", "1", "2", 3, GS_SIMD_MODEL},
		/* 3.2.2 as released: four policy letters (its GTX480 config); the fifth (set index) is the
		 * later 3.x tree's, and the release's sscanf stops short of the MSHR fields */
		{"-gpgpu_cache:dl1", "32:128:4,L:L:m:N,A:32:8,8", "32:128:4,L:L:m:N:L,A:32:8,8", 3, GS_CACHE_SYNTAX},
		{"-gpgpu_cache:dl1", "32:128:4,L:L:m:N,A:32:8,8", "32:128:4,L:L:m:N,A:32:8", 3, GS_CACHE_SYNTAX},
		{"-gpgpu_cache:dl1", "N:32:128:4,L:L:m:N:L,A:32:8,8", "32:128:4,L:L:m:N:L,A:32:8,8", 4, GS_CACHE_SYNTAX},
		{"-gpgpu_cache:dl1", "N:32:128:4,L:L:m:N:L,A:32:8,8", "N:32:128:4,L:L:m:N,A:32:8,8", 4, GS_CACHE_SYNTAX},
		{"-gpgpu_cache:dl2", "64:128:8,L:B:m:W,A:32:4,4", "64:128:8,L:B:f:W,A:32:4,4", 3, GS_CACHE_SYNTAX},
		{"-gpgpu_cache:dl1", "32:128:16,L:L:m:N,A:32:8,8", "30:128:16,L:L:m:N,A:32:8,8", 3, GS_CACHE_SETS_POW2},
		{"-gpgpu_cache:il1", "4:128:4,L:R:f:N,A:2:32,4", "4:96:4,L:R:f:N,A:2:32,4", 3, GS_CACHE_LINE_POW2},
		{"-gpgpu_cache:dl1", "32:128:4,L:L:m:N,A:32:8,8", "32:64:4,L:L:m:N,A:32:8,8", 3, GS_DL1_LINE_MIN},
		{"-gpgpu_cache:dl1", "S:32:128:4,L:L:m:N:L,A:32:8,8", "S:32:256:4,L:L:m:N:L,A:32:8,8", 4, GS_DL1_LINE_MIN},
		{"-gpgpu_n_mem", "2", "3", 3, GS_N_MEM_POW2},
		{"-network_mode", "1", "2", 3, GS_ICNT_FILE},
		{"-gpgpu_n_clusters", "2", "3", 3, GS_ICNT_NODES}, /* k = 4 holds 2 + 2, not 3 + 2 */
		{"-gpgpu_clock_domains", "1.0:1.0:1.0:1.0", "533.0:0:650.0:800.0", 3, GS_CLOCKS},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char *ok = with(rows[i].version, rows[i].name, rows[i].ok),
		     *bad = with(rows[i].version, rows[i].name, rows[i].bad);
		if (gs_check_config(ok, icnt4, rows[i].version, &which, err, sizeof(err)) != 0)
			fail_msg("row %zu: %s %s refused: %s", i, rows[i].name, rows[i].ok, err);
		which = GS_NLIMITS;
		assert_int_equal(gs_check_config(bad, icnt4, rows[i].version, &which, err, sizeof(err)), -ERANGE);
		if (which != rows[i].id)
			fail_msg("row %zu: %s %s: limit %d, want %d (%s)", i, rows[i].name, rows[i].bad, which, rows[i].id, err);
		/* the message names the version's source */
		assert_non_null(strstr(err, rows[i].version == 4 ? "GPGPU-sim 4.0: src/" : "GPGPU-sim 3.2.2: src/"));
		free(ok);
		free(bad);
	}
	/* an option the version does not register: its parser exits (4.0 renamed -rop_latency) */
	char *r4 = with(4, "-rop_latency", "85"), *r3 = with(3, "-gpgpu_l2_rop_latency", "85");
	assert_int_equal(gs_check_config(r4, icnt4, 4, &which, err, sizeof(err)), -ERANGE);
	assert_int_equal(which, GS_OPTION_NAME);
	assert_non_null(strstr(err, "-rop_latency is not an option of GPGPU-sim 4.0"));
	assert_int_equal(gs_check_config(r3, icnt4, 3, &which, err, sizeof(err)), -ERANGE);
	assert_int_equal(which, GS_OPTION_NAME);
	assert_int_equal(gs_check_config(good3, icnt4, 3, &which, err, sizeof(err)), -ERANGE); /* no ROP latency */
	assert_int_equal(which, GS_REQUIRED);
	free(r4);
	free(r3);
	/* the interconnect file must exist; every option that matters must be written */
	assert_int_equal(gs_check_config(g3, NULL, 3, &which, err, sizeof(err)), -ERANGE);
	free(g3);
	assert_int_equal(which, GS_ICNT_FILE);
	assert_int_equal(gs_check_config("-gpgpu_n_clusters 2\n", icnt4, 3, &which, err, sizeof(err)), -ERANGE);
	assert_int_equal(which, GS_REQUIRED);
	assert_non_null(strstr(err, "is not written"));
	/* each row cites a source for both versions */
	for (int id = 0; id < GS_NLIMITS; id++) {
		assert_non_null(strstr(gs_limit(id)->source3, "src/"));
		assert_non_null(strstr(gs_limit(id)->source4, "src/"));
	}
}

static void test_calib_gpgpusim_base_file_is_kept(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	calib_model_put(m, "compute_units", 8, "count", "test", 0, 1);
	const char base[] = "# my base\n-gpgpu_n_clusters 15\n-gpgpu_ptx_force_max_capability 20 # cap\n"
			    "-gpgpu_clock_domains 700.0:700.0:700.0:924.0\n";
	char *cfg = emit(m, base);
	char v[256];
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "8");
	assert_string_equal(opt_line(cfg, "-gpgpu_ptx_force_max_capability", v, sizeof(v)), "20");
	/* clock_mhz not measured: the base's four clocks, not mixed */
	assert_string_equal(opt_line(cfg, "-gpgpu_clock_domains", v, sizeof(v)), "700.0:700.0:700.0:924.0");
	assert_non_null(strstr(cfg, "fallback: 16384 (the QuadroFX5800 example's); regs_per_cu not measured"));
	free(cfg);
	/* a base whose cache string is of the wrong version is refused */
	struct calib_gpgpusim_opts o = {.version = 4, .clamp = true,
					.base = "-gpgpu_cache:dl1PrefL1 32:128:4,L:L:m:N,A:32:8,8\n"};
	char err[2048];
	int rc;
	assert_null(emit_v(m, &o, NULL, &rc, err, sizeof(err)));
	assert_int_equal(rc, -ERANGE);
	assert_non_null(strstr(err, "with the --base file's options: -gpgpu_cache:dl1PrefL1"));
	free(m);
}

static void test_calib_model_json_round_trip(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m)), *back = calloc(1, sizeof(*back));
	snprintf(m->device, sizeof(m->device), "dev \"quoted\"\n");
	calib_model_put(m, "l1_size_bytes", 49152, "bytes", "chase", 0.02, 0.9);
	calib_model_put(m, "l1_line_bytes", 64, "bytes", "pair", 0, 0.95);
	calib_model_put(m, "l1_assoc", 12, "ways", "set", 0, 1);
	calib_model_put(m, "l2_size_bytes", 1048576, "bytes", "chase", 0.3, 0.9); /* spread > 15%: flagged */
	calib_model_put(m, "peak_gflops", 120.5, "GFLOP/s", "mad", 0.01, 1);
	calib_model_put(m, "peak_gbps", 20, "GB/s", "triad", 0.01, 1);
	calib_model_put(m, "mem_latency_cycles", 300.4, "cycles", "chase", 0.01, 1);
	calib_model_put(m, "mem_issue_slots", 10, "chains", "sat", 0, 0.3); /* confidence < 0.5: flagged */
	assert_true(calib_model_get(m, "l2_size_bytes")->flagged);
	assert_true(calib_model_get(m, "mem_issue_slots")->flagged);
	assert_false(calib_model_get(m, "l1_size_bytes")->flagged);
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_int_equal(calib_model_write_json(m, f), 0);
	fclose(f);
	assert_non_null(strstr(out, "\"cache_levels\": [\n    {\"level\": 1, \"size_bytes\": 49152, \"line_bytes\": 64, \"assoc\": 12"));
	assert_non_null(strstr(out, "{\"level\": 2, \"size_bytes\": 1048576, \"line_bytes\": 64, \"assoc\": null"));
	assert_non_null(strstr(out, "\"ridge_flops_per_byte\": 6.025"));
	assert_non_null(strstr(out, "\"alpha0\": 300"));
	char err[256];
	assert_int_equal(calib_model_parse_json(out, len, back, err, sizeof(err)), 0);
	assert_string_equal(back->device, m->device);
	assert_int_equal(back->nparams, m->nparams);
	for (size_t i = 0; i < m->nparams; i++) {
		const struct calib_param *a = &m->params[i], *b = calib_model_get(back, a->name);
		assert_non_null(b);
		assert_true(fabs(a->value - b->value) <= 1e-5 * fabs(a->value));
		assert_string_equal(a->unit, b->unit);
		assert_string_equal(a->method, b->method);
		assert_true(a->flagged == b->flagged);
	}
	free(out);
	assert_int_equal(calib_model_parse_json("{\"params\": {\"x\": {\"unit\": \"s\"}}}", 33, back, err, sizeof(err)),
			 -EINVAL);
	assert_non_null(strstr(err, "no value"));
	assert_int_equal(calib_model_parse_json("{\"params\": ", 11, back, err, sizeof(err)), -EINVAL);
	free(m);
	free(back);
}

static void test_calib_validate_rejects_bad_records(void **state)
{
	(void)state;
	Prof__CalibParam p = PROF__CALIB_PARAM__INIT, *pp[] = {&p};
	Prof__CalibCurve k = PROF__CALIB_CURVE__INIT, *kp[] = {&k};
	Prof__Calibration c = PROF__CALIBRATION__INIT;
	double x[] = {1, 2}, y[] = {3, 4};
	p.name = "compute_units";
	p.value = 4;
	p.confidence = 1;
	k.name = "curve";
	k.n_x = k.n_y = 2;
	k.x = x;
	k.y = y;
	c.n_params = 1;
	c.params = pp;
	c.n_curves = 1;
	c.curves = kp;
	char err[256];
	assert_int_equal(validate_calibration(&c, err, sizeof(err)), 0);
	p.value = NAN;
	assert_int_equal(validate_calibration(&c, err, sizeof(err)), -EINVAL);
	p.value = 4;
	p.confidence = 1.5;
	assert_int_equal(validate_calibration(&c, err, sizeof(err)), -EINVAL);
	p.confidence = 1;
	p.name = "";
	assert_int_equal(validate_calibration(&c, err, sizeof(err)), -EINVAL);
	p.name = "ok";
	k.n_y = 1;
	assert_int_equal(validate_calibration(&c, err, sizeof(err)), -EINVAL);
	k.n_y = 2;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
	env.calibration = &c;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL); /* seq 0 */
	env.seq = 3;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
}

static int collect(const struct store_calib_param_row *r, void *arg)
{
	struct calib_model *m = arg;
	calib_model_put(m, r->name, r->value, r->unit, r->method, r->spread, r->confidence);
	return 0;
}

static void test_calib_store_keeps_params_and_curves(void **state)
{
	(void)state;
	log_init("test", LOG_LEVEL_WARN);
	struct store *s;
	assert_int_equal(store_open(":memory:", 0, &s), 0);
	Prof__Hello h = PROF__HELLO__INIT;
	h.agent_id = "a";
	h.boot_id = 1;
	h.schema_version = 1;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(s, &h, "peer", &sid, &max_seq, NULL), 0);
	Prof__CalibParam p = PROF__CALIB_PARAM__INIT, *pp[] = {&p};
	p.name = "l1_line_bytes";
	p.value = 64;
	p.unit = "bytes";
	p.method = "pair";
	p.confidence = 0.9;
	Prof__CalibCurve k = PROF__CALIB_CURVE__INIT, *kp[] = {&k};
	double x[] = {4, 64}, y[] = {6, 10};
	k.name = "pair";
	k.n_x = k.n_y = 2;
	k.x = x;
	k.y = y;
	Prof__Calibration c = PROF__CALIBRATION__INIT;
	c.device = "dev";
	c.benchmark = "cache";
	c.n_params = 1;
	c.params = pp;
	c.n_curves = 1;
	c.curves = kp;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CALIBRATION;
	env.calibration = &c;
	env.seq = 1;
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_put_record(s, sid, &env, 100), 0); /* exactly once */
	assert_int_equal(store_commit(s), 0);
	struct calib_model *m = calloc(1, sizeof(*m));
	assert_int_equal(store_calib_params(s, sid, collect, m), 1);
	assert_int_equal(calib_model_value(m, "l1_line_bytes", 0), 64);
	free(m);
	store_close(s);
}

/* A parameter whose repetitions spread by 688 % cannot claim confidence 1. */
static void test_calib_model_large_spread_bounds_confidence(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(calib_model_put(m, "peak_gbps", 12.5, "GB/s", "test", 6.88, 1.0), 0);
	assert_int_equal(calib_model_put(m, "clock_mhz", 2600, "MHz", "test", 0.01, 1.0), 0);
	const struct calib_param *p = calib_model_get(m, "peak_gbps");
	assert_non_null(p);
	assert_true(p->confidence <= 1.0 / 7.88 + 1e-12);
	assert_true(p->flagged);
	p = calib_model_get(m, "clock_mhz");
	assert_true(p->confidence > 0.98 && p->confidence < 1.0);
	assert_false(p->flagged);
	free(m);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_calib_mali_t628_maps_to_a_loadable_config),
		cmocka_unit_test(test_calib_pocl_calibration_maps_to_a_loadable_config),
		cmocka_unit_test(test_calib_gpgpusim_refuses_or_clamps),
		cmocka_unit_test(test_calib_gpgpusim_never_uses_a_lower_bound),
		cmocka_unit_test(test_calib_history_flags_moved_keys),
		cmocka_unit_test(test_gpgpusim_limits_table_value_by_value),
		cmocka_unit_test(test_calib_gpgpusim_base_file_is_kept),
		cmocka_unit_test(test_calib_model_json_round_trip),
		cmocka_unit_test(test_calib_validate_rejects_bad_records),
		cmocka_unit_test(test_calib_store_keeps_params_and_curves),
		cmocka_unit_test(test_calib_model_large_spread_bounds_confidence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
