/* agent/proc_maps.c: the mapping table has no fixed cap and holds for days of
 * churn: processes that exited (EXIT records, or gone from /proc) are evicted
 * once their mappings were declared (one reap of grace after the exit), memory stays under the stated bound,
 * drops are counted, a forked child gone before its maps were read runs its
 * parent's code, late records from another CPU's ring do not resurrect or
 * kill the wrong incarnation of a pid. The /proc tree is a temp dir laid out
 * as the kernel's (fs/proc/task_mmu.c, show_map_vma: "start-end perms offset
 * dev inode path"). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <cmocka.h>

#include "proc_maps.h"
#include "testproc.h"

static void declare_all(struct proc_maps *pm)
{
	size_t pi = 0, mi = 0;
	struct proc_mapping *m;
	while ((m = proc_maps_next(pm, &pi, &mi)))
		m->declared = true;
}

static size_t count_iter(struct proc_maps *pm)
{
	size_t pi = 0, mi = 0, n = 0;
	while (proc_maps_next(pm, &pi, &mi))
		n++;
	return n;
}

static void add_process(struct proc_maps *pm, int pid, uint64_t t)
{
	proc_maps_fork(pm, pid, 1, t);
	char path[64];
	for (int j = 0; j < 6; j++) {
		snprintf(path, sizeof(path), "/nonexistent/lib%d.so", j);
		assert_int_equal(proc_maps_add(pm, pid, 0x400000 + 0x100000 * (uint64_t)j, 0x480000 + 0x100000 * (uint64_t)j,
					       0, path),
				 1);
	}
}

/* 20,000 processes of six mappings each (120,000 mappings, 30 times the old
 * 4,096 cap) come and go; the table ends holding only the live one, and
 * never more than the bound. */
static void test_proc_maps_churn_evicts_exited(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	add_process(&pm, 7, 1); /* a long-lived program */
	size_t peak = 0;
	uint32_t last_id = 0;
	for (int i = 0; i < 20000; i++) {
		int pid = 1000 + i % 30000;
		add_process(&pm, pid, 10 + 2 * (uint64_t)i);
		const struct proc_mapping *m = proc_maps_find(&pm, pid, 0x400010);
		assert_non_null(m);
		assert_true(m->id > last_id); /* ids increase, never reused */
		last_id = m->id;
		proc_maps_exit(&pm, pid, 11 + 2 * (uint64_t)i);
		if (i % 100 == 99) { /* a record sent: everything declared, the dead evicted */
			declare_all(&pm);
			proc_maps_reap(&pm);
		}
		if (pm.bytes > peak)
			peak = pm.bytes;
	}
	declare_all(&pm);
	proc_maps_reap(&pm);
	proc_maps_reap(&pm); /* the last exits' round of grace */
	assert_int_equal(pm.nprocs, 1);
	assert_int_equal(pm.nmaps, 6);
	assert_int_equal(count_iter(&pm), 6);
	assert_int_equal(pm.dropped, 0);
	assert_int_equal(pm.evicted, 20000 * 6);
	assert_true(peak < PROC_MAPS_MEM_MAX);
	assert_non_null(proc_maps_find(&pm, 7, 0x400010)); /* the live one is still there */
	assert_null(proc_maps_find(&pm, 1000, 0x400010));
	fprintf(stderr, "# 20000 processes: peak %zu bytes, %zu bytes at the end\n", peak, pm.bytes);
	proc_maps_free(&pm);
}

/* A mapping that was never declared (no record sent yet) stays: the samples
 * in the next record may need it. */
static void test_proc_maps_undeclared_dead_stay(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	add_process(&pm, 50, 1);
	proc_maps_exit(&pm, 50, 2);
	assert_int_equal(proc_maps_reap(&pm), 0);
	assert_non_null(proc_maps_find(&pm, 50, 0x400010));
	declare_all(&pm);
	assert_int_equal(proc_maps_reap(&pm), 6);
	assert_int_equal(pm.nprocs, 0);
	proc_maps_free(&pm);
}

static int alive_all(pid_t pid)
{
	(void)pid;
	return 1;
}

static int alive_none_but_7(pid_t pid)
{
	return pid == 7;
}

/* Over the bound with every process alive: new mappings are dropped and
 * counted. With dead processes (no EXIT record seen: a lost record) the
 * kernel is asked and they make room. */
static void test_proc_maps_bound_drops_counted_or_reclaims(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	pm.max_bytes = 64 * 1024;
	pm.alive = alive_all;
	int added = 0, dropped = 0;
	char path[64];
	for (int i = 0; i < 2000; i++) {
		snprintf(path, sizeof(path), "/nonexistent/lib%d.so", i);
		int rc = proc_maps_add(&pm, 7 + i / 10, 0x1000 * (uint64_t)(i + 1), 0x1000 * (uint64_t)(i + 2), 0, path);
		if (rc == 1)
			added++;
		else if (rc == -ENOSPC)
			dropped++;
		assert_true(pm.bytes <= pm.max_bytes);
	}
	assert_true(added > 100);
	assert_true(dropped > 0);
	assert_int_equal(pm.dropped, (uint64_t)dropped);
	declare_all(&pm);
	/* now they are gone (but pid 7): room again */
	pm.alive = alive_none_but_7;
	assert_int_equal(proc_maps_add(&pm, 9000, 0x1000, 0x2000, 0, "/nonexistent/new.so"), 1);
	assert_int_equal(pm.dropped, (uint64_t)dropped);
	assert_true(pm.nprocs <= 2);
	assert_non_null(proc_maps_find(&pm, 7, 0x1000));
	proc_maps_free(&pm);
}

/* A process whose EXIT was read in this interval keeps its mappings when the bound makes the table
 * reclaim (its last samples may still be drained, w45c): only the next interval's reap evicts them. A
 * process the kernel says is gone (no EXIT record) makes room at once. */
static void test_proc_maps_reclaim_keeps_exit_grace(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	pm.max_bytes = 16 * 1024;
	pm.alive = alive_none_but_7;
	proc_maps_fork(&pm, 50, 1, 10);
	assert_int_equal(proc_maps_add(&pm, 50, 0x400000, 0x480000, 0, "/nonexistent/exited.so"), 1);
	declare_all(&pm);
	proc_maps_exit(&pm, 50, 20);
	char path[64];
	int added = 0;
	for (int i = 0; i < 400; i++) { /* pids 100..: gone without an EXIT record, reclaimed at the bound */
		snprintf(path, sizeof(path), "/nonexistent/lib%d.so", i);
		if (proc_maps_add(&pm, 100 + i, 0x1000, 0x2000, 0, path) == 1)
			added++;
		declare_all(&pm);
		assert_true(pm.bytes <= pm.max_bytes);
	}
	assert_int_equal(added, 400); /* the gone ones made room */
	assert_non_null(proc_maps_find(&pm, 50, 0x400100)); /* the exited one is still there */
	proc_maps_reap(&pm);
	assert_non_null(proc_maps_find(&pm, 50, 0x400100)); /* the interval of its exit */
	proc_maps_reap(&pm);
	assert_null(proc_maps_find(&pm, 50, 0x400100));
	proc_maps_free(&pm);
}

/* A child forked and gone before its /proc/PID/maps was read, that never
 * exec'd (no MMAP records of its own): its samples fall in its parent's
 * mappings, copied under its pid. */
static void test_proc_maps_forked_child_gets_parent_mappings(void **state)
{
	(void)state;
	char root[256], fmt[320];
	assert_int_equal(tp_tmpdir(root, sizeof(root), "procmaps"), 0);
	snprintf(fmt, sizeof(fmt), "%s/%%d/maps", root); /* nothing under it: every process is gone */
	struct proc_maps pm;
	proc_maps_init(&pm);
	pm.maps_fmt = fmt;
	assert_int_equal(proc_maps_add(&pm, 300, 0x555000, 0x556000, 0x1000, "/usr/bin/server"), 1);
	proc_maps_fork(&pm, 301, 300, 5);
	proc_maps_exit(&pm, 301, 6);
	assert_int_equal(proc_maps_ensure(&pm, 301, 0x555100, 1000, 200), 1);
	const struct proc_mapping *m = proc_maps_find(&pm, 301, 0x555100);
	assert_non_null(m);
	assert_string_equal(m->path, "/usr/bin/server");
	assert_int_equal(m->pgoff, 0x1000);
	assert_true(m->dead); /* declared with the next record, then evicted */
	declare_all(&pm);
	proc_maps_reap(&pm);
	assert_non_null(proc_maps_find(&pm, 301, 0x555100)); /* one reap of grace after its exit */
	proc_maps_reap(&pm);
	assert_null(proc_maps_find(&pm, 301, 0x555100));
	assert_non_null(proc_maps_find(&pm, 300, 0x555100));
	/* its FORK record read after the sample that found it gone (another CPU's ring) */
	assert_true(proc_maps_ensure(&pm, 302, 0x555100, 3000, 200) <= 0);
	proc_maps_fork(&pm, 302, 300, 7);
	m = proc_maps_find(&pm, 302, 0x555100);
	assert_non_null(m);
	assert_string_equal(m->path, "/usr/bin/server");
	/* a child sampled before its exec, read after: its own mappings are the new program's,
	 * the ip is in its parent's code (what perf's copy of the parent's maps at fork says) */
	proc_maps_fork(&pm, 303, 300, 8);
	assert_int_equal(proc_maps_add(&pm, 303, 0x7000000, 0x7001000, 0, "/usr/bin/newprog"), 1);
	assert_int_equal(proc_maps_ensure(&pm, 303, 0x555200, 4000, 200), 1);
	m = proc_maps_find(&pm, 303, 0x555200);
	assert_non_null(m);
	assert_string_equal(m->path, "/usr/bin/server");
	assert_non_null(proc_maps_find(&pm, 303, 0x7000010));
	/* the same with its FORK record read after the sample */
	assert_int_equal(proc_maps_add(&pm, 304, 0x7000000, 0x7001000, 0, "/usr/bin/newprog"), 1);
	assert_true(proc_maps_ensure(&pm, 304, 0x555200, 5000, 200) <= 0);
	assert_null(proc_maps_find(&pm, 304, 0x555200));
	proc_maps_fork(&pm, 304, 300, 9);
	assert_non_null(proc_maps_find(&pm, 304, 0x555200));
	/* a process seen only in a sample, gone: its entry does not stay */
	assert_true(proc_maps_ensure(&pm, 444, 0x1234, 2000, 200) <= 0);
	proc_maps_reap(&pm);
	proc_maps_reap(&pm);
	assert_null(proc_maps_proc(&pm, 444));
	proc_maps_free(&pm);
}

/* Records of one pid from two CPUs' rings arrive out of order. */
static void test_proc_maps_late_records_and_pid_reuse(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	add_process(&pm, 77, 100);
	proc_maps_exit(&pm, 77, 200);
	/* the pid is used again (fork at 300); the old incarnation's exit, late, changes nothing */
	proc_maps_fork(&pm, 77, 1, 300);
	assert_int_equal(proc_maps_add(&pm, 77, 0x900000, 0x901000, 0, "/usr/bin/new"), 1);
	proc_maps_exit(&pm, 77, 200);
	assert_false(proc_maps_proc(&pm, 77)->exited);
	declare_all(&pm);
	assert_int_equal(proc_maps_reap(&pm), 6); /* the old incarnation's six */
	assert_non_null(proc_maps_find(&pm, 77, 0x900010));
	assert_null(proc_maps_find(&pm, 77, 0x400010));
	/* a fork record older than the exit of the incarnation it started: ignored */
	proc_maps_exit(&pm, 77, 400);
	proc_maps_fork(&pm, 77, 1, 300);
	assert_true(proc_maps_proc(&pm, 77)->exited);
	proc_maps_reap(&pm);
	assert_non_null(proc_maps_proc(&pm, 77));
	proc_maps_reap(&pm);
	assert_null(proc_maps_proc(&pm, 77));
	proc_maps_free(&pm);
}

/* w44a: the next process on a pid maps the same file at the same address as the one before (a non-PIE
 * program run again): a mapping with an id of its own, not the dead one's (the collector tells the
 * pid's processes' mappings apart by id). */
static void test_proc_maps_pid_reuse_same_mapping_new_id(void **state)
{
	(void)state;
	struct proc_maps pm;
	proc_maps_init(&pm);
	add_process(&pm, 78, 100);
	uint32_t first = pm.next_id + 1; /* what mmap_watch gives the next process as its first_map_id */
	proc_maps_exit(&pm, 78, 200);
	proc_maps_fork(&pm, 78, 1, 300);
	assert_int_equal(proc_maps_add(&pm, 78, 0x400000, 0x480000, 0, "/nonexistent/lib0.so"), 1);
	const struct proc_mapping *m = proc_maps_find(&pm, 78, 0x400010);
	assert_non_null(m);
	assert_int_equal(m->id, first);
	assert_false(m->dead);
	assert_int_equal(proc_maps_add(&pm, 78, 0x400000, 0x480000, 0, "/nonexistent/lib0.so"), 0); /* known now */
	proc_maps_free(&pm);
}

static void test_proc_maps_parse_line_kernel_format(void **state)
{
	(void)state;
	char line[] = "7f0000001000-7f0000002000 r-xp 00001000 08:01 1234    /usr/lib/libc.so.6 (deleted)\n";
	uint64_t s, e, off;
	char *path;
	assert_true(proc_maps_parse_line(line, &s, &e, &off, &path));
	assert_int_equal(s, 0x7f0000001000ull);
	assert_int_equal(off, 0x1000);
	assert_string_equal(path, "/usr/lib/libc.so.6");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_proc_maps_churn_evicts_exited),
		cmocka_unit_test(test_proc_maps_undeclared_dead_stay),
		cmocka_unit_test(test_proc_maps_bound_drops_counted_or_reclaims),
		cmocka_unit_test(test_proc_maps_reclaim_keeps_exit_grace),
		cmocka_unit_test(test_proc_maps_forked_child_gets_parent_mappings),
		cmocka_unit_test(test_proc_maps_pid_reuse_same_mapping_new_id),
		cmocka_unit_test(test_proc_maps_late_records_and_pid_reuse),
		cmocka_unit_test(test_proc_maps_parse_line_kernel_format),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
