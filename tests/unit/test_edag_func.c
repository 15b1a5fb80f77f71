/* Unit tests of the per-function split of a window's eDAG figures
 * (collector/edag/edag_func.*): a pointer chase and a dense loop called
 * alternately, fed through the real engine (edag_step); the functions' W and D
 * add up to the engine's, the chase holds the depth, and the lambda_f add up
 * to edag_bounds' lambda. */
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_edag_func_chase_holds_depth_dense_none),
		cmocka_unit_test(test_edag_func_lambda_adds_up_to_engine),
		cmocka_unit_test(test_edag_func_window_restarts_depth),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
