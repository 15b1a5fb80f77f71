/* agent/mmap_watch.c against the running kernel: the COMM and FORK records of a
 * system-wide watch, from two CPUs' rings, reach the task names in the order they
 * happened (perf reads its rings in time order too: ordered_events). A child renames
 * itself with prctl(PR_SET_NAME) on the second CPU, then again on the first, then
 * forks a child that never execs: its last name is the second, and the grandchild
 * carries it (the kernel's copy_process copies comm). Read one ring after the
 * other, the first CPU's ring (the second rename) came before the second's (the
 * first rename), and the first rename won. Needs two online CPUs and a system-wide
 * perf_event_open (root or perf_event_paranoid <= -1); skips with the reason. */
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "mmap_watch.h"
#include "perf.h"
#include "proc_maps.h"
#include "task_names.h"

static void pin(int cpu)
{
	cpu_set_t set;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) < 0) /* migrates before it returns */
		_exit(3);
}

static void test_mmap_watch_names_in_time_order_across_cpus(void **state)
{
	(void)state;
	int cpus[2];
	if (perf_online_cpus(cpus, 2) < 2) {
		print_message("skipped: one online CPU (the records must come from two rings)\n");
		skip();
	}
	struct mmap_watch *w;
	char err[512];
	if (mmap_watch_open(&w, PERF_TARGET_SYSTEM, -1, err, sizeof(err)) < 0) {
		print_message("skipped: %s (a system-wide watch needs root)\n", err);
		skip();
	}
	struct task_names tn;
	struct proc_maps pm;
	task_names_init(&tn, NULL);
	proc_maps_init(&pm);
	mmap_watch_set_names(w, &tn);
	int fds[2];
	assert_int_equal(pipe(fds), 0);
	pid_t child = fork();
	assert_true(child >= 0);
	if (child == 0) {
		/* the rings are per CPU, drained in cpus[] order: the later rename goes in the first ring */
		pin(cpus[1]);
		prctl(PR_SET_NAME, "mw-first");
		pin(cpus[0]);
		prctl(PR_SET_NAME, "mw-second");
		pid_t g = fork();
		if (g == 0)
			_exit(0);
		waitpid(g, NULL, 0);
		int32_t gp = (int32_t)g;
		_exit(write(fds[1], &gp, sizeof(gp)) == sizeof(gp) ? 0 : 4);
	}
	close(fds[1]);
	int status;
	assert_int_equal(waitpid(child, &status, 0), child);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	int32_t grandchild = 0;
	assert_int_equal(read(fds[0], &grandchild, sizeof(grandchild)), sizeof(grandchild));
	close(fds[0]);
	assert_true(mmap_watch_drain(w, &pm) >= 0);
	assert_int_equal(mmap_watch_lost(w), 0);
	struct task_name *c = task_names_find(&tn, child, child), *g = task_names_find(&tn, grandchild, grandchild);
	assert_non_null(c);
	assert_non_null(g);
	assert_string_equal(c->thread, "mw-second");
	assert_string_equal(g->comm, "mw-second");
	assert_string_equal(g->thread, "mw-second");
	assert_true(c->exited && g->exited); /* their EXIT records: evicted at the reaps */
	mmap_watch_close(w);
	proc_maps_free(&pm);
	task_names_free(&tn);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_mmap_watch_names_in_time_order_across_cpus),
	};
	return cmocka_run_group_tests_name("mmap_watch", tests, NULL, NULL);
}
