/* perf_event counting: scaling math, software counting of real children,
 * the hardware probe and the default-event fallback, on this machine. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "events.h"
#include "perf.h"

static void test_perf_scale_math(void **state)
{
	(void)state;
	assert_int_equal(perf_scale(100, 200, 100), 200);   /* ran half the time: doubled */
	assert_int_equal(perf_scale(100, 100, 100), 100);   /* not multiplexed */
	assert_int_equal(perf_scale(100, 100, 150), 100);   /* running > enabled never scales down */
	assert_int_equal(perf_scale(100, 100, 0), 0);       /* never ran: no estimate */
	assert_int_equal(perf_scale(0, 0, 0), 0);
	assert_int_equal(perf_scale(1000, 3, 1), 3000);
	/* No overflow in the intermediate product. */
	uint64_t big = UINT64_MAX / 2;
	assert_true(perf_scale(big, 1000000000000ull, 999999999999ull) > big);
	assert_true(perf_scale(UINT64_MAX, 4, 2) == UINT64_MAX); /* saturates */
	assert_int_equal(perf_running_pct(200, 100), 50);
	assert_int_equal(perf_running_pct(0, 0), 100);
	assert_int_equal(perf_running_pct(100, 100), 100);
	assert_int_equal(perf_running_pct(3, 1), 33);
}

static void test_perf_interval_increments(void **state)
{
	(void)state;
	struct perf_value prev[2], cur[2];
	memset(prev, 0, sizeof(prev));
	uint64_t inc[2];
	uint32_t pct[2];
	cur[0] = (struct perf_value){.raw = 100, .scaled = 100, .enabled = 1000, .running = 1000};
	cur[1] = (struct perf_value){.raw = 50, .scaled = 100, .enabled = 1000, .running = 500};
	perf_interval(prev, cur, 2, inc, pct);
	assert_int_equal(inc[0], 100);
	assert_int_equal(inc[1], 100);
	assert_int_equal(pct[0], 100);
	assert_int_equal(pct[1], 50);
	/* Second interval: event 1 ran the whole time. */
	cur[0] = (struct perf_value){.raw = 250, .scaled = 250, .enabled = 2000, .running = 2000};
	cur[1] = (struct perf_value){.raw = 150, .scaled = 300, .enabled = 2000, .running = 1500};
	perf_interval(prev, cur, 2, inc, pct);
	assert_int_equal(inc[0], 150);
	assert_int_equal(inc[1], 200);
	assert_int_equal(pct[1], 100);
	/* Scaling may make the estimate go backwards: increment 0, not a wrap. */
	cur[1] = (struct perf_value){.raw = 151, .scaled = 290, .enabled = 3000, .running = 1600};
	perf_interval(prev, cur, 2, inc, pct);
	assert_int_equal(inc[1], 0);
	assert_int_equal(pct[1], 10);
	cur[1].scaled = 310;
	cur[1].enabled = 3000;
	cur[1].running = 1600;
	perf_interval(prev, cur, 2, inc, pct);
	assert_int_equal(inc[1], 10); /* relative to the largest value seen (300) */
}

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double rusage_seconds(const struct rusage *ru)
{
	return (double)ru->ru_utime.tv_sec + (double)ru->ru_utime.tv_usec / 1e6 + (double)ru->ru_stime.tv_sec +
	       (double)ru->ru_stime.tv_usec / 1e6;
}

static size_t find(const struct event_desc *ev, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(ev[i].name, name) == 0)
			return i;
	fail_msg("event %s missing", name);
	return 0;
}

/* -p PID: a child that burns ~0.3 s of CPU once the counters are open. */
static void test_perf_sw_counting_pid_busy_child(void **state)
{
	(void)state;
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[512];
	assert_int_equal(events_parse("task-clock,page-faults,context-switches", ev, EVENTS_MAX, &n, err, sizeof(err)),
			 0);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		volatile uint64_t x = 0;
		double t0 = cpu_seconds();
		while (cpu_seconds() - t0 < 0.3)
			x += 1;
		_exit(0);
	}
	close(go[0]);
	struct perf_counters *pc;
	struct perf_target t = {.kind = PERF_TARGET_PID, .pid = child};
	int rc = perf_counters_open(ev, n, &t, &pc, err, sizeof(err));
	if (rc < 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		fail_msg("perf_counters_open: %s", err);
	}
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	int status;
	struct rusage ru;
	assert_int_equal(wait4(child, &status, 0, &ru), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	struct perf_value v[EVENTS_MAX];
	assert_int_equal(perf_counters_read(pc, v), 0);
	perf_counters_close(pc);
	double counted = (double)v[find(ev, n, "task-clock")].scaled / 1e9;
	double cpu = rusage_seconds(&ru);
	printf("# pid target: task-clock %.3f s, child CPU time %.3f s\n", counted, cpu);
	assert_true(cpu > 0.2);
	assert_true(counted > cpu * 0.75 && counted < cpu * 1.25);
}

/* -- CMD: counters opened on the blocked child with enable_on_exec. */
static void exec_child_case(bool no_group)
{
	struct event_desc ev[EVENTS_MAX];
	size_t n = events_default_sw(ev, EVENTS_MAX);
	int go[2];
	assert_int_equal(pipe(go), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		char b;
		close(go[1]);
		if (read(go[0], &b, 1) != 1)
			_exit(1);
		execl("/bin/sh", "sh", "-c", "i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done", (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	struct perf_counters *pc;
	char err[512];
	struct perf_target t = {.kind = PERF_TARGET_EXEC, .pid = child, .no_group = no_group};
	int rc = perf_counters_open(ev, n, &t, &pc, err, sizeof(err));
	if (rc < 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		fail_msg("perf_counters_open: %s", err);
	}
	/* Nothing counts before exec. */
	struct perf_value v[EVENTS_MAX];
	assert_int_equal(perf_counters_read(pc, v), 0);
	assert_int_equal(v[find(ev, n, "task-clock")].raw, 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	int status;
	struct rusage ru;
	assert_int_equal(wait4(child, &status, 0, &ru), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_int_equal(perf_counters_read(pc, v), 0);
	printf("# exec target: %s, %zu group(s)\n", perf_counters_grouped(pc) ? "grouped read" : "one fd per event",
	       perf_counters_ngroups(pc));
	perf_counters_close(pc);
	double counted = (double)v[find(ev, n, "task-clock")].scaled / 1e9;
	double cpu = rusage_seconds(&ru);
	printf("# exec target: task-clock %.3f s, child CPU time %.3f s, page-faults %llu\n", counted, cpu,
	       (unsigned long long)v[find(ev, n, "page-faults")].scaled);
	assert_true(counted > cpu * 0.75 && counted < cpu * 1.25);
	assert_true(v[find(ev, n, "page-faults")].scaled > 0);
}

static void test_perf_sw_counting_exec_child(void **state)
{
	(void)state;
	exec_child_case(false);
}

/* The path taken when the kernel refuses group reads: one fd per event. */
static void test_perf_sw_counting_single_fds(void **state)
{
	(void)state;
	exec_child_case(true);
}

static void test_perf_system_wide_counts(void **state)
{
	(void)state;
	struct event_desc ev[1];
	events_lookup("cpu-clock", &ev[0]);
	struct perf_counters *pc;
	char err[512];
	struct perf_target t = {.kind = PERF_TARGET_SYSTEM};
	int rc = perf_counters_open(ev, 1, &t, &pc, err, sizeof(err));
	if (rc == -EACCES || rc == -EPERM) {
		printf("# system-wide counting not permitted here: %s\n", err);
		skip();
	}
	assert_int_equal(rc, 0);
	usleep(100000);
	struct perf_value v;
	assert_int_equal(perf_counters_read(pc, &v), 0);
	int cpus[256];
	int ncpu = perf_online_cpus(cpus, 256);
	assert_true(ncpu > 0);
	assert_int_equal(perf_counters_ngroups(pc), (size_t)ncpu);
	perf_counters_close(pc);
	/* cpu-clock runs on every CPU: about ncpu x 0.1 s. */
	double s = (double)v.scaled / 1e9;
	printf("# system-wide cpu-clock over %d CPU(s): %.3f s\n", ncpu, s);
	assert_true(s > 0.05 * ncpu && s < 0.5 * ncpu);
}

static void test_perf_hw_cycles_when_supported(void **state)
{
	(void)state;
	int rc = perf_probe_hw(0, -1);
	if (rc < 0) {
		printf("# hardware PMU unsupported here (perf_event_open cycles: %s): skipping\n", strerror(-rc));
		skip();
	}
	struct event_desc ev[1];
	events_lookup("cycles", &ev[0]);
	struct perf_counters *pc;
	char err[512];
	struct perf_target t = {.kind = PERF_TARGET_PID, .pid = getpid()};
	assert_int_equal(perf_counters_open(ev, 1, &t, &pc, err, sizeof(err)), 0);
	volatile uint64_t x = 0;
	for (int i = 0; i < 10000000; i++)
		x += (uint64_t)i;
	struct perf_value v;
	assert_int_equal(perf_counters_read(pc, &v), 0);
	perf_counters_close(pc);
	assert_true(v.raw > 0);
}

/* The default-event decision, driven by this machine's real probe. */
static void test_perf_default_events_fallback(void **state)
{
	(void)state;
	int probe = perf_probe_hw(getpid(), -1);
	struct event_desc ev[EVENTS_MAX];
	bool fell_back;
	char msg[512];
	size_t n = perf_default_events(getpid(), -1, ev, EVENTS_MAX, &fell_back, msg, sizeof(msg));
	if (probe < 0) {
		char want[512];
		snprintf(want, sizeof(want),
			 "hardware counters unsupported (perf_event_open cycles: %s), using software events: "
			 "task-clock, page-faults, context-switches, cpu-migrations",
			 strerror(-probe));
		printf("# probe failed (%s): fallback path\n", strerror(-probe));
		assert_true(fell_back);
		assert_string_equal(msg, want);
		assert_int_equal(n, 4);
		assert_string_equal(ev[0].name, "task-clock");
		assert_string_equal(ev[1].name, "page-faults");
		assert_string_equal(ev[2].name, "context-switches");
		assert_string_equal(ev[3].name, "cpu-migrations");
	} else {
		printf("# probe succeeded: hardware default list\n");
		assert_false(fell_back);
		assert_string_equal(msg, "");
		assert_int_equal(n, 8);
		assert_string_equal(ev[0].name, "cycles");
	}
	/* Explicit events: unsupported ones are dropped, nothing left is an error. */
	size_t m;
	char err[512];
	assert_int_equal(events_parse("cycles,task-clock", ev, EVENTS_MAX, &m, err, sizeof(err)), 0);
	assert_int_equal(perf_filter_supported(ev, &m, getpid(), -1, err, sizeof(err)), 0);
	assert_int_equal(m, probe < 0 ? 1 : 2);
	assert_int_equal(events_parse("cycles", ev, EVENTS_MAX, &m, err, sizeof(err)), 0);
	{
		int rc = perf_filter_supported(ev, &m, getpid(), -1, err, sizeof(err));
		if (probe < 0) {
			assert_int_equal(rc, -ENOENT);
			assert_non_null(strstr(err, "cycles"));
		} else {
			assert_int_equal(rc, 0);
		}
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_perf_scale_math),
		cmocka_unit_test(test_perf_interval_increments),
		cmocka_unit_test(test_perf_sw_counting_pid_busy_child),
		cmocka_unit_test(test_perf_sw_counting_exec_child),
		cmocka_unit_test(test_perf_sw_counting_single_fds),
		cmocka_unit_test(test_perf_system_wide_counts),
		cmocka_unit_test(test_perf_hw_cycles_when_supported),
		cmocka_unit_test(test_perf_default_events_fallback),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
