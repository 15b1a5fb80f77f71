/* Sessions sampled with different periods in one query (#40): an older agent's timer
 * period is exactly 1/F, a newer one's 1/F + 1/128 of it (agent/sampler.c choose_event),
 * so two sessions at the same frequency differ by 0.8 %. The query result carries one
 * frequency and period (the largest frequency's) to print; every time figure is each
 * stack's count x its own session's period: pprof's cpu values (collector export,
 * /profile) and the roofline overview's CPU time (report_function_samples). A session
 * whose own records differ (an agent upgraded within one boot) counts its samples at their
 * records' mean period. A SQLite store written by the store's own path. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "log.h"
#include "pgserver.h"
#include "query/query.h"
#include "report/report.h"
#include "sample_rec.h"
#include "store/store.h"
#include "testproc.h"
#include "views/pprof.h"
#include "views/profile.pb-c.h"
#include "views/stacks_query.h"

enum { FREQ = 99, RECORDS = 3 };

/* the old agent's period (1 s / 99 Hz) and the new one's (1/128 longer) */
static const uint64_t period_old = 1000000000 / FREQ, period_new = period_old + period_old / 128;

struct agent {
	const char *id;
	int32_t pid;
	uint64_t period; /* 0: the record has none (an older collector's store): 1 s / freq_hz */
	uint64_t samples;
	int64_t sid;
	uint64_t upgraded_at, period_after; /* from this seq on (0: never), records of this period */
	uint64_t ns;			    /* exact: each record's samples x its own period */
};

static void put_agent(struct store *s, struct agent *a)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)a->id;
	h.boot_id = 1;
	h.board = "host";
	h.realtime_ns = 1700000000000000000ull;
	uint64_t max_seq;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &a->sid, &max_seq, NULL), 0);
	for (uint64_t seq = 1; seq <= RECORDS; seq++) {
		/* two stacks a record: samples of both in each */
		int32_t pid[2] = {a->pid, a->pid}, tid[2] = {a->pid, a->pid};
		uint64_t ip[2] = {0x400000, 0x400040}, count[2] = {seq + (uint64_t)a->pid % 7, 2 * seq};
		uint32_t stack[2] = {0, 0};
		struct sample_rec_keys k = {2, pid, tid, ip, stack, count};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, seq, &k);
		sm.freq_hz = FREQ;
		sm.period = a->upgraded_at && seq >= a->upgraded_at ? a->period_after : a->period;
		assert_int_equal(store_put_record(s, a->sid, &env, 100), 1);
		a->samples += count[0] + count[1];
		a->ns += (count[0] + count[1]) * (sm.period ? sm.period : 1000000000 / FREQ);
	}
}

static void test_query_periods_mixed_sessions_exact(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqp"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	/* the old agent's session first: before #40's fix its period (1/F) was the query's for all */
	struct agent ag[3] = {{.id = "board-old", .pid = 3001, .period = period_old},
			      {.id = "board-new", .pid = 3002, .period = period_new},
			      {.id = "board-older", .pid = 3003, .period = 0}};
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	for (int i = 0; i < 3; i++)
		put_agent(s, &ag[i]);
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	query_opts_free(&qo);
	assert_int_equal(r->nsessions, 3);
	assert_int_equal(r->freq_hz, FREQ);
	/* exact: each session's samples x its own period (none: 1 s / freq_hz, = period_old here) */
	uint64_t want_ns = 0, want_total = 0;
	for (int i = 0; i < 3; i++) {
		want_ns += ag[i].samples * (ag[i].period ? ag[i].period : 1000000000 / FREQ);
		want_total += ag[i].samples;
	}
	assert_int_equal(r->total, want_total);
	/* every sample's leaf: one name (unresolved addresses of files that are not there) */
	char leaf[128] = "";
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		assert_int_equal(k->sample_ns, k->pid == 3002 ? period_new : period_old);
		const char *fn = r->frames[k->frames[0]].function;
		if (!leaf[0])
			snprintf(leaf, sizeof(leaf), "%s", fn);
		assert_string_equal(fn, leaf);
	}
	struct stack_set set;
	assert_int_equal(stack_set_from_query(r, &set), 0);
	query_result_free(r);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&set, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	uint64_t got_ns = 0, got_n = 0, new_ns = 0, new_n = 0;
	for (size_t i = 0; i < p->n_sample; i++) {
		const Perftools__Profiles__Sample *sp = p->sample[i];
		assert_int_equal(sp->n_value, 2);
		got_n += (uint64_t)sp->value[0];
		got_ns += (uint64_t)sp->value[1];
		for (size_t l = 0; l < sp->n_label; l++)
			if (strcmp(p->string_table[sp->label[l]->key], "pid") == 0 &&
			    sp->label[l]->num == 3002) {
				new_n += (uint64_t)sp->value[0];
				new_ns += (uint64_t)sp->value[1];
			}
	}
	assert_int_equal(got_n, want_total);
	assert_int_equal(new_n, ag[1].samples);
	assert_int_equal(new_ns, ag[1].samples * period_new);
	assert_int_equal(got_ns, want_ns);
	/* the one `period` printed is the highest frequency's, and the comment says they differ */
	assert_true(p->period == (int64_t)period_old || p->period == (int64_t)period_new);
	assert_int_equal(p->n_comment, 1);
	assert_non_null(strstr(p->string_table[p->comment[0]], "different periods"));
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	stack_set_free(&set);

	/* the overview's CPU time of a function: its samples x their own period, per session */
	for (int i = 0; i < 3; i++) {
		uint64_t count = 0, ns = 0;
		int64_t freq = 0;
		assert_int_equal(report_function_samples(s, ag[i].sid, NULL, leaf, &count, &freq, &ns), 0);
		assert_int_equal(freq, FREQ);
		assert_int_equal(count, ag[i].samples);
		assert_int_equal(ns, ag[i].samples * (ag[i].period ? ag[i].period : 1000000000 / FREQ));
	}
	store_close(s);
	tp_rm_rf(tmp);
}

/* An agent upgraded within one boot (one session: agent id and boot): its records 1..2 at the
 * old period, 3..4 at the new one. The session's samples stand for their records' mean period
 * (to the ns): its time in pprof and the overview is the exact sum within half a ns a sample. */
static void upgraded_within_session(const char *path)
{
	struct agent ag = {.id = "board-upgraded",
			   .pid = 3004,
			   .period = period_old,
			   .upgraded_at = 3,
			   .period_after = period_new};
	struct store *s;
	assert_int_equal(store_open(path, 0, &s), 0);
	put_agent(s, &ag);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(store_open(path, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	query_opts_free(&qo);
	assert_int_equal(r->total, ag.samples);
	assert_int_equal(r->nsessions, 1);
	uint64_t half = ag.samples / 2 + 1;
	uint64_t mean = r->sessions[0].sample_ns;
	assert_true(mean > period_old && mean < period_new);
	const char *leaf = r->stacks[0].nframes ? r->frames[r->stacks[0].frames[0]].function : "";
	char fn[128];
	snprintf(fn, sizeof(fn), "%s", leaf);
	struct stack_set set;
	assert_int_equal(stack_set_from_query(r, &set), 0);
	query_result_free(r);
	uint8_t *raw = NULL;
	size_t len = 0;
	assert_int_equal(pprof_encode(&set, &raw, &len), 0);
	Perftools__Profiles__Profile *p = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(p);
	uint64_t got_ns = 0;
	for (size_t i = 0; i < p->n_sample; i++)
		got_ns += (uint64_t)p->sample[i]->value[1];
	fprintf(stderr,
		"upgraded session: %llu samples, %llu ns exact, %llu ns in pprof (mean period %llu ns)\n",
		(unsigned long long)ag.samples, (unsigned long long)ag.ns, (unsigned long long)got_ns,
		(unsigned long long)mean);
	assert_true(got_ns + half >= ag.ns && got_ns <= ag.ns + half);
	perftools__profiles__profile__free_unpacked(p, NULL);
	free(raw);
	stack_set_free(&set);
	uint64_t count = 0, ns = 0;
	int64_t freq = 0;
	assert_int_equal(report_function_samples(s, ag.sid, NULL, fn, &count, &freq, &ns), 0);
	assert_int_equal(count, ag.samples);
	assert_true(ns + half >= ag.ns && ns <= ag.ns + half);
	store_close(s);
}

static void test_query_periods_upgraded_within_session(void **state)
{
	(void)state;
	char tmp[256], path[300];
	assert_int_equal(tp_tmpdir(tmp, sizeof(tmp), "tqu"), 0);
	snprintf(path, sizeof(path), "%s/store.db", tmp);
	upgraded_within_session(path);
	tp_rm_rf(tmp);
}

/* The same on PostgreSQL (a real server on 127.0.0.1; skipped with the reason without one). */
static void test_query_periods_upgraded_within_session_pg(void **state)
{
	(void)state;
	struct pgserver pg;
	char why[512], uri[512];
	if (pg_start(&pg, why, sizeof(why)) < 0) {
		fprintf(stderr, "skipped: %s\n", why);
		skip();
	}
	int rc = pg_new_db(&pg, "periods", uri, sizeof(uri));
	if (rc == 0)
		upgraded_within_session(uri);
	pg_stop(&pg);
	assert_int_equal(rc, 0);
}

int main(void)
{
	log_init("test_query_periods", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_periods_mixed_sessions_exact),
	    cmocka_unit_test(test_query_periods_upgraded_within_session),
	    cmocka_unit_test(test_query_periods_upgraded_within_session_pg),
	};
	return cmocka_run_group_tests_name("query_periods", tests, NULL, NULL);
}
