/* The rule test_trace_accuracy and tests/board/trace_truth share (tests/lib/trace_tiles.c, issue
 * 36): `collector edag --json`'s estimate read per instruction (the figures of its "estimate"
 * object, not the same keys earlier in the text), and the verdict: unflagged within 10 % (or the
 * absolute tolerance) of the truth; flagged, [the figure with its cold misses as hits, the
 * figure] holds it, each end with that tolerance. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <math.h>
#include <stdbool.h>

#include "trace_tiles.h"

/* the shape cli_edag_out.c writes: windows first, then "estimate" (the keys appear in both) */
static const char js[] =
	"{\"windows\":[{\"index\":0,\"W\":{\"value\":7},\"lambda\":{\"value\":7}}],"
	"\"estimate\":{\"windows\":4,\"sampled_insns\":800000,\"W\":{\"value\":240000,\"ci\":[1,2]},"
	"\"D\":{\"value\":8000},\"lambda\":{\"value\":160000},\"C\":{\"value\":552000},"
	"\"W_cold\":{\"value\":96000},\"lambda_cold_hits\":136000,\"cold_bound\":true}}";

static void test_trace_verdict_edag_json(void **state)
{
	(void)state;
	struct tiles_edag e;
	tiles_edag_read(js, &e);
	assert_true(e.insns == 800000 && e.windows == 4);
	assert_true(fabs(e.W - 0.30) < 1e-12 && fabs(e.lambda - 0.20) < 1e-12 && fabs(e.D - 0.01) < 1e-12);
	assert_true(fabs(e.C - 0.69) < 1e-12 && fabs(e.cold - 0.12) < 1e-12 && fabs(e.lambda_lo - 0.17) < 1e-12);
	assert_true(e.bound);
	tiles_edag_read("{\"estimate\":{\"sampled_insns\":10,\"W\":{\"value\":1},\"cold_bound\":false}}", &e);
	assert_false(e.bound);
	assert_true(fabs(e.W - 0.1) < 1e-12);
	assert_true(isnan(e.lambda) && isnan(e.C)); /* missing: NaN, never 0 */
	tiles_edag_read("{\"windows\":[]}", &e);
	assert_true(isnan(e.insns) && isnan(e.W));
}

static void test_trace_verdict_rule(void **state)
{
	(void)state;
	/* unflagged: within 10 % of the truth, or the absolute tolerance */
	assert_true(tiles_verdict(0.20, 0.19, 0.1912, false, 0.001));
	assert_false(tiles_verdict(0.25, 0.24, 0.1912, false, 0.001));
	assert_true(tiles_verdict(0.0009, 0, 0, false, 0.001));
	assert_false(tiles_verdict(0.0011, 0, 0, false, 0.001));
	/* flagged: [lo, win] holds the truth (10 % at each end) */
	assert_true(tiles_verdict(0.30, 0.18, 0.1912, true, 0.001));
	assert_true(tiles_verdict(0.30, 0.20, 0.1912, true, 0.001)); /* 0.20 - 10 % = 0.18 */
	assert_false(tiles_verdict(0.30, 0.22, 0.1912, true, 0.001));
	assert_false(tiles_verdict(0.15, 0.10, 0.1912, true, 0.001)); /* 0.15 + 10 % < truth */
	/* flagged does not pass a figure the unflagged rule would (the interval must hold it) */
	assert_true(tiles_within(0.20, 0.1912, 0.10, 0.001));
	assert_false(tiles_verdict(0.30, 0.25, 0.1912, true, 0.001));
	assert_true(tiles_holds(0.5, 0.6, 0.46, 0.10, 0.01) && !tiles_holds(0.5, 0.6, 0.44, 0.10, 0.01));
	assert_true(tiles_holds(0.5, 0.6, 0.65, 0.10, 0.01) && !tiles_holds(0.5, 0.6, 0.67, 0.10, 0.01));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_verdict_edag_json),
		cmocka_unit_test(test_trace_verdict_rule),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
