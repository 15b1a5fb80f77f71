/* A board whose programs restart under new pids (issue #40, w45d; collector/query/query_stacks.c):
 * P short-lived processes of NAMES names, each living one record, each mapping the same file at the
 * same place and hit at F addresses of it, beside one long-lived process ("keeper", pid KEEPER) in
 * every record. What `collector report` asks for (query_opts.merge_tasks) must hold one stack per
 * (name, address), not per process, with the samples of each exact and the pid 0 where a stack holds
 * several; the query's peak memory (the process's VmHWM over its VmRSS before it, after clear_refs)
 * must stay under MEM_BOUND, which the per-process stacks and frame cache of the code before exceeded
 * (~120 MiB here in a release build). Read in slices of a few blocks (PROF_QUERY_SLICE_KEYS), with or
 * without merge_tasks, the result must be the same, stack for stack in the same order, as in one
 * piece. Past the result's limit of stacks (QUERY_MAX_STACKS), every sample is still counted. A
 * SQLite store written by the store's own path. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "testproc.h"
#include "views/pprof.h"
#include "views/profile.pb-c.h"
#include "views/stacks_query.h"

enum { P = 3000, NAMES = 10, F = 100, PID0 = 10000, KEEPER = 500, KEEPER_F = 4 };
#define MEM_BOUND (48ll << 20) /* bytes over the RSS before the query */

struct fx {
	char tmp[256], path[300], phased[300];
};

/* The samples of address j in each record's process: 1 to 3. */
static uint64_t count_of(unsigned j)
{
	return 1 + j % 3;
}

/* Record i + 1: process PID0 + i named "w<i % NAMES>" (its mapping id i + 2 declared with it), F keys,
 * and the keeper's KEEPER_F keys (its mapping id 1 and name declared in record 1). */
static int put_record(struct store *s, int64_t sid, unsigned i)
{
	enum { N = F + KEEPER_F };
	int32_t pid[N], tid[N];
	uint64_t ip[N], count[N];
	uint32_t stack[N];
	for (unsigned j = 0; j < N; j++) {
		bool keeper = j >= F;
		pid[j] = tid[j] = keeper ? KEEPER : PID0 + (int32_t)i;
		ip[j] = 0x401000 + 0x40 * (keeper ? j - F : j);
		count[j] = keeper ? 1 : count_of(j);
		stack[j] = 0;
	}
	struct sample_rec_keys k = {N, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, i + 1, &k);
	Prof__Mapping m[2], *mp[2] = {&m[0], &m[1]};
	Prof__TaskName tn[2], *tp[2] = {&tn[0], &tn[1]};
	char comm[16];
	snprintf(comm, sizeof(comm), "w%u", i % NAMES);
	for (int x = 0; x < 2; x++) {
		prof__mapping__init(&m[x]);
		m[x].start = 0x400000;
		m[x].end = 0x500000;
		m[x].path = "/nonexistent/worker";
		prof__task_name__init(&tn[x]);
	}
	m[0].id = i + 2;
	m[0].pid = PID0 + (int32_t)i;
	tn[0].pid = tn[0].tid = PID0 + (int32_t)i;
	tn[0].comm = tn[0].thread = comm;
	m[1].id = 1;
	m[1].pid = KEEPER;
	tn[1].pid = tn[1].tid = KEEPER;
	tn[1].comm = tn[1].thread = "keeper";
	sm.n_new_mappings = i == 0 ? 2 : 1;
	sm.new_mappings = mp;
	sm.n_new_tasks = i == 0 ? 2 : 1;
	sm.new_tasks = tp;
	return store_put_record(s, sid, &env, 100);
}

/* The phased store (review r6 of w45d): LONG_R records of the keeper alone, LONG_F keys each (the
 * same in every record), then BURST records of one short-lived process each, BURST_F keys. */
enum { LONG_R = 200, LONG_F = 200, BURST = 3000, BURST_F = 10, PHASE_SLICE = 2000 };

static int put_phased(struct store *s, int64_t sid, unsigned i)
{
	enum { N = LONG_F > BURST_F ? LONG_F : BURST_F };
	bool keeper = i < LONG_R;
	unsigned n = keeper ? LONG_F : BURST_F;
	int32_t pid[N], tid[N];
	uint64_t ip[N], count[N];
	uint32_t stack[N];
	int32_t p = keeper ? KEEPER : PID0 + (int32_t)(i - LONG_R);
	for (unsigned j = 0; j < n; j++) {
		pid[j] = tid[j] = p;
		ip[j] = 0x401000 + 0x40 * j;
		count[j] = count_of(j);
		stack[j] = 0;
	}
	struct sample_rec_keys k = {n, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, i + 1, &k);
	Prof__Mapping m, *mp = &m;
	Prof__TaskName tn, *tp = &tn;
	char comm[16];
	snprintf(comm, sizeof(comm), keeper ? "keeper" : "w%u", i % NAMES);
	prof__mapping__init(&m);
	m.start = 0x400000;
	m.end = 0x500000;
	m.path = "/nonexistent/worker";
	m.id = keeper ? 1 : i - LONG_R + 2;
	m.pid = p;
	prof__task_name__init(&tn);
	tn.pid = tn.tid = p;
	tn.comm = tn.thread = comm;
	bool first = i == 0 || !keeper;
	sm.n_new_mappings = first;
	sm.new_mappings = &mp;
	sm.n_new_tasks = first;
	sm.new_tasks = &tp;
	return store_put_record(s, sid, &env, 100);
}

static int fill(const char *path, unsigned n, int (*put)(struct store *, int64_t, unsigned))
{
	struct store *s;
	if (store_open(path, 0, &s) < 0)
		return -1;
	int64_t sid;
	int rc = sample_rec_session(s, "board-c", &sid);
	for (unsigned i = 0; rc >= 0 && i < n; i++)
		rc = put(s, sid, i);
	if (rc >= 0)
		rc = store_commit(s);
	store_close(s);
	return rc < 0 ? -1 : 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->tmp, sizeof(f->tmp), "tqc") < 0)
		return -1;
	*state = f;
	snprintf(f->path, sizeof(f->path), "%s/churn.db", f->tmp);
	snprintf(f->phased, sizeof(f->phased), "%s/phased.db", f->tmp);
	return fill(f->path, P, put_record) < 0 || fill(f->phased, LONG_R + BURST, put_phased) < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tp_rm_rf(f->tmp);
	free(f);
	return 0;
}

static struct query_result *run_store_opts(const char *path, bool merge, bool tasks_only, const char *slice_keys)
{
	if (slice_keys)
		setenv("PROF_QUERY_SLICE_KEYS", slice_keys, 1);
	struct store *s;
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.merge_tasks = merge;
	qo.tasks_only = tasks_only;
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	store_close(s);
	query_opts_free(&qo);
	unsetenv("PROF_QUERY_SLICE_KEYS");
	return r;
}

static struct query_result *run_store(const char *path, bool merge, const char *slice_keys)
{
	return run_store_opts(path, merge, false, slice_keys);
}

static struct query_result *run(struct fx *f, bool merge, const char *slice_keys)
{
	return run_store(f->path, merge, slice_keys);
}

/* A field of /proc/self/status in bytes (-1: none). */
static long long status_bytes(const char *field)
{
	FILE *in = fopen("/proc/self/status", "r");
	char line[256];
	long long v = -1;
	size_t n = strlen(field);
	while (in && fgets(line, sizeof(line), in))
		if (strncmp(line, field, n) == 0 && line[n] == ':')
			v = strtoll(line + n + 1, NULL, 10) * 1024;
	if (in)
		fclose(in);
	return v;
}

/* The query's peak (VmHWM after clear_refs, over VmRSS before it), in this process: a child of the
 * test started for it alone (TQC_MEASURE_STORE; under ASan without its quarantine, which would count
 * freed memory, so only this measurement runs without it). Exit 0 under MEM_BOUND, 1 over, 77 when
 * the peak cannot be reset (no /proc/self/clear_refs). */
static int measure_child(const char *path)
{
	FILE *cr = fopen("/proc/self/clear_refs", "w"); /* "5": VmHWM back to VmRSS */
	if (!cr || fputs("5", cr) < 0 || fclose(cr) != 0)
		return 77;
	long long rss0 = status_bytes("VmRSS");
	struct store *s;
	if (store_open(path, STORE_READ_ONLY, &s) < 0)
		return 2;
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.merge_tasks = true;
	struct query_result *r;
	int rc = query_run(s, &qo, &r);
	store_close(s);
	query_opts_free(&qo);
	struct query_top t;
	if (rc < 0 || query_top(r, QUERY_BY_PROCESS, &t) < 0)
		return 2;
	long long hwm = status_bytes("VmHWM");
	printf("query of %d processes: %.1f MiB over the RSS before it (bound %lld MiB)\n", P,
	       (double)(hwm - rss0) / (1 << 20), MEM_BOUND >> 20);
	query_top_free(&t);
	query_result_free(r);
	return rss0 > 0 && hwm > 0 && hwm - rss0 < MEM_BOUND ? 0 : 1;
}

/* One stack per (name, address) and one per keeper address, each's samples exact; by process, each
 * name's samples; the query's memory under MEM_BOUND (measured in a child: measure_child). */
static void test_query_churn_stacks_per_name_bounded(void **state)
{
	struct fx *f = *state;
	pid_t c = fork();
	assert_true(c >= 0);
	if (c == 0) {
		setenv("TQC_MEASURE_STORE", f->path, 1);
#if defined(__SANITIZE_ADDRESS__)
		const char *o = getenv("ASAN_OPTIONS");
		char opts[1024];
		snprintf(opts, sizeof(opts), "%s%squarantine_size_mb=0:thread_local_quarantine_size_kb=0", o ? o : "",
			 o && *o ? ":" : "");
		setenv("ASAN_OPTIONS", opts, 1);
#endif
		execl("/proc/self/exe", "test_query_churn", (char *)NULL);
		_exit(3);
	}
	int st = 0;
	assert_int_equal(waitpid(c, &st, 0), c);
	assert_true(WIFEXITED(st));
	if (WEXITSTATUS(st) == 77)
		print_message("memory bound not checked: no /proc/self/clear_refs (Linux < 4.0 or no procfs)\n");
	else
		assert_int_equal(WEXITSTATUS(st), 0); /* 1: over MEM_BOUND (its line above) */
	struct query_result *r = run(f, true, NULL);
	struct query_top t;
	assert_int_equal(query_top(r, QUERY_BY_PROCESS, &t), 0);

	uint64_t per_name = 0, want_total = 0;
	for (unsigned j = 0; j < F; j++)
		per_name += count_of(j) * (P / NAMES);
	want_total = per_name * NAMES + (uint64_t)P * KEEPER_F;
	assert_int_equal(r->total, want_total);
	assert_int_equal(r->nstacks, NAMES * F + KEEPER_F);
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		assert_int_equal(k->nframes, 1);
		const struct query_frame *fr = &r->frames[k->frames[0]];
		unsigned j = (unsigned)((fr->file_off - 0x1000) / 0x40);
		if (strcmp(k->comm, "keeper") == 0) {
			assert_int_equal(k->pid, KEEPER);
			assert_int_equal(k->count, P);
		} else {
			assert_int_equal(k->comm[0], 'w');
			assert_int_equal(k->pid, 0); /* several */
			assert_int_equal(k->tid, 0);
			assert_int_equal(k->count, count_of(j) * (P / NAMES));
		}
	}
	assert_int_equal(t.nrows, NAMES + 1);
	for (size_t i = 0; i < t.nrows; i++) {
		if (strcmp(t.rows[i].name, "keeper") == 0) {
			assert_int_equal(t.rows[i].self, P * KEEPER_F);
			assert_int_equal(t.rows[i].pid, KEEPER);
		} else {
			assert_int_equal(t.rows[i].self, per_name);
			assert_int_equal(t.rows[i].pid, 0);
		}
	}
	query_top_free(&t);
	query_result_free(r);
}

static void same_result(const struct query_result *a, const struct query_result *b)
{
	assert_int_equal(a->total, b->total);
	assert_int_equal(a->nstacks, b->nstacks);
	assert_int_equal(a->nframes, b->nframes);
	for (size_t i = 0; i < a->nstacks; i++) {
		const struct query_stack *x = &a->stacks[i], *y = &b->stacks[i];
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_string_equal(x->comm, y->comm);
		assert_string_equal(x->thread, y->thread);
		assert_int_equal(x->nframes, y->nframes);
		for (size_t j = 0; j < x->nframes; j++)
			assert_int_equal(a->frames[x->frames[j]].file_off, b->frames[y->frames[j]].file_off);
	}
}

/* Slices of ~20 records (the keeper's keys in each of them) read as the range in one piece; and with
 * the frame cache emptied every 50 entries (PROF_QUERY_FRAME_CACHE; 2^18 otherwise, never reached
 * here), the same stacks and frames. */
static void test_query_churn_slices_as_one_piece(void **state)
{
	struct fx *f = *state;
	{
		struct query_result *a = run(f, true, NULL);
		setenv("PROF_QUERY_FRAME_CACHE", "50", 1);
		struct query_result *b = run(f, true, NULL);
		unsetenv("PROF_QUERY_FRAME_CACHE");
		same_result(a, b);
		query_result_free(a);
		query_result_free(b);
	}
	for (int merge = 0; merge < 2; merge++) {
		struct query_result *one = run(f, merge, "100000000");
		struct query_result *sliced = run(f, merge, "2000");
		same_result(one, sliced);
		assert_int_equal(one->nstacks, merge ? NAMES * F + KEEPER_F : (size_t)P * F + KEEPER_F);
		query_result_free(one);
		query_result_free(sliced);
	}
}

/* Past PROF_QUERY_MAX_STACKS (QUERY_MAX_STACKS, here 1000) distinct stacks, the rest's samples in one
 * "[other]" stack: every sample still counted, the first 1000 stacks as without the limit. */
static void test_query_churn_stack_limit_keeps_totals(void **state)
{
	struct fx *f = *state;
	struct query_result *all = run(f, false, NULL);
	setenv("PROF_QUERY_MAX_STACKS", "1000", 1);
	struct query_result *r = run(f, false, NULL);
	unsetenv("PROF_QUERY_MAX_STACKS");
	assert_int_equal(r->nstacks, 1001);
	assert_int_equal(r->total, all->total);
	uint64_t sum = 0, kept = 0;
	for (size_t i = 0; i < r->nstacks; i++)
		sum += r->stacks[i].count;
	for (size_t i = 0; i < 1000; i++) {
		assert_int_equal(r->stacks[i].count, all->stacks[i].count);
		assert_int_equal(r->stacks[i].pid, all->stacks[i].pid);
		kept += r->stacks[i].count;
	}
	assert_int_equal(sum, r->total);
	const struct query_stack *o = &r->stacks[1000];
	assert_string_equal(o->comm, "[other]");
	assert_string_equal(r->frames[o->frames[0]].function, "[other]");
	assert_int_equal(o->count, r->total - kept);
	assert_int_equal(r->other, r->total - kept);
	assert_int_equal(all->other, 0);
	/* marked as no task's (review r6: pid/tid 0 as the idle task's), a function of its own */
	assert_true(o->other);
	for (size_t i = 0; i < 1000; i++)
		assert_false(r->stacks[i].other);
	assert_int_equal(r->frames[o->frames[0]].resolved, 1);
	/* so the pprof export names it: its sample's leaf has a line of function "[other]" */
	struct stack_set ss;
	assert_int_equal(stack_set_from_query(r, &ss), 0);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&ss, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	size_t named = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Location *l = p->location[p->sample[i]->location_id[0] - 1];
		if (l->n_line == 1) {
			const char *fn = p->string_table[p->function[l->line[0]->function_id - 1]->name];
			if (strcmp(fn, "[other]") == 0) {
				assert_int_equal(p->sample[i]->value[0], o->count);
				named++;
			}
		}
	}
	assert_int_equal(named, 1);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	stack_set_free(&ss);
	query_result_free(all);
	query_result_free(r);
}

/* What `report --by thread` asks for (query_opts.tasks_only, review r6 of w45d): one stack per task,
 * no chain, so a cap of 5,000 stacks (PROF_QUERY_MAX_STACKS), above the 3,001 tasks but far below
 * their 300,004 (task, address) stacks, leaves nothing under "[other]": every thread's row, its
 * samples exact (with chains, most of them were under "[other]" and their rows missing). */
static void test_query_churn_by_thread_rows_past_stack_cap(void **state)
{
	struct fx *f = *state;
	setenv("PROF_QUERY_MAX_STACKS", "5000", 1);
	struct query_result *r = run_store_opts(f->path, false, true, NULL);
	unsetenv("PROF_QUERY_MAX_STACKS");
	assert_int_equal(r->other, 0);
	assert_int_equal(r->nstacks, P + 1);
	struct query_top t;
	assert_int_equal(query_top(r, QUERY_BY_THREAD, &t), 0);
	assert_int_equal(t.nrows, P + 1);
	uint64_t per_proc = 0;
	for (unsigned j = 0; j < F; j++)
		per_proc += count_of(j);
	size_t workers = 0;
	for (size_t i = 0; i < t.nrows; i++) {
		if (strcmp(t.rows[i].process, "keeper") == 0) {
			assert_int_equal(t.rows[i].self, P * KEEPER_F);
			assert_int_equal(t.rows[i].pid, KEEPER);
		} else {
			assert_int_equal(t.rows[i].self, per_proc);
			assert_true(t.rows[i].pid >= PID0 && t.rows[i].pid < PID0 + P);
			workers++;
		}
	}
	assert_int_equal(workers, P);
	query_top_free(&t);
	query_result_free(r);
}

/* Long-lived processes first (their keys repeat: each slice's limit grows), then a burst of short-lived
 * ones: a slice still ends once it has summed about PHASE_SLICE distinct keys (one thread: PHASE_SLICE
 * and the keys of the record that reached it; two: and at most the batches in flight, 5 x 64 blocks of
 * BURST_F keys), not the whole burst's BURST x BURST_F keys in one piece as before; the stacks the
 * same as in one piece. */
static void test_query_churn_long_lived_first_stays_sliced(void **state)
{
	struct fx *f = *state;
	char sk[32];
	snprintf(sk, sizeof(sk), "%d", PHASE_SLICE);
	struct query_result *one = run_store(f->phased, false, "100000000");
	assert_int_equal(one->nstacks, LONG_F + BURST * BURST_F);
	assert_true(one->keys_held_max >= (uint64_t)BURST * BURST_F);
	for (int threads = 1; threads <= 2; threads++) {
		setenv("PROF_QUERY_THREADS", threads == 1 ? "1" : "2", 1);
		struct query_result *r = run_store(f->phased, false, sk);
		unsetenv("PROF_QUERY_THREADS");
		uint64_t bound = PHASE_SLICE + LONG_F + (threads == 1 ? 0 : 5 * 64 * BURST_F);
		print_message("%d thread(s): at most %llu keys summed at once (bound %llu; in one piece %llu)\n",
			      threads, (unsigned long long)r->keys_held_max, (unsigned long long)bound,
			      (unsigned long long)one->keys_held_max);
		assert_true(r->keys_held_max <= bound);
		same_result(one, r);
		query_result_free(r);
	}
	query_result_free(one);
}

/* Records of one time (t_ns) read in seq order (review r6 of w45d: no ORDER BY, so SQLite read them in
 * its index's order, by their lowest pid, and PostgreSQL in whatever order its plan gave): the stack
 * of record 1 (pid 900) is met before that of record 2 (pid 800). */
static int put_tie(struct store *s, int64_t sid, unsigned i)
{
	int32_t pid = i == 0 ? 900 : 800, tid = pid;
	uint64_t ip = 0x401000 + 0x40 * i, count = 1;
	uint32_t stack = 0;
	struct sample_rec_keys k = {1, &pid, &tid, &ip, &stack, &count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, i + 1, &k);
	sm.t_ns = 1000000; /* both */
	return store_put_record(s, sid, &env, 100);
}

static void test_query_churn_same_time_blocks_in_seq_order(void **state)
{
	struct fx *f = *state;
	char path[400];
	snprintf(path, sizeof(path), "%s/ties.db", f->tmp);
	assert_int_equal(fill(path, 2, put_tie), 0);
	struct query_result *r = run_store(path, false, NULL);
	assert_int_equal(r->total, 2);
	assert_int_equal(r->nstacks, 2);
	assert_int_equal(r->stacks[0].pid, 900);
	assert_int_equal(r->stacks[1].pid, 800);
	query_result_free(r);
}

/* Records stored out of time order (record i + 1 at t_ns (LATE_R - i) s: seq and time reversed), two keys
 * each, read in slices of 3 keys: the same stacks and total as in one piece (#40 w46a: the records'
 * times and keys that cut the range into slices come unsorted, in the store's order, and are put in
 * t_ns order by the query; unsorted, the slices overlapped and missed records). */
enum { LATE_R = 40 };
static int put_late(struct store *s, int64_t sid, unsigned i)
{
	int32_t pid[2] = {700 + (int32_t)i, 700 + (int32_t)i}, tid[2] = {pid[0], pid[1]};
	uint64_t ip[2] = {0x401000, 0x401040}, count[2] = {1, 2};
	uint32_t stack[2] = {0, 0};
	struct sample_rec_keys k = {2, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, i + 1, &k);
	sm.t_ns = (uint64_t)(LATE_R - i) * 1000000000ull;
	return store_put_record(s, sid, &env, 100);
}

static void test_query_churn_slices_of_records_out_of_time_order(void **state)
{
	struct fx *f = *state;
	char path[400];
	snprintf(path, sizeof(path), "%s/late.db", f->tmp);
	assert_int_equal(fill(path, LATE_R, put_late), 0);
	struct query_result *one = run_store(path, false, "100000000");
	struct query_result *sliced = run_store(path, false, "3");
	assert_int_equal(one->total, 3 * LATE_R);
	assert_int_equal(one->nstacks, LATE_R); /* one per process: its addresses resolve to no mapping */
	same_result(one, sliced);
	query_result_free(one);
	query_result_free(sliced);
}

int main(int argc, char **argv)
{
	(void)argc;
	(void)argv;
	const char *m = getenv("TQC_MEASURE_STORE"); /* the memory measurement's child */
	if (m)
		return measure_child(m);

	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_query_churn_stacks_per_name_bounded),
		cmocka_unit_test(test_query_churn_slices_as_one_piece),
		cmocka_unit_test(test_query_churn_stack_limit_keeps_totals),
		cmocka_unit_test(test_query_churn_long_lived_first_stays_sliced),
		cmocka_unit_test(test_query_churn_by_thread_rows_past_stack_cap),
		cmocka_unit_test(test_query_churn_same_time_blocks_in_seq_order),
		cmocka_unit_test(test_query_churn_slices_of_records_out_of_time_order),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
