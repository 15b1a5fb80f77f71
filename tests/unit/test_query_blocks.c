/* Reading the sample blocks (collector/query/query_blocks.c, #40): decoded on
 * threads, the result is the one the calling thread alone gives, stack for
 * stack in the same order; a --pid query passes over the blocks whose pid
 * range or pid bits (sample_blocks.pid_*) rule the pid out, and still counts
 * every sample of that pid. A SQLite store written by the store's own path.
 * A session whose Hello had no wall clock (realtime 0) and whose first
 * interval starts at time 0 is read like any other (#40). --comm passes over
 * blocks as --pid does. The key cache gives what decoding every key gives. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "testproc.h"

enum {
	KEYS = 24,
	GEN = 250,
	GENS = 4
}; /* generation 3's keys are first met past the 256 blocks the
	      calling thread reads alone, on the threads */

struct fx {
	char tmp[256], path[300];
	uint64_t want_all;
	uint64_t want_pid[GENS][4]; /* per generation and pid slot */
};

/* Record seq: KEYS keys of the 4 pids of its generation (2000 + 10 * gen + 2 * slot: even pids only, so
 * an odd one between falls in the range without its bit), counts varying with seq and key. */
static int put_record(struct store *s, int64_t sid, uint64_t seq, struct fx *f)
{
	int32_t pid[KEYS], tid[KEYS];
	uint64_t ip[KEYS], count[KEYS];
	uint32_t stack[KEYS];
	unsigned gen = (unsigned)((seq - 1) / GEN);
	for (int i = 0; i < KEYS; i++) {
		int slot = (int)((i + seq) % 4);
		pid[i] = 2000 + 10 * (int32_t)gen + 2 * slot;
		tid[i] = pid[i] + i % 2;
		/* key 0 at an address of its own in each record: every block adds a stack, so the order the
		 * stacks come in shows whether the threads' sets were merged back in block order */
		ip[i] = i ? 0x400000 + 0x40 * (uint64_t)i : 0x480000 + 0x40 * seq;
		stack[i] = 0;
		count[i] = 1 + (seq * 7 + (uint64_t)i) % 5;
		f->want_all += count[i];
		f->want_pid[gen][slot] += count[i];
	}
	struct sample_rec_keys k = {KEYS, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	/* the generation's pids map a file that is not there: an address is a frame of its own (its offset)
	 */
	Prof__Mapping m[4], *mp[4];
	for (int i = 0; i < 4; i++) {
		prof__mapping__init(&m[i]);
		m[i].id = gen * 4 + (uint32_t)i + 1;
		m[i].pid = 2000 + 10 * (int32_t)gen + 2 * i;
		m[i].start = 0x400000;
		m[i].end = 0x500000;
		m[i].path = "/nonexistent/app";
		mp[i] = &m[i];
	}
	/* and are named by generation and slot: "g1s1" is pid 2012 (a --comm of one generation's blocks) */
	Prof__TaskName tn[4], *tp[4];
	char names[4][16];
	for (int i = 0; i < 4; i++) {
		prof__task_name__init(&tn[i]);
		tn[i].pid = tn[i].tid = m[i].pid;
		snprintf(names[i], sizeof(names[i]), "g%us%d", gen, i);
		tn[i].comm = tn[i].thread = names[i];
		tp[i] = &tn[i];
	}
	if ((seq - 1) % GEN == 0) {
		sm.n_new_mappings = 4;
		sm.new_mappings = mp;
		sm.n_new_tasks = 4;
		sm.new_tasks = tp;
	}
	return store_put_record(s, sid, &env, 100);
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->tmp, sizeof(f->tmp), "tqb") < 0)
		return -1;
	snprintf(f->path, sizeof(f->path), "%s/store.db", f->tmp);
	struct store *s;
	if (store_open(f->path, 0, &s) < 0)
		return -1;
	int64_t sid;
	int rc = sample_rec_session(s, "board-q", &sid);
	for (uint64_t seq = 1; rc >= 0 && seq <= GENS * GEN; seq++)
		rc = put_record(s, sid, seq, f);
	if (rc >= 0)
		rc = store_commit(s);
	store_close(s);
	*state = f;
	return rc < 0 ? -1 : 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tp_rm_rf(f->tmp);
	free(f);
	return 0;
}

static struct query_result *run_comm(struct fx *f, const char *threads, int32_t pid, const char *comm)
{
	setenv("PROF_QUERY_THREADS", threads, 1);
	struct store *s;
	assert_int_equal(store_open(f->path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	if (pid) {
		qo.f.pids[0] = pid;
		qo.f.npids = 1;
	}
	if (comm) {
		char err[128];
		assert_int_equal(query_opt(&qo, QUERY_OPT_COMM, comm, err, sizeof(err)), 1);
	}
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	store_close(s);
	query_opts_free(&qo);
	unsetenv("PROF_QUERY_THREADS");
	return r;
}

static struct query_result *run(struct fx *f, const char *threads, int32_t pid)
{
	return run_comm(f, threads, pid, NULL);
}

static void test_query_blocks_threads_same_result(void **state)
{
	struct fx *f = *state;
	struct query_result *one = run(f, "1", 0), *two = run(f, "2", 0);
	assert_int_equal(one->total, f->want_all);
	assert_int_equal(two->total, f->want_all);
	assert_int_equal(one->blocks_read, GENS * GEN);
	assert_int_equal(two->blocks_read, GENS * GEN);
	assert_int_equal(one->nstacks, two->nstacks);
	/* per generation: 4 pids with KEYS - 1 (tid, ip) each, and one per record */
	assert_int_equal(one->nstacks, GENS * (4 * (KEYS - 1) + GEN));
	for (size_t i = 0; i < one->nstacks; i++) {
		const struct query_stack *a = &one->stacks[i], *b = &two->stacks[i];
		assert_int_equal(a->pid, b->pid);
		assert_int_equal(a->tid, b->tid);
		assert_int_equal(a->count, b->count);
		assert_int_equal(a->nframes, b->nframes);
		assert_int_equal(one->frames[a->frames[0]].ip, two->frames[b->frames[0]].ip);
	}
	query_result_free(one);
	query_result_free(two);
}

static void assert_same_result(const struct query_result *a, const struct query_result *b)
{
	assert_int_equal(a->total, b->total);
	assert_int_equal(a->nstacks, b->nstacks);
	for (size_t i = 0; i < a->nstacks; i++) {
		const struct query_stack *x = &a->stacks[i], *y = &b->stacks[i];
		assert_int_equal(x->pid, y->pid);
		assert_int_equal(x->tid, y->tid);
		assert_int_equal(x->count, y->count);
		assert_int_equal(x->nframes, y->nframes);
		assert_int_equal(a->frames[x->frames[0]].ip, b->frames[y->frames[0]].ip);
	}
}

/* The key cache (query_kcache.c, #40 w40k) against every key decoded (PROF_QUERY_KEY_CACHE=0): the same
 * stacks, counts and order, on one thread and two, over all, a --pid and a --comm. */
static void test_query_blocks_key_cache_same_result(void **state)
{
	struct fx *f = *state;
	const char *threads[] = {"1", "2"};
	for (int t = 0; t < 2; t++)
		for (int q = 0; q < 3; q++) {
			int32_t pid = q == 1 ? 2012 : 0;
			const char *comm = q == 2 ? "g2s3" : NULL;
			struct query_result *on = run_comm(f, threads[t], pid, comm);
			setenv("PROF_QUERY_KEY_CACHE", "0", 1);
			struct query_result *off = run_comm(f, threads[t], pid, comm);
			unsetenv("PROF_QUERY_KEY_CACHE");
			assert_true(on->total > 0);
			if (q == 0)
				assert_int_equal(on->total, f->want_all);
			assert_same_result(on, off);
			query_result_free(on);
			query_result_free(off);
		}
}

static void test_query_blocks_pid_passed_over(void **state)
{
	struct fx *f = *state;
	const char *threads[] = {"1", "2"};
	for (int t = 0; t < 2; t++) {
		struct query_result *r = run(f, threads[t], 2012); /* generation 1, slot 1 */
		assert_int_equal(r->total, f->want_pid[1][1]);
		assert_int_equal(r->blocks_read, GEN);
		assert_int_equal(r->blocks_passed, (GENS - 1) * GEN);
		query_result_free(r);
		r = run(f, threads[t], 2013); /* in generation 1's range, without its bit */
		assert_int_equal(r->total, 0);
		assert_int_equal(r->blocks_read, 0);
		assert_int_equal(r->blocks_passed, GENS * GEN);
		query_result_free(r);
		r = run(f, threads[t],
			2000 + 64 + 6); /* generation 0's bit of pid 2006 (mod 64), out of range */
		assert_int_equal(r->total, 0);
		assert_int_equal(r->blocks_read, 0);
		query_result_free(r);
		r = run(f, threads[t], 2036); /* generation 3, slot 3 */
		assert_int_equal(r->total, f->want_pid[3][3]);
		assert_int_equal(r->blocks_read, GEN);
		query_result_free(r);
	}
}

/* --comm is turned into the session's pids of those names before the blocks are read: the blocks
 * of the other generations are passed over as for --pid, and every sample of the names counted. */
static void test_query_blocks_comm_passed_over(void **state)
{
	struct fx *f = *state;
	const char *threads[] = {"1", "2"};
	for (int t = 0; t < 2; t++) {
		struct query_result *r = run_comm(f, threads[t], 0, "g1s1"); /* pid 2012 */
		assert_int_equal(r->total, f->want_pid[1][1]);
		assert_int_equal(r->blocks_read, GEN);
		assert_int_equal(r->blocks_passed, (GENS - 1) * GEN);
		for (size_t i = 0; i < r->nstacks; i++)
			assert_string_equal(r->stacks[i].comm, "g1s1");
		query_result_free(r);
		r = run_comm(f, threads[t], 0, "g1s1,g3s3,nosuch");
		assert_int_equal(r->total, f->want_pid[1][1] + f->want_pid[3][3]);
		assert_int_equal(r->blocks_read, 2 * GEN);
		query_result_free(r);
		r = run_comm(f, threads[t], 2036, "g1s1"); /* --pid of another name: nothing */
		assert_int_equal(r->total, 0);
		assert_int_equal(r->blocks_read, 0);
		query_result_free(r);
		r = run_comm(f, threads[t], 0, "nosuch"); /* no pid of that name: no block read */
		assert_int_equal(r->total, 0);
		assert_int_equal(r->blocks_read, 0);
		assert_int_equal(r->nsessions, 1);
		query_result_free(r);
	}
}

/* Two sessions: one of an agent whose Hello had no wall clock (realtime 0), its first interval
 * [0, 1 ms) (sample_rec: record seq at seq ms over 1 ms), and one with a wall clock. Both are
 * counted, the first one's range starts at 0 and the result's range spans both. */
static void test_query_blocks_session_at_time_zero(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqz"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	const char *agents[2] = {"board-noclock", "board-clock"};
	const int64_t realtime[2] = {0, 1700000000000000000ll};
	uint64_t want = 0;
	for (int a = 0; a < 2; a++) {
		Prof__Hello h = PROF__HELLO__INIT;
		h.schema_version = 1;
		h.agent_id = (char *)agents[a];
		h.boot_id = 1;
		h.board = "host";
		h.realtime_ns = (uint64_t)realtime[a];
		int64_t sid;
		uint64_t max_seq;
		assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &sid, &max_seq, NULL), 0);
		for (uint64_t seq = 1; seq <= 3; seq++) {
			int32_t pid[1] = {3000 + a}, tid[1] = {3000 + a};
			uint64_t ip[1] = {0x400000}, count[1] = {seq + 10 * (uint64_t)a};
			uint32_t stack[1] = {0};
			struct sample_rec_keys k = {1, pid, tid, ip, stack, count};
			Prof__Samples sm;
			Prof__Envelope env;
			sample_rec_init(&sm, &env, seq, &k);
			assert_int_equal(store_put_record(s, sid, &env, 100), 1);
			want += count[0];
		}
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	store_close(s);
	assert_int_equal(r->total, want);
	assert_int_equal(r->intervals, 6);
	assert_int_equal(r->nsessions, 2);
	const struct query_session_info *z = NULL;
	for (size_t i = 0; i < r->nsessions; i++)
		if (strcmp(r->sessions[i].agent_id, agents[0]) == 0)
			z = &r->sessions[i];
	assert_non_null(z);
	assert_int_equal(z->samples, 1 + 2 + 3);
	assert_int_equal(z->first_ns, 0);
	assert_int_equal(z->last_ns, 3000000);
	assert_int_equal(r->first_ns, 0);
	assert_true(r->last_ns == realtime[1] + 3000000);
	query_result_free(r);
	tp_rm_rf(tmp);
}

int main(void)
{
	log_init("test_query_blocks", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_query_blocks_threads_same_result, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_query_blocks_key_cache_same_result, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_query_blocks_pid_passed_over, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_query_blocks_comm_passed_over, setup, teardown),
	    cmocka_unit_test(test_query_blocks_session_at_time_zero),
	};
	return cmocka_run_group_tests_name("query_blocks", tests, NULL, NULL);
}
