/* agent/task_names.c: names read from a /proc tree once per task, COMM
 * records (exec, thread renames) overriding them, declaration state, and the
 * bound. The /proc tree is a temp dir laid out as the kernel's
 * (fs/proc/base.c: /proc/PID/comm, /proc/PID/task/TID/comm, each "name\n"). */
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
	/* bounded: past TASK_NAMES_MAX it starts over */
	for (int32_t i = 0; i < (int32_t)TASK_NAMES_MAX + 10; i++)
		assert_true(task_names_set(&t, 1000000 + i, 1000000 + i, "x") == 0);
	assert_true(t.n <= TASK_NAMES_MAX);
	task_names_free(&t);
	tp_rm_rf(root);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_task_names_from_proc_and_comm_records),
	};
	return cmocka_run_group_tests_name("task_names", tests, NULL, NULL);
}
