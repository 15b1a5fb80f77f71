/* agent/task_names.c: names read from a /proc tree once per task, COMM
 * records (exec, thread renames) overriding them, FORK/EXIT records (names
 * inherited, exited tasks evicted), declaration state, and the bound. The
 * /proc tree is a temp dir laid out as the kernel's (fs/proc/base.c: /proc/PID/comm, /proc/PID/task/TID/comm, each "name\n"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "task_names.h"
#include "testproc.h"

#define FORK_T 1 /* a FORK record's time */

static void put(const char *root, int pid, int tid, const char *name)
{
	char path[512];
	snprintf(path, sizeof(path), "%s/%d", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task", root, pid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d", root, pid, tid);
	mkdir(path, 0755);
	snprintf(path, sizeof(path), "%s/%d/task/%d/comm", root, pid, tid);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", name);
	fclose(f);
	if (pid == tid) {
		snprintf(path, sizeof(path), "%s/%d/comm", root, pid);
		f = fopen(path, "w");
		assert_non_null(f);
		fprintf(f, "%s\n", name);
		fclose(f);
	}
}

static void test_task_names_from_proc_and_comm_records(void **state)
{
	(void)state;
	char root[256];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "tasknames"), 0);
	put(root, 100, 100, "server");
	put(root, 100, 101, "worker-1");
	struct task_names t;
	task_names_init(&t, root);
	assert_int_equal(task_names_ensure(&t, 100, 101), 1);
	assert_int_equal(task_names_ensure(&t, 100, 101), 0); /* read once */
	struct task_name *e = task_names_find(&t, 100, 101);
	assert_non_null(e);
	assert_string_equal(e->comm, "server");
	assert_string_equal(e->thread, "worker-1");
	assert_false(e->declared);
	e->declared = true;
	/* a task gone before it was read: named after its process, as a COMM record told it */
	assert_int_equal(task_names_set(&t, 200, 200, "fq_alpha"), 0);
	assert_int_equal(task_names_ensure(&t, 200, 201), 1);
	e = task_names_find(&t, 200, 201);
	assert_string_equal(e->comm, "fq_alpha");
	assert_string_equal(e->thread, "");
	/* exec: a new name for the process undeclares it; the same name does not */
	assert_int_equal(task_names_set(&t, 100, 100, "server"), 0);
	e = task_names_find(&t, 100, 100);
	e->declared = true;
	assert_int_equal(task_names_set(&t, 100, 100, "server"), 0);
	assert_true(task_names_find(&t, 100, 100)->declared);
	assert_int_equal(task_names_set(&t, 100, 100, "newprog"), 0);
	e = task_names_find(&t, 100, 100);
	assert_false(e->declared);
	assert_string_equal(e->comm, "newprog");
	/* a thread rename keeps the process name */
	assert_int_equal(task_names_set(&t, 100, 101, "io"), 0);
	e = task_names_find(&t, 100, 101);
	assert_string_equal(e->thread, "io");
	assert_string_equal(e->comm, "newprog");
	/* long names are cut to the kernel's 15 bytes */
	assert_int_equal(task_names_set(&t, 300, 300, "a-very-long-program-name"), 0);
	assert_int_equal(strlen(task_names_find(&t, 300, 300)->comm), TASK_NAME_LEN - 1);
	task_names_redeclare(&t);
	for (size_t i = 0; i < t.cap; i++)
		assert_false(t.slots[i].tid && t.slots[i].declared);
	/* the idle task has no entry */
	assert_int_equal(task_names_ensure(&t, 0, 0), 0);
	assert_null(task_names_find(&t, 0, 0));
	/* bounded: past TASK_NAMES_MAX live tasks a new one is not named, and counted */
	size_t before = t.n;
	for (int32_t i = 0; i < (int32_t)TASK_NAMES_MAX + 10; i++)
		task_names_set(&t, 1000000 + i, 1000000 + i, "x");
	assert_int_equal(t.n, TASK_NAMES_MAX);
	assert_int_equal(t.dropped, before + 10);
	assert_non_null(task_names_find(&t, 100, 101)); /* the known ones were kept */
	task_names_free(&t);
	tp_rm_rf(root);
}

/* FORK records: the child carries the forking thread's name (the kernel's
 * copy_process duplicates task_struct, comm included; a thread shares its
 * process's); EXIT records: the task is evicted at the next reap, so 100,000
 * short-lived processes never fill the table; a COMM record seen before the
 * FORK record (another CPU's ring) is not overwritten. */
static void test_task_names_fork_exit_churn(void **state)
{
	(void)state;
	char root[256];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "tasknames2"), 0);
	put(root, 10, 10, "bash"); /* older than the session: read from /proc at its first fork */
	struct task_names t;
	task_names_init(&t, root);
	assert_int_equal(task_names_fork(&t, 11, 11, 10, 10, FORK_T), 0);
	struct task_name *e = task_names_find(&t, 11, 11);
	assert_non_null(e);
	assert_string_equal(e->comm, "bash");
	assert_string_equal(e->thread, "bash");
	assert_int_equal(task_names_set(&t, 11, 11, "sleep"), 0); /* its exec */
	/* a thread of the new program, renamed, then its own thread */
	assert_int_equal(task_names_fork(&t, 11, 12, 11, 11, FORK_T), 0);
	assert_int_equal(task_names_set(&t, 11, 12, "worker"), 0);
	assert_int_equal(task_names_fork(&t, 11, 13, 11, 12, FORK_T), 0);
	e = task_names_find(&t, 11, 13);
	assert_string_equal(e->comm, "sleep");
	assert_string_equal(e->thread, "worker");
	/* COMM before FORK */
	assert_int_equal(task_names_set(&t, 20, 20, "make"), 0);
	assert_int_equal(task_names_fork(&t, 20, 20, 10, 10, FORK_T), 0);
	assert_string_equal(task_names_find(&t, 20, 20)->comm, "make");
	/* a short-lived child's records from two rings: COMM (exec) and EXIT first, then its
	 * FORK: the fork is older than the exit, the exec'd name stays */
	assert_int_equal(task_names_set(&t, 30, 30, "grep"), 0);
	task_names_exit(&t, 30, 30, 50);
	assert_int_equal(task_names_fork(&t, 30, 30, 10, 10, 40), 0);
	assert_string_equal(task_names_find(&t, 30, 30)->comm, "grep");
	/* a later fork reusing the pid is a new task: bash's name */
	assert_int_equal(task_names_fork(&t, 30, 30, 10, 10, 60), 0);
	assert_string_equal(task_names_find(&t, 30, 30)->comm, "bash");
	assert_false(task_names_find(&t, 30, 30)->exited);
	/* a task seen in a sample when it was already gone (empty names) gets its FORK's */
	assert_int_equal(task_names_ensure(&t, 31, 31), 1);
	assert_int_equal(task_names_fork(&t, 31, 31, 10, 10, 70), 0);
	assert_string_equal(task_names_find(&t, 31, 31)->comm, "bash");
	/* sampled when already gone (no names), then its EXIT, then its FORK: named, still exited */
	assert_int_equal(task_names_ensure(&t, 32, 32), 1);
	task_names_exit(&t, 32, 32, 90);
	assert_int_equal(task_names_fork(&t, 32, 32, 10, 10, 80), 0);
	assert_string_equal(task_names_find(&t, 32, 32)->comm, "bash");
	assert_true(task_names_find(&t, 32, 32)->exited);
	/* a COMM record after the EXIT (rings again) does not keep the task */
	task_names_exit(&t, 31, 31, 95);
	assert_int_equal(task_names_set(&t, 31, 31, "late"), 0);
	assert_true(task_names_find(&t, 31, 31)->exited);
	/* churn: 100,000 processes forked by bash, exec'd, exited, a record sent every 1000 */
	for (int i = 0; i < 100000; i++) {
		int32_t pid = 1000 + i % 4000000;
		assert_int_equal(task_names_fork(&t, pid, pid, 10, 10, FORK_T), 0);
		char name[16];
		snprintf(name, sizeof(name), "job%d", i);
		assert_int_equal(task_names_set(&t, pid, pid, name), 0);
		assert_string_equal(task_names_find(&t, pid, pid)->comm, name);
		task_names_exit(&t, pid, pid, 2 * (uint64_t)i + 1);
		if (i % 1000 == 999)
			task_names_reap(&t);
	}
	assert_non_null(task_names_find(&t, 1000 + 99999, 1000 + 99999)); /* one reap of grace */
	task_names_reap(&t);
	assert_int_equal(t.dropped, 0);
	assert_int_equal(t.evicted, 100000 + 2); /* and 31, 32 */
	assert_non_null(task_names_find(&t, 10, 10));
	assert_non_null(task_names_find(&t, 11, 13));
	assert_null(task_names_find(&t, 1000, 1000));
	assert_true(t.n < 10);
	task_names_free(&t);
	tp_rm_rf(root);
}

/* The tasks alive at the session's start, named from /proc as perf synthesizes them when it
 * starts: every thread of every process (pid 0), or one process's; kept until their EXIT. */
static void test_task_names_snapshot_at_start(void **state)
{
	(void)state;
	char root[256];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "tasknames3"), 0);
	put(root, 40, 40, "bash");
	put(root, 50, 50, "server");
	put(root, 50, 52, "io-worker");
	put(root, 60, 60, "kworker/0:1-ev"); /* a kernel thread: its /proc name as read now */
	char junk[300];
	snprintf(junk, sizeof(junk), "%s/self", root); /* not a task */
	mkdir(junk, 0755);
	struct task_names t;
	task_names_init(&t, root);
	assert_int_equal(task_names_snapshot(&t, 50), 2);
	assert_null(task_names_find(&t, 40, 40));
	assert_string_equal(task_names_find(&t, 50, 52)->thread, "io-worker");
	assert_string_equal(task_names_find(&t, 50, 52)->comm, "server");
	assert_int_equal(task_names_snapshot(&t, 0), 2); /* the others; the known ones once */
	assert_int_equal(t.n, 4);
	assert_string_equal(task_names_find(&t, 40, 40)->comm, "bash");
	assert_string_equal(task_names_find(&t, 60, 60)->thread, "kworker/0:1-ev");
	assert_false(task_names_find(&t, 40, 40)->sampled); /* declared only once sampled */
	/* a child of a process older than the session, gone before its FORK record is read */
	tp_rm_rf(root);
	assert_int_equal(task_names_fork(&t, 41, 41, 40, 40, FORK_T), 0);
	assert_string_equal(task_names_find(&t, 41, 41)->comm, "bash");
	task_names_free(&t);
}

/* Pid reuse within a session (w44a): a process started on a pid the session knew is a new
 * incarnation with its own mappings (first_map_id: the next mapping id when its FORK came); the
 * entry keeps the earlier process's names and incarnation until its samples are sent, and a sample
 * older than that process's EXIT is its; a pid seen once and evicted is still known (one bit each). */
static void test_task_names_pid_reuse_incarnations(void **state)
{
	(void)state;
	char root[256];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "tasknames4"), 0);
	put(root, 10, 10, "bash");
	struct task_names t;
	task_names_init(&t, root);
	assert_int_equal(task_names_fork(&t, 40, 40, 10, 10, 100), 0); /* a pid the session never saw */
	assert_int_equal(task_names_set(&t, 40, 40, "fq_alpha"), 0);
	struct task_name *e = task_names_find(&t, 40, 40);
	assert_int_equal(e->inc, 0);
	assert_false(e->prev_valid);
	assert_int_equal(task_names_inc_of(&t, 40, 150), 0);
	e->sampled = e->declared = true;
	task_names_exit(&t, 40, 40, 200);
	t.next_map_id = 7;
	assert_int_equal(task_names_fork(&t, 40, 40, 10, 10, 300), 0); /* pid 40 again */
	assert_int_equal(task_names_set(&t, 40, 40, "fq_other"), 0);
	e = task_names_find(&t, 40, 40);
	assert_true(e->inc > 0);
	assert_int_equal(e->first_map_id, 7);
	assert_string_equal(e->comm, "fq_other");
	assert_false(e->declared);
	assert_false(e->sampled);
	assert_true(e->prev_valid);
	assert_int_equal(e->prev_inc, 0);
	assert_string_equal(e->prev_comm, "fq_alpha");
	assert_true(e->prev_declared);
	assert_int_equal(e->boundary_ns, 200);
	uint32_t second = e->inc;
	assert_int_equal(task_names_inc_of(&t, 40, 350), second); /* after fq_alpha's exit: fq_other's */
	assert_false(e->prev_pending);
	assert_int_equal(task_names_inc_of(&t, 40, 150), 0); /* before it: fq_alpha's, kept apart */
	assert_true(e->prev_pending);
	assert_int_equal(task_names_inc_of(&t, 40, 0), second); /* no stamp: the current process */
	/* a thread of the new process carries its incarnation */
	assert_int_equal(task_names_fork(&t, 40, 41, 40, 40, 310), 0);
	assert_int_equal(task_names_find(&t, 40, 41)->inc, second);
	/* gone and evicted, then the pid once more: still a new incarnation */
	task_names_exit(&t, 40, 41, 390);
	task_names_exit(&t, 40, 40, 400);
	task_names_reap(&t);
	task_names_reap(&t);
	assert_null(task_names_find(&t, 40, 40));
	t.next_map_id = 9;
	assert_int_equal(task_names_fork(&t, 40, 40, 10, 10, 500), 0);
	e = task_names_find(&t, 40, 40);
	assert_true(e->inc > second);
	assert_int_equal(e->first_map_id, 9);
	/* a pid first met in a sample (no FORK record) of a pid known before: a new incarnation too */
	assert_int_equal(task_names_fork(&t, 50, 50, 10, 10, 600), 0);
	assert_int_equal(task_names_find(&t, 50, 50)->inc, 0);
	task_names_exit(&t, 50, 50, 700);
	task_names_reap(&t);
	task_names_reap(&t);
	put(root, 50, 50, "late");
	assert_int_equal(task_names_ensure(&t, 50, 50), 1);
	assert_true(task_names_find(&t, 50, 50)->inc > 0);
	task_names_free(&t);
	tp_rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_names_from_proc_and_comm_records),
		cmocka_unit_test(test_task_names_fork_exit_churn),
		cmocka_unit_test(test_task_names_snapshot_at_start),
		cmocka_unit_test(test_task_names_pid_reuse_incarnations),
	};
	return cmocka_run_group_tests_name("task_names", tests, NULL, NULL);
}
