/* The snapshot's seccomp rule by kernel release (agent/trace/snapshot_priv.h): a thread whose
 * /proc/PID/status has no "Seccomp:" line (before 3.8) may be snapshot only on a kernel that
 * cannot hold seccomp filters (before 3.5: the Arndale's 3.4). */
#include "generated/config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#if defined(CONFIG_AGENT_TRACER) && (defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__))
#include "trace/snapshot_priv.h"

static void test_trace_snapshot_rules_filters_from_3_5(void **state)
{
	(void)state;
	assert_false(trace_snapshot_release_has_filters("3.4.0"));
	assert_false(trace_snapshot_release_has_filters("3.4.104-vendor")); /* a 3.4 vendor release */
	assert_false(trace_snapshot_release_has_filters("2.6.32"));
	assert_true(trace_snapshot_release_has_filters("3.5.0"));
	assert_true(trace_snapshot_release_has_filters("3.10.61"));
	assert_true(trace_snapshot_release_has_filters("6.1.0-57-armmp"));
	assert_true(trace_snapshot_release_has_filters("4"));	  /* unreadable: assume it may */
	assert_true(trace_snapshot_release_has_filters(""));
	assert_true(trace_snapshot_release_has_filters(NULL));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(CONFIG_AGENT_TRACER) && (defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__))
	    cmocka_unit_test(test_trace_snapshot_rules_filters_from_3_5),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
