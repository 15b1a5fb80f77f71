/* A pid used again within one session (pid reuse, w44a; collector/query/query_incs.c): records
 * 1..N hold process "alpha" of pid 3000, records N+1..2N process "beta" that got the same pid,
 * declared as TaskName.incarnation 1 in record N+1 with its mappings from id 2. Both map their
 * file at the same address (as two runs of one non-PIE program would): each process's samples
 * must stay under its own name, resolved in its own file, whether the blocks are decoded on the
 * calling thread or on threads (N > the 256 blocks read alone), with --comm, in the samples over
 * time and after the store is downsampled over the boundary. A session whose records declare no
 * incarnation (every older agent's) reads as before: the latest name wins. A SQLite store written
 * by the store's own path. */
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

enum { N = 300, PID = 3000 };

struct fx {
	char tmp[256], path[300];
};

/* Record seq of session sid: pid PID at 0x401000 + 0x40 * (seq % 3), 2 samples (alpha) or 3 (beta);
 * with incs false, beta is declared as older agents declare a new name (incarnation 0). */
static int put_record(struct store *s, int64_t sid, uint64_t seq, bool incs)
{
	bool beta = seq > N;
	int32_t pid[1] = {PID}, tid[1] = {PID};
	uint64_t ip[1] = {0x401000 + 0x40 * (seq % 3)}, count[1] = {beta ? 3 : 2};
	uint32_t stack[1] = {0};
	struct sample_rec_keys k = {1, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	Prof__Mapping m, *mp = &m;
	prof__mapping__init(&m);
	m.id = beta ? 2 : 1;
	m.pid = PID;
	m.start = 0x400000;
	m.end = 0x500000;
	m.path = beta ? "/nonexistent/beta" : "/nonexistent/alpha";
	Prof__TaskName tn, *tp = &tn;
	prof__task_name__init(&tn);
	tn.pid = tn.tid = PID;
	tn.comm = tn.thread = beta ? "beta" : "alpha";
	if (beta && incs) {
		tn.incarnation = 1;
		tn.first_map_id = 2;
	}
	if (seq == 1 || seq == N + 1) {
		sm.n_new_mappings = 1;
		sm.new_mappings = &mp;
		sm.n_new_tasks = 1;
		sm.new_tasks = &tp;
	}
	return store_put_record(s, sid, &env, 100);
}

static int make_store(struct fx *f, bool incs)
{
	snprintf(f->path, sizeof(f->path), "%s/%s.db", f->tmp, incs ? "incs" : "older");
	struct store *s;
	if (store_open(f->path, 0, &s) < 0)
		return -1;
	int64_t sid;
	int rc = sample_rec_session(s, "board-r", &sid);
	for (uint64_t seq = 1; rc >= 0 && seq <= 2 * N; seq++)
		rc = put_record(s, sid, seq, incs);
	if (rc >= 0)
		rc = store_commit(s);
	store_close(s);
	return rc < 0 ? -1 : 0;
}

static int setup(void **state)
{
	struct fx *f = calloc(1, sizeof(*f));
	if (!f || tp_tmpdir(f->tmp, sizeof(f->tmp), "tqi") < 0)
		return -1;
	*state = f;
	return make_store(f, true);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	tp_rm_rf(f->tmp);
	free(f);
	return 0;
}

static struct query_result *run(struct fx *f, const char *threads, const char *comm, bool series)
{
	setenv("PROF_QUERY_THREADS", threads, 1);
	struct store *s;
	assert_int_equal(store_open(f->path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.series = series;
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

/* Samples per process name, and every stack's leaf in the file of its own process. */
static void sums(const struct query_result *r, uint64_t *alpha, uint64_t *beta)
{
	*alpha = *beta = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		const struct query_frame *fr = &r->frames[k->frames[0]];
		assert_int_equal(k->pid, PID);
		if (strcmp(k->comm, "alpha") == 0) {
			*alpha += k->count;
			assert_string_equal(fr->module, "alpha");
		} else {
			assert_string_equal(k->comm, "beta");
			*beta += k->count;
			assert_string_equal(fr->module, "beta");
		}
	}
}

static void test_query_incs_each_process_its_name_and_maps(void **state)
{
	struct fx *f = *state;
	const char *threads[] = {"1", "2"};
	for (int t = 0; t < 2; t++) {
		struct query_result *r = run(f, threads[t], NULL, false);
		uint64_t a, b;
		sums(r, &a, &b);
		assert_int_equal(a, 2 * N);
		assert_int_equal(b, 3 * N);
		assert_int_equal(r->total, 5 * N);
		query_result_free(r);
	}
}

static void test_query_incs_comm_filter(void **state)
{
	struct fx *f = *state;
	uint64_t a, b;
	struct query_result *r = run(f, "1", "alpha", false);
	sums(r, &a, &b);
	assert_int_equal(a, 2 * N);
	assert_int_equal(b, 0);
	query_result_free(r);
	r = run(f, "2", "beta", false);
	sums(r, &a, &b);
	assert_int_equal(a, 0);
	assert_int_equal(b, 3 * N);
	query_result_free(r);
}

static void test_query_incs_series_names(void **state)
{
	struct fx *f = *state;
	struct query_result *r = run(f, "1", NULL, true);
	uint64_t a = 0, b = 0;
	for (size_t i = 0; i < r->npoints; i++) {
		const struct query_point *p = &r->points[i];
		bool first = p->session_t_ns <= (int64_t)N * 1000000; /* record seq ends at seq ms */
		assert_string_equal(p->comm, first ? "alpha" : "beta");
		*(first ? &a : &b) += p->count;
	}
	assert_int_equal(a, 2 * N);
	assert_int_equal(b, 3 * N);
	query_result_free(r);
}

/* Windows of 64 ms over all the records: the window around record N+1 is cut there. */
static void test_query_incs_downsampled(void **state)
{
	struct fx *f = *state;
	struct store *s;
	assert_int_equal(store_open(f->path, 0, &s), 0);
	struct query_downsample_stats ds;
	assert_int_equal(query_downsample(s, INT64_MAX, 64 * 1000000ll, &ds), 0);
	store_close(s);
	assert_true(ds.blocks_in > ds.blocks_out);
	struct query_result *r = run(f, "1", NULL, false);
	uint64_t a, b;
	sums(r, &a, &b);
	assert_int_equal(a, 2 * N);
	assert_int_equal(b, 3 * N);
	query_result_free(r);
}

/* Records that declare no incarnation (an older agent's): one name for the pid, the latest, as before. */
static void test_query_incs_older_agent_as_before(void **state)
{
	struct fx *f = *state;
	assert_int_equal(make_store(f, false), 0);
	struct query_result *r = run(f, "1", NULL, false);
	uint64_t total = 0;
	for (size_t i = 0; i < r->nstacks; i++) {
		assert_string_equal(r->stacks[i].comm, "beta");
		total += r->stacks[i].count;
	}
	assert_int_equal(total, 5 * N);
	query_result_free(r);
	snprintf(f->path, sizeof(f->path), "%s/incs.db", f->tmp);
}

int main(void)
{
	log_init("test_query_incs", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_incs_each_process_its_name_and_maps),
	    cmocka_unit_test(test_query_incs_comm_filter),
	    cmocka_unit_test(test_query_incs_series_names),
	    cmocka_unit_test(test_query_incs_downsampled),
	    cmocka_unit_test(test_query_incs_older_agent_as_before),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
