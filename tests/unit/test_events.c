/* Event name table and -e parser. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <linux/perf_event.h>
#include <string.h>

#include "events.h"

static void test_events_parse_valid(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[1024];
	assert_int_equal(events_parse("task-clock,cycles,instructions", ev, EVENTS_MAX, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].name, "task-clock");
	assert_int_equal(ev[0].type, PERF_TYPE_SOFTWARE);
	assert_int_equal(ev[0].config, PERF_COUNT_SW_TASK_CLOCK);
	assert_string_equal(ev[0].unit, "ns");
	assert_string_equal(ev[1].name, "cycles");
	assert_int_equal(ev[1].type, PERF_TYPE_HARDWARE);
	assert_int_equal(ev[1].config, PERF_COUNT_HW_CPU_CYCLES);
	assert_string_equal(ev[1].unit, "");
	assert_true(events_is_hardware(&ev[1]));
	assert_false(events_is_hardware(&ev[0]));
	assert_int_equal(ev[2].config, PERF_COUNT_HW_INSTRUCTIONS);
}

static void test_events_parse_aliases(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[1024];
	assert_int_equal(events_parse("faults,cs,migrations", ev, EVENTS_MAX, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_string_equal(ev[0].name, "page-faults");
	assert_int_equal(ev[0].config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_string_equal(ev[1].name, "context-switches");
	assert_int_equal(ev[1].config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	assert_string_equal(ev[2].name, "cpu-migrations");
	assert_int_equal(ev[2].config, PERF_COUNT_SW_CPU_MIGRATIONS);
	struct event_desc d;
	assert_int_equal(events_lookup("minor-faults", &d), 0);
	assert_int_equal(d.config, PERF_COUNT_SW_PAGE_FAULTS_MIN);
	assert_int_equal(events_lookup("major-faults", &d), 0);
	assert_int_equal(d.config, PERF_COUNT_SW_PAGE_FAULTS_MAJ);
	assert_int_equal(events_lookup("stalled-cycles-backend", &d), 0);
	assert_int_equal(d.config, PERF_COUNT_HW_STALLED_CYCLES_BACKEND);
	assert_int_equal(events_lookup("ref-cycles", &d), 0);
	assert_int_equal(d.config, PERF_COUNT_HW_REF_CPU_CYCLES);
}

static void test_events_parse_raw(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[1024];
	assert_int_equal(events_parse("r11,r1A2b,task-clock", ev, EVENTS_MAX, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 3);
	assert_int_equal(ev[0].type, PERF_TYPE_RAW);
	assert_int_equal(ev[0].config, 0x11);
	assert_string_equal(ev[0].name, "r11");
	assert_int_equal(ev[1].config, 0x1a2b);
	assert_string_equal(ev[1].name, "r1a2b");
	assert_true(events_is_hardware(&ev[0]));
	struct event_desc d;
	assert_int_equal(events_lookup("r", &d), -ENOENT);
	assert_int_equal(events_lookup("rxyz", &d), -ENOENT);
	assert_int_equal(events_lookup("r12345678901234567", &d), -ENOENT); /* 17 digits */
	assert_int_equal(events_lookup("rffffffffffffffff", &d), 0);
	assert_true(d.config == UINT64_MAX);
}

static void test_events_parse_unknown(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[1024];
	assert_int_equal(events_parse("task-clock,bogus", ev, EVENTS_MAX, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "unknown event 'bogus'"));
	/* The message lists the valid names. */
	assert_non_null(strstr(err, "task-clock"));
	assert_non_null(strstr(err, "context-switches (cs)"));
	assert_non_null(strstr(err, "rNNNN"));
	assert_int_equal(events_parse("", ev, EVENTS_MAX, &n, err, sizeof(err)), -EINVAL);
	assert_int_equal(events_parse("cycles,,cs", ev, EVENTS_MAX, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "empty name"));
	assert_int_equal(events_parse("cs,context-switches", ev, EVENTS_MAX, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "twice"));
	assert_int_equal(events_parse("cs,faults,cycles", ev, 2, &n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "too many"));
}

static void test_events_default_lists(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n = events_default_hw(ev, EVENTS_MAX);
	assert_int_equal(n, 8);
	assert_string_equal(ev[0].name, "cycles");
	assert_string_equal(ev[3].name, "branch-misses");
	assert_string_equal(ev[4].name, "task-clock");
	n = events_default_sw(ev, EVENTS_MAX);
	assert_int_equal(n, 4);
	for (size_t i = 0; i < n; i++)
		assert_false(events_is_hardware(&ev[i]));
	assert_string_equal(events_default_sw_names(), "task-clock, page-faults, context-switches, cpu-migrations");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_events_parse_valid),
		cmocka_unit_test(test_events_parse_aliases),
		cmocka_unit_test(test_events_parse_raw),
		cmocka_unit_test(test_events_parse_unknown),
		cmocka_unit_test(test_events_default_lists),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
