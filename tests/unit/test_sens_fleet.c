/* Latency sensitivity per function across a fleet (report/sens_fleet.c):
 * threads of three sessions of two agents, with known per-thread windows,
 * instructions and per-function splits, give known rows: each window weighs by
 * its instructions, the rows add up to the fleet's Lambda*alpha0, an
 * upper-bound part makes its function's row an upper bound (its own flag: a
 * function beside it in an upper-bound thread stays unflagged), and each row
 * says how many windows, sessions and agents it rests on and how many of its
 * threads' windows were discarded, and why. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "report/sens_fleet.h"

#define NEAR(a, b) assert_true(fabs((a) - (b)) < 1e-12)

/* session 1 and 2 of agent A, session 3 (two threads) of agent B; 10000 instructions in all */
static const struct sens_fleet_group groups[] = {
	{.session = 1, .agent_id = "A", .windows = 4, .insns = 1000, .mem_share = 0.5, .mem_lo = 0.4, .mem_hi = 0.6,
	 .discarded_short = 1},
	{.session = 2, .agent_id = "A", .windows = 2, .insns = 3000, .mem_share = 0.2, .mem_lo = 0.1, .mem_hi = 0.3},
	{.session = 3, .agent_id = "B", .windows = 5, .insns = 4000, .mem_share = 0.1, .mem_lo = 0.05, .mem_hi = 0.2,
	 .upper_bound = true, .discarded_cut = 2},
	/* a thread whose PCs resolved to no function: no parts, but its windows weigh */
	{.session = 3, .agent_id = "B", .windows = 1, .insns = 2000},
};

static const struct sens_fleet_part parts[] = {
	{.group = 0, .name = "chase", .module = "app", .insns = 400, .lambda = 400, .mem_share = 0.5, .mem_lo = 0.4,
	 .mem_hi = 0.6},
	{.group = 0, .name = "dense", .module = "app", .insns = 600},
	{.group = 1, .name = "chase", .module = "app", .insns = 1000, .lambda = 300, .mem_share = 0.15,
	 .mem_lo = 0.075, .mem_hi = 0.225},
	{.group = 1, .name = "other", .module = "app", .insns = 2000, .lambda = 100, .mem_share = 0.05,
	 .mem_lo = 0.025, .mem_hi = 0.075},
	{.group = 2, .name = "chase", .module = "app", .insns = 2000, .lambda = 200, .mem_share = 0.1,
	 .mem_lo = 0.05, .mem_hi = 0.2, .upper_bound = true},
	/* no misses of its own: not flagged in a flagged thread (sensf_rows' rule) */
	{.group = 2, .name = "dense", .module = "app", .insns = 2000},
};

static void test_sens_fleet_weights_windows_by_instructions(void **state)
{
	(void)state;
	struct sens_fleet_result r;
	assert_int_equal(sens_fleet_combine(groups, 4, parts, 6, &r), 0);
	assert_int_equal(r.groups, 4);
	assert_int_equal(r.windows, 12);
	assert_int_equal(r.upper_windows, 5);
	assert_int_equal(r.sessions, 3);
	assert_int_equal(r.agents, 2);
	assert_int_equal(r.insns, 10000);
	assert_int_equal(r.discarded_short, 1);
	assert_int_equal(r.discarded_cut, 2);
	assert_true(r.upper_bound);
	NEAR(r.mem_share, (1000 * 0.5 + 3000 * 0.2 + 4000 * 0.1) / 10000.0);
	NEAR(r.mem_lo, (1000 * 0.4 + 3000 * 0.1 + 4000 * 0.05) / 10000.0);
	NEAR(r.mem_hi, (1000 * 0.6 + 3000 * 0.3 + 4000 * 0.2) / 10000.0);

	assert_int_equal(r.nrows, 3);
	const struct sens_fleet_row *c = &r.rows[0], *o = &r.rows[1], *d = &r.rows[2];
	assert_string_equal(c->name, "chase"); /* the largest first */
	assert_string_equal(c->module, "app");
	assert_string_equal(o->name, "other");
	assert_string_equal(d->name, "dense");
	/* chase: 1000 x 0.5 + 3000 x 0.15 + 4000 x 0.1 over 10000 instructions */
	NEAR(c->mem_share, 0.135);
	NEAR(c->mem_lo, (1000 * 0.4 + 3000 * 0.075 + 4000 * 0.05) / 10000.0);
	NEAR(c->mem_hi, (1000 * 0.6 + 3000 * 0.225 + 4000 * 0.2) / 10000.0);
	assert_int_equal(c->insns, 3400);
	NEAR(c->insn_share, 0.34);
	NEAR(c->lambda_per_insn, 900.0 / 3400.0);
	assert_true(c->upper_bound); /* agent B's part is an upper bound */
	assert_int_equal(c->windows, 11);
	assert_int_equal(c->upper_windows, 5);
	assert_int_equal(c->discarded_short, 1);
	assert_int_equal(c->discarded_cut, 2);
	assert_int_equal(c->sessions, 3);
	assert_int_equal(c->agents, 2);
	assert_string_equal(c->top_agent, "A"); /* 950 of 1350 */
	/* other: one session of A, no bound */
	NEAR(o->mem_share, 0.015);
	NEAR(o->mem_lo, 0.0075);
	NEAR(o->mem_hi, 0.0225);
	NEAR(o->lambda_per_insn, 0.05);
	assert_false(o->upper_bound);
	assert_int_equal(o->windows, 2);
	assert_int_equal(o->upper_windows, 0);
	assert_int_equal(o->discarded_short + o->discarded_cut, 0);
	assert_int_equal(o->sessions, 1);
	assert_int_equal(o->agents, 1);
	/* dense: no memory cost; it ran in an upper-bound thread, but its own part is no bound */
	NEAR(d->mem_share, 0);
	assert_false(d->upper_bound);
	assert_int_equal(d->upper_windows, 0);
	assert_int_equal(d->windows, 9);
	assert_int_equal(d->discarded_short, 1);
	assert_int_equal(d->discarded_cut, 2);
	assert_int_equal(d->sessions, 2);
	assert_int_equal(d->agents, 2);
	/* the rows add up to the fleet's figure (the thread without functions has 0) */
	NEAR(c->mem_share + o->mem_share + d->mem_share, r.mem_share);
	sens_fleet_result_free(&r);
}

static void test_sens_fleet_keys_by_function_and_module(void **state)
{
	(void)state;
	const struct sens_fleet_part p[] = {
		{.group = 0, .name = "main", .module = "progA", .insns = 500, .lambda = 50, .mem_share = 0.2},
		{.group = 2, .name = "main", .module = "progB", .insns = 100, .lambda = 10, .mem_share = 0.01},
		{.group = 1, .name = "main", .module = "progA", .insns = 300, .lambda = 30, .mem_share = 0.1},
	};
	struct sens_fleet_result r;
	assert_int_equal(sens_fleet_combine(groups, 4, p, 3, &r), 0);
	assert_int_equal(r.nrows, 2);
	assert_string_equal(r.rows[0].module, "progA");
	NEAR(r.rows[0].mem_share, (1000 * 0.2 + 3000 * 0.1) / 10000.0);
	assert_int_equal(r.rows[0].sessions, 2);
	assert_int_equal(r.rows[0].agents, 1);
	assert_false(r.rows[0].upper_bound);
	assert_string_equal(r.rows[1].module, "progB");
	assert_false(r.rows[1].upper_bound); /* group 2 is an upper bound, this part is not */
	sens_fleet_result_free(&r);
}

static void test_sens_fleet_empty_and_bad_group(void **state)
{
	(void)state;
	struct sens_fleet_result r;
	assert_int_equal(sens_fleet_combine(NULL, 0, NULL, 0, &r), 0);
	assert_int_equal(r.nrows, 0);
	assert_int_equal(r.windows, 0);
	assert_true(r.mem_share == 0);
	sens_fleet_result_free(&r);
	const struct sens_fleet_part bad = {.group = 4, .name = "x"};
	assert_int_equal(sens_fleet_combine(groups, 4, &bad, 1, &r), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_sens_fleet_weights_windows_by_instructions),
		cmocka_unit_test(test_sens_fleet_keys_by_function_and_module),
		cmocka_unit_test(test_sens_fleet_empty_and_bad_group),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
