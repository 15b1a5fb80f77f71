/* The agent's perf-map reader (agent/perf_map.c, issue 39): lines parsed as
 * perf's dso__load_perf_map (tools/perf/util/symbol.c) parses them (strtoull
 * base 16 for start and size, the rest of the line the name; short or
 * size-0 lines skipped), only whole lines, appended lines read when the file
 * grows (not more than once per PERF_MAP_CHECK_GAP_NS; a look asked for within
 * the gap is taken by perf_maps_retry() after it), a rewritten file read
 * from its start, records of at most PERF_MAP_REC_SYMS symbols that pass the
 * wire check, what emit refused read again; never through a symlink or from a
 * file of another owner than the process's. And the wire check itself, and the
 * collector's store of the symbols (store_perf_map.c). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "perf_map.h"
#include "profiler.pb-c.h"
#include "store/store.h"
#include "store/store_perf_map.h"
#include "validate.h"
#include "validate_perf_map.h"

#define GAP PERF_MAP_CHECK_GAP_NS

struct got {
	size_t n, records;
	uint64_t start[8192], size[8192];
	char name[8192][64];
	uint64_t first_offset;
	int fail_with; /* emit returns this (0: accept) */
	int invalid;   /* records the wire check refused */
};

static int emit(void *ctx, Prof__Envelope *env)
{
	struct got *g = ctx;
	if (g->fail_with)
		return g->fail_with;
	char err[200];
	env->seq = 1;
	if (envelope_validate(env, err, sizeof(err)) != 0)
		g->invalid++;
	const Prof__PerfMap *m = env->perf_map;
	if (g->records++ == 0)
		g->first_offset = m->offset;
	for (size_t i = 0; i < m->n_start && g->n < 8192; i++, g->n++) {
		g->start[g->n] = m->start[i];
		g->size[g->n] = m->size[i];
		snprintf(g->name[g->n], sizeof(g->name[g->n]), "%s", m->name[i]);
	}
	return 0;
}

struct fx {
	char dir[64], fmt[128], file[128];
	struct perf_maps pm;
	struct got g;
};

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	snprintf(f->dir, sizeof(f->dir), "/tmp/test_perf_map.XXXXXX");
	if (!f || !mkdtemp(f->dir))
		return -1;
	snprintf(f->fmt, sizeof(f->fmt), "%s/perf-%%d.map", f->dir);
	snprintf(f->file, sizeof(f->file), "%s/perf-%d.map", f->dir, (int)getpid());
	perf_maps_init(&f->pm);
	f->pm.path_fmt = f->fmt;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	char p[160];
	perf_maps_free(&f->pm);
	unlink(f->file);
	snprintf(p, sizeof(p), "%s/target", f->dir);
	unlink(p);
	rmdir(f->dir);
	free(f);
	return 0;
}

static void put(const char *path, const char *mode, const char *text)
{
	FILE *fp = fopen(path, mode);
	assert_non_null(fp);
	fputs(text, fp);
	fclose(fp);
}

static void test_perf_map_parses_as_perf_and_reads_what_grows(void **state)
{
	struct fx *f = *state;
	put(f->file, "w",
	    "7f0000001000 40 LazyCompile:*hot /srv/app.js:12\n" /* node --perf-basic-prof: the name has spaces
								 */
	    "0x7f0000002000 0x10 Stub:x\n"			/* strtoull base 16 takes 0x */
	    "7f0000003000 0 sizezero\n"				/* size 0: nothing to name */
	    "7f0000004000 10 ab\n"				/* perf skips a name under 3 characters */
	    "xyz\n"						/* no numbers */
	    "7f0000005000 20 half wr");				/* being written: no newline yet */
	int pid = (int)getpid();
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), 2);
	assert_int_equal(f->g.n, 2);
	assert_int_equal(f->g.start[0], 0x7f0000001000ull);
	assert_int_equal(f->g.size[0], 0x40);
	assert_string_equal(f->g.name[0], "LazyCompile:*hot /srv/app.js:12");
	assert_int_equal(f->g.start[1], 0x7f0000002000ull);
	assert_string_equal(f->g.name[1], "Stub:x");
	/* the line completes and one more comes; not looked at again within the gap */
	put(f->file, "a", "itten\n7f0000006000 8 more\n");
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP + GAP / 2, emit, &f->g), 0);
	assert_int_equal(perf_maps_retry(&f->pm, GAP + GAP / 2 + 1, emit, &f->g),
			 0); /* still within the gap */
	assert_int_equal(perf_maps_retry(&f->pm, 2 * GAP + 1, emit, &f->g),
			 2);						    /* asked within it: looked at */
	assert_int_equal(perf_maps_retry(&f->pm, 4 * GAP, emit, &f->g), 0); /* not asked again */
	assert_int_equal(f->g.n, 4);
	assert_string_equal(f->g.name[2], "half written");
	assert_string_equal(f->g.name[3], "more");
	assert_int_equal(perf_maps_check(&f->pm, pid, 5 * GAP, emit, &f->g), 0); /* nothing new */
	/* written anew (shorter: another incarnation of the pid): read from its start */
	put(f->file, "w", "1000 10 again\n");
	assert_int_equal(perf_maps_check(&f->pm, pid, 6 * GAP, emit, &f->g), 1);
	assert_string_equal(f->g.name[4], "again");
	assert_int_equal(f->g.invalid, 0);
	assert_int_equal(f->pm.refused, 0);
}

static void test_perf_map_records_bounded_and_resent_after_failure(void **state)
{
	struct fx *f = *state;
	FILE *fp = fopen(f->file, "w");
	assert_non_null(fp);
	for (int i = 0; i < 5000; i++)
		fprintf(fp, "%x 10 fn_%d\n", 0x100000 + i * 0x10, i);
	fclose(fp);
	int pid = (int)getpid();
	f->g.fail_with = -EIO; /* not sent: read again at the next look */
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), -EIO);
	f->g.fail_with = 0;
	assert_int_equal(perf_maps_check(&f->pm, pid, 2 * GAP, emit, &f->g), 5000);
	assert_int_equal(f->g.records, 2); /* 4096 + 904 */
	assert_int_equal(f->g.first_offset, 0);
	assert_int_equal(f->g.invalid, 0);
	assert_string_equal(f->g.name[4999], "fn_4999");
	assert_int_equal(f->g.start[4096], 0x100000 + 4096 * 0x10);
	/* the spool dropped records: everything again */
	perf_maps_forget(&f->pm);
	assert_int_equal(perf_maps_check(&f->pm, pid, 3 * GAP, emit, &f->g), 5000);
}

static void test_perf_map_never_through_symlink_or_other_owner(void **state)
{
	struct fx *f = *state;
	char target[160];
	snprintf(target, sizeof(target), "%s/target", f->dir);
	put(target, "w", "1000 10 planted\n");
	assert_int_equal(symlink(target, f->file), 0);
	int pid = (int)getpid();
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), 0);
	assert_int_equal(f->g.n, 0);
	assert_int_equal(f->pm.refused, 1);
	unlink(f->file);
	/* the process's user: the owner of its /proc/PID (here a directory standing for it) */
	char proc[160];
	snprintf(proc, sizeof(proc), "%s/proc", f->dir);
	assert_int_equal(mkdir(proc, 0755), 0);
	f->pm.proc_fmt = proc;
	put(f->file, "w", "1000 10 planted\n");
	uid_t user = getuid() + 4242, other = getuid() + 4343;
	if (chown(proc, user, (gid_t)-1) != 0 || chown(f->file, other, (gid_t)-1) != 0) {
		print_message("skipped (the owner part): chown needs root here\n");
		rmdir(proc);
		return;
	}
	assert_int_equal(perf_maps_check(&f->pm, pid, 2 * GAP, emit, &f->g), 0); /* another user's */
	assert_int_equal(f->g.n, 0);
	assert_int_equal(f->pm.refused, 2);
	assert_int_equal(chown(f->file, user, (gid_t)-1), 0); /* the process's user's: read */
	assert_int_equal(perf_maps_check(&f->pm, pid, 3 * GAP, emit, &f->g), 1);
	put(f->file, "w", "2000 10 roots\n");
	assert_int_equal(chown(f->file, 0, (gid_t)-1), 0); /* root's: read, as perf does */
	assert_int_equal(perf_maps_check(&f->pm, pid, 4 * GAP, emit, &f->g), 1);
	/* the process gone before its user was seen: root's file only */
	perf_maps_free(&f->pm);
	perf_maps_init(&f->pm);
	f->pm.path_fmt = f->fmt;
	f->pm.proc_fmt = "/nonexistent/%d";
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), 1);
	assert_int_equal(chown(f->file, user, (gid_t)-1), 0);
	perf_maps_free(&f->pm);
	perf_maps_init(&f->pm);
	f->pm.path_fmt = f->fmt;
	f->pm.proc_fmt = "/nonexistent/%d";
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), 0);
	assert_int_equal(f->pm.refused, 1);
	rmdir(proc);
}

/* Processes without a map file do not push out the read position of one with a file. */
static void test_perf_map_position_kept_among_many_processes(void **state)
{
	struct fx *f = *state;
	f->pm.proc_fmt = f->dir; /* every pid's "process" is owned by us */
	char file[160];
	snprintf(file, sizeof(file), "%s/perf-%d.map", f->dir, 999999);
	put(file, "w", "1000 10 first_fn\n");
	uint64_t t = GAP;
	assert_int_equal(perf_maps_check(&f->pm, 999999, t, emit, &f->g), 1);
	for (int pid = 1000000; pid < 1000000 + 4 * PERF_MAP_PIDS; pid++)
		assert_int_equal(perf_maps_check(&f->pm, pid, t += GAP, emit, &f->g), 0);
	put(file, "a", "2000 10 second_fn\n");
	assert_int_equal(perf_maps_check(&f->pm, 999999, t += GAP, emit, &f->g), 1); /* only the new line */
	assert_string_equal(f->g.name[1], "second_fn");
	unlink(file);
}

/* What the process appends after its map's path went out of reach (its mount namespace ended with it;
 * here: the path unlinked) is read from the file held open. */
static void test_perf_map_read_on_after_path_gone(void **state)
{
	struct fx *f = *state;
	FILE *w = fopen(f->file, "w");
	assert_non_null(w);
	fputs("1000 10 before_fn\n", w);
	fflush(w);
	int pid = (int)getpid();
	assert_int_equal(perf_maps_check(&f->pm, pid, GAP, emit, &f->g), 1);
	assert_int_equal(unlink(f->file), 0);
	fputs("2000 10 after_fn\n", w);
	fflush(w);
	assert_int_equal(perf_maps_check(&f->pm, pid, 2 * GAP, emit, &f->g), 1);
	assert_string_equal(f->g.name[1], "after_fn");
	fclose(w);
}

static int check(Prof__PerfMap *m)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_PERF_MAP;
	env.perf_map = m;
	char err[200] = "";
	return envelope_validate(&env, err, sizeof(err));
}

static void test_perf_map_wire_check(void **state)
{
	(void)state;
	uint64_t start[2] = {0x1000, 0x2000}, size[2] = {0x10, 0x20};
	char *name[2] = {"a_fn", "b_fn"};
	Prof__PerfMap m = PROF__PERF_MAP__INIT;
	m.pid = 7;
	m.n_start = m.n_size = m.n_name = 2;
	m.start = start;
	m.size = size;
	m.name = name;
	assert_int_equal(check(&m), 0);
	m.n_name = 1; /* columns differ */
	assert_int_not_equal(check(&m), 0);
	m.n_name = 2;
	size[1] = 0;
	assert_int_not_equal(check(&m), 0);
	size[1] = UINT64_MAX; /* wraps */
	assert_int_not_equal(check(&m), 0);
	size[1] = 0x20;
	name[1] = "";
	assert_int_not_equal(check(&m), 0);
	name[1] = "b_fn";
	m.pid = 0;
	assert_int_not_equal(check(&m), 0);
}

static int put_map(struct store *s, int64_t sid, uint64_t seq, int32_t pid, size_t n, uint64_t *start,
		   uint64_t *size, char **name)
{
	Prof__PerfMap m = PROF__PERF_MAP__INIT;
	m.pid = pid;
	m.n_start = m.n_size = m.n_name = n;
	m.start = start;
	m.size = size;
	m.name = name;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_PERF_MAP;
	env.perf_map = &m;
	return store_put_record(s, sid, &env, 100);
}

/* The collector's side: perf_map_syms per (session, pid, start), a later line for a start replacing
 * the earlier one (code the JIT replaced), read back sorted by (pid, start); a bad record refused. */
static void test_perf_map_store_latest_line_per_start(void **state)
{
	struct fx *f = *state;
	char db[160];
	snprintf(db, sizeof(db), "%s/store.sqlite", f->dir);
	struct store *s;
	assert_int_equal(store_open(db, 0, &s), 0);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = "jit";
	h.boot_id = 1;
	int64_t sid = 0;
	uint64_t max_seq = 0;
	bool created = false;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &sid, &max_seq, &created), 0);
	uint64_t st1[3] = {0x2000, 0x1000, 0x5000}, sz1[3] = {0x10, 0x10, 0x20};
	char *nm1[3] = {"b_fn", "a_fn", "c_fn"};
	assert_true(put_map(s, sid, 1, 42, 2, st1, sz1, nm1) >= 0);
	assert_true(put_map(s, sid, 2, 7, 1, st1 + 2, sz1 + 2, nm1 + 2) >= 0);
	uint64_t st2[1] = {0x2000}, sz2[1] = {0x8};
	char *nm2[1] = {"b_fn_recompiled"};
	assert_true(put_map(s, sid, 3, 42, 1, st2, sz2, nm2) >= 0);
	uint64_t bad_size[1] = {0};
	assert_true(put_map(s, sid, 4, 42, 1, st2, bad_size, nm2) < 0);
	struct perf_map_sym *v;
	size_t n;
	assert_int_equal(store_perf_map_syms(s, sid, &v, &n), 0);
	assert_int_equal(n, 3);
	assert_int_equal(v[0].pid, 7);
	assert_string_equal(v[0].name, "c_fn");
	assert_int_equal(v[1].pid, 42);
	assert_string_equal(v[1].name, "a_fn");
	assert_int_equal(v[2].start, 0x2000);
	assert_int_equal(v[2].end, 0x2008);
	assert_string_equal(v[2].name, "b_fn_recompiled");
	store_perf_map_free(v, n);
	store_close(s);
	char p[200];
	for (const char *sfx = ""; sfx; sfx = strcmp(sfx, "") == 0	 ? "-wal"
					      : strcmp(sfx, "-wal") == 0 ? "-shm"
									 : NULL) {
		snprintf(p, sizeof(p), "%s%s", db, sfx);
		unlink(p);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_perf_map_parses_as_perf_and_reads_what_grows, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_records_bounded_and_resent_after_failure, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_never_through_symlink_or_other_owner, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_position_kept_among_many_processes, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_perf_map_read_on_after_path_gone, setup, teardown),
	    cmocka_unit_test(test_perf_map_wire_check),
	    cmocka_unit_test_setup_teardown(test_perf_map_store_latest_line_per_start, setup, teardown),
	};
	return cmocka_run_group_tests_name("perf_map", tests, NULL, NULL);
}
