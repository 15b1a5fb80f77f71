/* The agent's poll loop, its timers, and the target (a command it starts). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "loop.h"
#include "net.h"
#include "target.h"

struct counter {
	struct loop *l;
	struct loop_timer t;
	int fired;
	int stop_after;
	int fd;
	int readable;
};

static int counter_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *tmo)
{
	struct counter *c = ctx;
	loop_timer_timeout(&c->t, now, tmo);
	pfd[0] = (struct pollfd){.fd = c->fd, .events = POLLIN};
	return 1;
}

static int counter_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct counter *c = ctx;
	if (n == 1 && (pfd[0].revents & POLLIN)) {
		char b;
		if (read(c->fd, &b, 1) == 1)
			c->readable++;
	}
	if (loop_timer_expired(&c->t, now) && ++c->fired == c->stop_after)
		loop_stop(c->l, 7);
	return 0;
}

static void test_loop_timer_fires_and_stop_code(void **state)
{
	struct counter c = {.stop_after = 5, .fd = -1};
	assert_int_equal(loop_create(&c.l), 0);
	struct loop_source src = {.name = "c", .prepare = counter_prepare, .dispatch = counter_dispatch, .ctx = &c};
	assert_int_equal(loop_add(c.l, &src), 0);
	uint64_t t0 = clock_mono_ns();
	loop_timer_start(&c.t, 20000000ull, t0); /* 20 ms */
	assert_int_equal(loop_run(c.l), 7);
	double ms = (double)(clock_mono_ns() - t0) / 1e6;
	assert_int_equal(c.fired, 5);
	assert_true(ms >= 99.0);  /* 5 periods of 20 ms: never early */
	assert_true(ms < 2000.0); /* and not stuck */
	loop_destroy(c.l);
}

static void test_loop_fd_readiness_dispatched(void **state)
{
	int p[2];
	assert_int_equal(pipe(p), 0);
	struct counter c = {.stop_after = 3, .fd = p[0]};
	assert_int_equal(loop_create(&c.l), 0);
	struct loop_source src = {.name = "c", .prepare = counter_prepare, .dispatch = counter_dispatch, .ctx = &c};
	assert_int_equal(loop_add(c.l, &src), 0);
	loop_timer_start(&c.t, 10000000ull, clock_mono_ns());
	assert_int_equal(write(p[1], "xy", 2), 2);
	assert_int_equal(loop_run(c.l), 7);
	assert_int_equal(c.readable, 2);
	loop_remove(c.l, &c);
	/* with no sources, a step only waits its bound */
	assert_int_equal(loop_step(c.l, 1), 0);
	loop_destroy(c.l);
	close(p[0]);
	close(p[1]);
}

static void test_loop_timer_skips_when_behind(void **state)
{
	struct loop_timer t;
	loop_timer_start(&t, 1000, 0);
	assert_false(loop_timer_expired(&t, 999));
	assert_true(loop_timer_expired(&t, 50000)); /* far behind: fires once... */
	assert_false(loop_timer_expired(&t, 50000)); /* ...not a burst of 49 */
	assert_int_equal(t.next_ns, 51000);
}

static int run_target(char **cmd, double duration, bool *interrupted)
{
	struct target_opts o = {.cmd = cmd, .duration_s = duration};
	struct target *t;
	char err[256];
	assert_int_equal(target_prepare(&t, &o, err, sizeof(err)), 0);
	assert_int_equal(target_kind(t), TARGET_EXEC);
	assert_true(target_pid(t) > 0);
	int rc = target_release(t);
	if (rc != 0) {
		target_close(t);
		return rc;
	}
	struct loop *l;
	assert_int_equal(loop_create(&l), 0);
	assert_int_equal(target_attach(t, l), 0);
	assert_int_equal(loop_run(l), 0);
	int code = target_exit_code(t);
	if (interrupted)
		*interrupted = target_interrupted(t);
	loop_destroy(l);
	target_close(t);
	return code;
}

static void test_target_command_exit_code(void **state)
{
	char *cmd[] = {"sh", "-c", "exit 5", NULL};
	assert_int_equal(run_target(cmd, 0, NULL), 5);
}

/* #41: a command is named as perf names it: argv[0]'s basename and the arguments */
static void test_target_describes_command_as_perf(void **state)
{
	char *cmd[] = {"/bin/sh", "-c", "exit 0", NULL};
	struct target_opts o = {.cmd = cmd};
	struct target *t;
	char err[256];
	assert_int_equal(target_prepare(&t, &o, err, sizeof(err)), 0);
	assert_string_equal(target_describe(t), "sh -c exit 0");
	assert_int_equal(target_release(t), 0);
	struct loop *l;
	assert_int_equal(loop_create(&l), 0);
	assert_int_equal(target_attach(t, l), 0);
	assert_int_equal(loop_run(l), 0);
	assert_int_equal(target_exit_code(t), 0);
	loop_destroy(l);
	target_close(t);
}

static void test_target_missing_command_is_127(void **state)
{
	char *cmd[] = {"/nonexistent/prof-test-command", NULL};
	assert_int_equal(run_target(cmd, 0, NULL), 127);
}

static void test_target_duration_stops_command(void **state)
{
	char *cmd[] = {"sleep", "30", NULL};
	uint64_t t0 = clock_mono_ns();
	int code = run_target(cmd, 0.3, NULL);
	double s = (double)(clock_mono_ns() - t0) / 1e9;
	assert_int_equal(code, 128 + 15); /* SIGTERM */
	assert_true(s >= 0.3 && s < 5.0);
}

static void test_target_no_such_pid(void **state)
{
	struct target_opts o = {.pid = 999999999};
	struct target *t;
	char err[256];
	assert_int_equal(target_prepare(&t, &o, err, sizeof(err)), -ESRCH);
	assert_non_null(strstr(err, "no such process"));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_timer_fires_and_stop_code),
		cmocka_unit_test(test_loop_fd_readiness_dispatched),
		cmocka_unit_test(test_loop_timer_skips_when_behind),
		cmocka_unit_test(test_target_command_exit_code),
		cmocka_unit_test(test_target_describes_command_as_perf),
		cmocka_unit_test(test_target_missing_command_is_127),
		cmocka_unit_test(test_target_duration_stops_command),
		cmocka_unit_test(test_target_no_such_pid),
	};
	return cmocka_run_group_tests_name("loop", tests, NULL, NULL);
}
