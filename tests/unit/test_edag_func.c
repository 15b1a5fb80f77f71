/* Unit tests of the per-function split of a window's eDAG figures
 * (collector/edag/edag_func.*): a pointer chase and a dense loop called
 * alternately, fed through the real engine (edag_step); the functions' W and D
 * add up to the engine's, the chase holds the depth, and the lambda_f add up
 * to edag_bounds' lambda; each function's cold misses flag its own row. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "edag/edag_func.h"

enum { F_CHASE = 1, F_DENSE = 2, ROUNDS = 10, PER = 100 };

/* r1 = [r1]: each load's address comes from the previous one (a chain) */
static struct edag_insn chase_load(uint64_t pc, uint64_t addr)
{
	struct edag_insn in = {.pc = pc, .addr = addr, .size = 8, .cls = EDAG_LOAD, .mem = EDAG_MEM_READ};
	in.nread = 1;
	in.rd[0] = 1;
	in.nwrite = 1;
	in.wr[0] = 1;
	return in;
}

/* r2 = r2 + r3, or (with_loads, every other one) r4 = [const addr]: independent */
static struct edag_insn dense(uint64_t pc, uint64_t i, int with_loads)
{
	struct edag_insn in = {.pc = pc, .cls = EDAG_INT};
	if (with_loads && i % 2) {
		in.cls = EDAG_LOAD;
		in.mem = EDAG_MEM_READ;
		in.addr = 0x40000000ull + i * 4096;
		in.size = 8;
		in.nwrite = 1;
		in.wr[0] = 4;
		return in;
	}
	in.nread = 2;
	in.rd[0] = 2;
	in.rd[1] = 3;
	in.nwrite = 1;
	in.wr[0] = 2;
	return in;
}

static void run(int with_loads, double m, struct edag_func_acc *a, struct edag_metrics *mt)
{
	struct edag_config cfg;
	edag_config_default(&cfg); /* no cache: every access is a memory vertex */
	cfg.m = m;
	struct edag_state *st;
	assert_int_equal(edag_new(&cfg, &st), 0);
	memset(a, 0, sizeof(*a));
	edag_func_window(a);
	uint64_t di = 0;
	for (int r = 0; r < ROUNDS; r++) {
		for (int i = 0; i < PER; i++) {
			struct edag_insn in = chase_load(0x1000 + 4 * (uint64_t)(i % 4), 0x10000000ull + (uint64_t)(r * PER + i) * 8192);
			struct edag_vertex v;
			assert_int_equal(edag_step(st, &in, &v), 0);
			assert_int_equal(edag_func_add(a, F_CHASE, &v), 0);
		}
		for (int i = 0; i < PER; i++) {
			struct edag_insn in = dense(0x2000 + 4 * (uint64_t)(i % 4), di++, with_loads);
			struct edag_vertex v;
			assert_int_equal(edag_step(st, &in, &v), 0);
			assert_int_equal(edag_func_add(a, F_DENSE, &v), 0);
		}
	}
	edag_metrics_get(st, mt);
	edag_free(st);
}

static void test_edag_func_chase_holds_depth_dense_none(void **state)
{
	(void)state;
	struct edag_func_acc a;
	struct edag_metrics mt;
	run(0, 1, &a, &mt);
	const struct edag_func_fig *c = edag_func_get(&a, F_CHASE), *d = edag_func_get(&a, F_DENSE);
	assert_non_null(c);
	assert_non_null(d);
	assert_int_equal(c->insns, ROUNDS * PER);
	assert_int_equal(d->insns, ROUNDS * PER);
	assert_int_equal(mt.W, ROUNDS * PER); /* the chase's loads only */
	assert_int_equal(mt.D, ROUNDS * PER); /* one chain */
	assert_int_equal(c->W, mt.W);
	assert_int_equal(c->D, mt.D);
	assert_int_equal(d->W, 0);
	assert_int_equal(d->D, 0);
	assert_true(edag_func_lambda(d, 1) == 0);
	edag_func_free(&a);
}

static void test_edag_func_lambda_adds_up_to_engine(void **state)
{
	(void)state;
	const double ms[] = {1, 2, 4, 16};
	for (size_t k = 0; k < sizeof(ms) / sizeof(ms[0]); k++) {
		struct edag_func_acc a;
		struct edag_metrics mt;
		run(1, ms[k], &a, &mt);
		const struct edag_func_fig *c = edag_func_get(&a, F_CHASE), *d = edag_func_get(&a, F_DENSE);
		assert_non_null(c);
		assert_non_null(d);
		assert_int_equal(c->W + d->W, mt.W);
		assert_int_equal(c->D + d->D, mt.D);
		assert_int_equal(d->W, ROUNDS * PER / 2); /* its independent loads */
		assert_int_equal(d->D, 0);		  /* none extends the chase's chain */
		assert_int_equal(c->D, ROUNDS * PER);
		struct edag_bounds b;
		edag_bounds(&mt, ms[k], 100, 100, &b);
		double sum = edag_func_lambda(c, ms[k]) + edag_func_lambda(d, ms[k]);
		assert_true(sum > b.lambda - 1e-9 && sum < b.lambda + 1e-9);
		/* the dense loop's loads overlap with the chain: lambda_f = W_f / m */
		double ld = edag_func_lambda(d, ms[k]);
		assert_true(ld > (ROUNDS * PER / 2) / ms[k] - 1e-9 && ld < (ROUNDS * PER / 2) / ms[k] + 1e-9);
		edag_func_free(&a);
	}
}

static void test_edag_func_window_restarts_depth(void **state)
{
	(void)state;
	struct edag_func_acc a = {0};
	struct edag_vertex v = {.memory = true, .depth = 5};
	assert_int_equal(edag_func_add(&a, 7, &v), 0);
	v.depth = 3; /* below the running maximum: no depth */
	assert_int_equal(edag_func_add(&a, 8, &v), 0);
	assert_int_equal(edag_func_get(&a, 7)->D, 5);
	assert_int_equal(edag_func_get(&a, 8)->D, 0);
	edag_func_window(&a); /* a new window starts from depth 0 */
	assert_int_equal(edag_func_add(&a, 8, &v), 0);
	assert_int_equal(edag_func_get(&a, 8)->D, 3);
	assert_int_equal(edag_func_get(&a, 8)->W, 2);
	assert_null(edag_func_get(&a, 9));
	edag_func_free(&a);
}

/* A function's row is flagged by its own cold misses (issue 36): one cache set of 4 ways; f
 * loads 4 distinct lines into the empty set (cold misses: the lines might have been there before
 * the window), then g loads 8 more (misses into a full set: certain). */
static void test_edag_func_cold_share_flags_its_own_row(void **state)
{
	(void)state;
	struct edag_config cfg;
	edag_config_default(&cfg);
	cfg.m = 4;
	cfg.nlevels = 1;
	assert_int_equal(edag_cache_level_parse("256:4:64:4", &cfg.level[0]), 0);
	struct edag_state *st;
	assert_int_equal(edag_new(&cfg, &st), 0);
	struct edag_func_acc a = {0}, tot = {0};
	edag_func_window(&a);
	for (int i = 0; i < 12; i++) {
		struct edag_insn in = chase_load(0x1000, 0x10000000ull + (uint64_t)i * 64);
		struct edag_vertex v;
		assert_int_equal(edag_step(st, &in, &v), 0);
		assert_true(v.memory);
		assert_int_equal(v.cold, i < 4);
		assert_int_equal(edag_func_add(&a, i < 4 ? F_CHASE : F_DENSE, &v), 0);
	}
	struct edag_metrics mt;
	edag_metrics_get(st, &mt);
	edag_free(st);
	assert_int_equal(edag_func_merge(&tot, &a), 0);
	const struct edag_func_fig *f = edag_func_get(&tot, F_CHASE), *g = edag_func_get(&tot, F_DENSE);
	assert_int_equal(f->W_cold + g->W_cold, mt.W_cold);
	assert_int_equal(f->W, 4);
	assert_int_equal(f->W_cold, 4);
	assert_int_equal(g->W, 8);
	assert_int_equal(g->W_cold, 0);
	assert_true(edag_func_cold_bound(f));
	assert_false(edag_func_cold_bound(g));
	/* the low end: f's misses as hits leave it nothing; g's figure is its own */
	assert_true(edag_func_lambda_cold_hits(f, 4) == 0);
	assert_true(edag_func_lambda_cold_hits(g, 4) == edag_func_lambda(g, 4));
	/* one chain: D 12, f made the first 4 of it */
	assert_int_equal(f->D, 4);
	assert_int_equal(g->D, 8);
	edag_func_free(&a);
	edag_func_free(&tot);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edag_func_chase_holds_depth_dense_none),
		cmocka_unit_test(test_edag_func_lambda_adds_up_to_engine),
		cmocka_unit_test(test_edag_func_window_restarts_depth),
		cmocka_unit_test(test_edag_func_cold_share_flags_its_own_row),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
