/* Unit tests of collector/cldag: edges from wait lists, in-order queues and
 * buffer read-after-write; critical path = heaviest chain; parallelism. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "cldag/cldag.h"

static struct cldag_cmd cmd(uint64_t id, uint64_t start, uint64_t dur)
{
	return (struct cldag_cmd){.pid = 7, .id = id, .start_ns = start, .end_ns = start + dur};
}

/* Two independent kernels K1 (long, queue 1) and K2 (short, queue 2), K3 after
 * both (in order after K1, waits on K2, reads what both wrote). */
static void test_cldag_critical_path_is_longest_chain(void **state)
{
	uint64_t w2[] = {2}, r3[] = {100, 200}, wr1[] = {100}, wr2[] = {200};
	struct cldag_cmd c[3] = {cmd(1, 0, 50), cmd(2, 0, 10), cmd(3, 60, 5)};
	c[0].mem_written = wr1, c[0].n_written = 1;
	c[1].mem_written = wr2, c[1].n_written = 1;
	c[2].prev_in_queue = 1;
	c[2].wait_ids = w2, c[2].n_wait = 1;
	c[2].mem_read = r3, c[2].n_read = 2;
	struct cldag d;
	assert_int_equal(cldag_build(c, 3, &d), 0);
	assert_int_equal(d.n_edges, 2);
	assert_int_equal(d.n_wait_edges, 1);
	assert_int_equal(d.n_order_edges, 1);
	assert_int_equal(d.n_raw_edges, 2);
	assert_int_equal(d.work_ns, 65);
	assert_int_equal(d.span_ns, 55);
	assert_int_equal(d.path_len, 2);
	assert_int_equal(d.path[0], 0);
	assert_int_equal(d.path[1], 2);
	assert_true(d.critical[0] && !d.critical[1] && d.critical[2]);
	assert_true(d.parallelism > 1.18 && d.parallelism < 1.19);
	cldag_free(&d);
	/* Make K2 the long one: the path follows it. */
	c[1].end_ns = 80;
	assert_int_equal(cldag_build(c, 3, &d), 0);
	assert_int_equal(d.span_ns, 85);
	assert_true(!d.critical[0] && d.critical[1] && d.critical[2]);
	cldag_free(&d);
}

/* Input order does not matter; processes are separate DAGs; unknown ids are counted. */
static void test_cldag_input_order_and_processes(void **state)
{
	uint64_t w[] = {99};
	struct cldag_cmd c[4] = {cmd(2, 0, 10), cmd(1, 0, 10), cmd(1, 0, 30), cmd(2, 0, 1)};
	c[0].prev_in_queue = 1;
	c[2].pid = c[3].pid = 8;
	c[3].prev_in_queue = 1;
	c[3].wait_ids = w, c[3].n_wait = 1;
	struct cldag d;
	assert_int_equal(cldag_build(c, 4, &d), 0);
	assert_int_equal(d.n_edges, 2);
	assert_int_equal(d.n_unresolved, 1);
	assert_int_equal(d.span_ns, 31);
	assert_true(d.critical[2] && d.critical[3] && !d.critical[0] && !d.critical[1]);
	cldag_free(&d);
}

/* Only read-after-write connects through buffers: a later writer or reader does not. */
static void test_cldag_raw_only(void **state)
{
	uint64_t m[] = {5};
	struct cldag_cmd c[3] = {cmd(1, 0, 10), cmd(2, 0, 10), cmd(3, 0, 10)};
	c[0].mem_read = m, c[0].n_read = 1;  /* reads before anyone wrote */
	c[1].mem_written = m, c[1].n_written = 1;
	c[2].mem_written = m, c[2].n_written = 1; /* WAW: no edge */
	struct cldag d;
	assert_int_equal(cldag_build(c, 3, &d), 0);
	assert_int_equal(d.n_edges, 0);
	assert_int_equal(d.span_ns, 10);
	assert_true(d.parallelism > 2.99);
	cldag_free(&d);
	assert_int_equal(cldag_build(NULL, 0, &d), 0);
	assert_int_equal(d.span_ns, 0);
	assert_int_equal(d.path_len, 0);
	cldag_free(&d);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cldag_critical_path_is_longest_chain),
		cmocka_unit_test(test_cldag_input_order_and_processes),
		cmocka_unit_test(test_cldag_raw_only),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
