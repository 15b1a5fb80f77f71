/* Machine model (common/calib/calib_model.c), its JSON reader and the
 * GPGPU-sim config writer (collector/calib/), the Calibration record checks
 * (proto/validate_calib.c) and the store's calibration tables. The seed's
 * Mali-T628 values (board/arndale-octa/mali-t628.json) must give the seed's
 * Table 2 settings. */
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

#include "calib/calib_io.h"
#include "calib/calib_model.h"
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

static char *emit(const struct calib_model *m, const char *base)
{
	char *out = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&out, &len);
	assert_non_null(f);
	assert_int_equal(calib_gpgpusim_write(m, base, f), 0);
	fclose(f);
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

static void test_calib_mali_t628_gives_seed_table2(void **state)
{
	(void)state;
	size_t len = 0;
	char *json = read_file("board/arndale-octa/mali-t628.json", &len);
	assert_non_null(json);
	struct calib_model *m = calloc(1, sizeof(*m));
	char err[256];
	assert_int_equal(calib_model_parse_json(json, len, m, err, sizeof(err)), 0);
	free(json);
	assert_int_equal(calib_model_value(m, "compute_units", 0), 4);
	char *cfg = emit(m, NULL);
	char v[256];
	/* Table 2 (from the seed's section 2 values): 4 clusters of 1 core, 2774 registers,
	 * 73 threads per core with warp (granularity) 1, dl1 = 30 sets x 64 B lines x 16 ways
	 * (1 KB set, ~30 KB), core clock 533 MHz. */
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "4");
	assert_string_equal(opt_line(cfg, "-gpgpu_n_cores_per_cluster", v, sizeof(v)), "1");
	assert_string_equal(opt_line(cfg, "-gpgpu_shader_registers", v, sizeof(v)), "2774");
	assert_string_equal(opt_line(cfg, "-gpgpu_shader_core_pipeline", v, sizeof(v)), "73:1");
	assert_string_equal(opt_line(cfg, "-gpgpu_cache:dl1", v, sizeof(v)), "30:64:16,L:L:m:N,A:32:8,8");
	assert_string_equal(opt_line(cfg, "-gpgpu_clock_domains", v, sizeof(v)), "533.0:650.0:650.0:800.0");
	/* unknown values keep the base config's, and say so */
	assert_string_equal(opt_line(cfg, "-gpgpu_cache:dl2", v, sizeof(v)), "none");
	assert_non_null(strstr(cfg, "kept from the base config: the L2 set structure is not measured"));
	assert_non_null(strstr(cfg, "kept from the base config: dram_latency_cycles not measured"));
	/* every option carries its source */
	assert_non_null(strstr(cfg, "# compute_units = 4 count (seed 2.2"));
	free(cfg);
	free(m);
}

static void test_calib_gpgpusim_base_file_is_kept(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	calib_model_put(m, "compute_units", 8, "count", "test", 0, 1);
	const char base[] = "# my base\n-gpgpu_n_clusters 15\n-gpgpu_n_mem 6 # six\n-gpgpu_shader_registers 32768\n";
	char *cfg = emit(m, base);
	char v[256];
	assert_string_equal(opt_line(cfg, "-gpgpu_n_clusters", v, sizeof(v)), "8");
	assert_string_equal(opt_line(cfg, "-gpgpu_n_mem", v, sizeof(v)), "6");
	assert_string_equal(opt_line(cfg, "-gpgpu_shader_registers", v, sizeof(v)), "32768");
	assert_non_null(strstr(cfg, "kept from the base config: regs_per_cu not measured"));
	free(cfg);
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
		cmocka_unit_test(test_calib_mali_t628_gives_seed_table2),
		cmocka_unit_test(test_calib_gpgpusim_base_file_is_kept),
		cmocka_unit_test(test_calib_model_json_round_trip),
		cmocka_unit_test(test_calib_validate_rejects_bad_records),
		cmocka_unit_test(test_calib_store_keeps_params_and_curves),
		cmocka_unit_test(test_calib_model_large_spread_bounds_confidence),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
