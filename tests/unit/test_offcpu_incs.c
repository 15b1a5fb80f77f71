/* `collector report --offcpu` and the off-CPU flame per process, not per pid (#40 w47a; pid reuse,
 * w44a): records 1-2 declare pid 700 as incarnation 0 ("a", threads 700 and 701), records 3-4
 * declare it as incarnation 1 ("b", thread 700 only), each record with task_times of the pid's
 * tasks and samples of the pid in its own file (/nonexistent/a, /nonexistent/b); pid 800 ("c")
 * is never reused. The report gives a row per process, each with its own times and names, the
 * totals unchanged; the flame spreads each process's on-CPU time over its own sampled stacks only.
 * An older agent's session (every name incarnation 0) and an older store (no sample_task_incs)
 * read as before: one row for the pid. On SQLite and on PostgreSQL (a real server on 127.0.0.1,
 * skipped with its reason when it cannot run); and the same records sent by an agent over loopback
 * to the collector's server (decoded, checked, stored), then reported. */
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
#include "report/report.h"
#include "sample_rec.h"
#include "srvclient.h"
#include "store/store.h"
#include "store_fx.h"
#include "views/offcpu_flame.h"
#include "views/stacks.h"

enum { P = 700, T2 = 701, Q = 800 };

/* on/off ns of a task in record seq: distinct per (task, seq) so a wrong sum shows */
static uint64_t on_of(int32_t tid, uint64_t seq)
{
	return (uint64_t)tid * 1000000u + seq * 10000000u;
}
static uint64_t off_of(int32_t tid, uint64_t seq)
{
	return (uint64_t)tid * 3000000u + seq * 20000000u;
}

/* Record seq: process "a" of pid P (seq 1-2) or "b" (seq 3-4; incarnation 1 where incs, else as an
 * older agent declares a new name: incarnation 0), and "c" of pid Q. */
static int put_to(struct store *s, int64_t sid, uint64_t seq, bool incs, struct client *c, struct server *srv)
{
	bool b = seq >= 3;
	int32_t pid[2] = {P, Q}, tid[2] = {P, Q};
	uint64_t ip[2] = {0x401000, 0x401000}, count[2] = {10, 5};
	uint32_t stack[2] = {0, 0};
	struct sample_rec_keys k = {2, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	sm.backend = 1; /* bpf: the back end of task times */
	sm.event_id = 1;
	Prof__EventDesc ev, *evp = &ev;
	prof__event_desc__init(&ev);
	ev.id = 1;
	ev.name = "cpu-clock";
	if (seq == 1) {
		sm.n_new_events = 1;
		sm.new_events = &evp;
	}
	Prof__Mapping m[2], *mp[2] = {&m[0], &m[1]};
	for (int i = 0; i < 2; i++) {
		prof__mapping__init(&m[i]);
		m[i].start = 0x400000;
		m[i].end = 0x500000;
	}
	m[0].id = b ? 3 : 1;
	m[0].pid = P;
	m[0].path = b ? "/nonexistent/b" : "/nonexistent/a";
	m[1].id = 2;
	m[1].pid = Q;
	m[1].path = "/nonexistent/c";
	Prof__TaskName tn[3], *tp[3] = {&tn[0], &tn[1], &tn[2]};
	for (int i = 0; i < 3; i++)
		prof__task_name__init(&tn[i]);
	tn[0].pid = tn[0].tid = P;
	tn[0].comm = tn[0].thread = b ? "b" : "a";
	tn[1].pid = P;
	tn[1].tid = T2;
	tn[1].comm = "a";
	tn[1].thread = "a-worker";
	tn[2].pid = tn[2].tid = Q;
	tn[2].comm = tn[2].thread = "c";
	if (b && incs) {
		tn[0].incarnation = 1;
		tn[0].first_map_id = 3;
	}
	if (seq == 1 || seq == 3) {
		sm.n_new_mappings = seq == 1 ? 2 : 1;
		sm.new_mappings = mp;
		sm.n_new_tasks = seq == 1 ? 3 : 1;
		sm.new_tasks = tp;
	}
	Prof__TaskTime tt[3], *ttp[3] = {&tt[0], &tt[1], &tt[2]};
	int32_t tids[3] = {P, b ? 0 : T2, Q};
	size_t ntt = 0;
	for (int i = 0; i < 3; i++) {
		if (!tids[i])
			continue;
		prof__task_time__init(&tt[ntt]);
		tt[ntt].pid = tids[i] == Q ? Q : P;
		tt[ntt].tid = tids[i];
		tt[ntt].on_cpu_ns = on_of(tids[i], seq);
		tt[ntt].off_cpu_ns = off_of(tids[i], seq);
		tt[ntt].switches = seq;
		ntt++;
	}
	sm.n_task_times = ntt;
	sm.task_times = ttp;
	if (!c)
		return store_put_record(s, sid, &env, 100);
	uint8_t *buf = NULL; /* over the wire: decoded, checked and stored by the collector's server */
	size_t len = 0;
	frames_add(&buf, &len, &env);
	client_send(c, buf, len);
	free(buf);
	expect_ack_reaching(c, srv, seq);
	return 1;
}

static int put(struct store *s, int64_t sid, uint64_t seq, bool incs)
{
	return put_to(s, sid, seq, incs, NULL, NULL);
}

static int64_t make(struct fx *f, bool incs)
{
	struct store *s = fx_open_store(f);
	int64_t sid = fx_session(s, "offcpu-incs");
	for (uint64_t seq = 1; seq <= 4; seq++)
		assert_int_equal(put(s, sid, seq, incs), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	return sid;
}

struct rows {
	struct query_task_time v[8];
	char comm[8][16], thread[8][16];
	size_t n;
};

static int take(const struct query_task_time *t, void *arg)
{
	struct rows *r = arg;
	if (r->n == 8)
		return -ENOSPC;
	r->v[r->n] = *t;
	snprintf(r->comm[r->n], 16, "%s", t->comm);
	snprintf(r->thread[r->n], 16, "%s", t->thread);
	r->n++;
	return 0;
}

/* The report's JSON row of a process (tid 0) or a thread. */
static void row(char *buf, size_t len, int32_t pid, unsigned inc, int32_t tid, const char *comm,
		const char *thread, uint64_t on, uint64_t off, uint64_t sw)
{
	snprintf(
	    buf, len,
	    "{\"pid\":%d,\"incarnation\":%u,\"tid\":%d,\"comm\":\"%s\",\"thread\":\"%s\",\"on_cpu_ns\":%llu,"
	    "\"off_cpu_ns\":%llu,\"switches\":%llu,",
	    pid, inc, tid, comm, thread, (unsigned long long)on, (unsigned long long)off,
	    (unsigned long long)sw);
}

static char *report_json(struct store *s, int64_t sid)
{
	char *out = NULL;
	size_t len = 0;
	FILE *fp = open_memstream(&out, &len);
	assert_non_null(fp);
	struct report_opts o = {.json = true};
	assert_int_equal(report_offcpu(s, sid, &o, fp), 0);
	fclose(fp);
	return out;
}

static void has_row(const char *json, int32_t pid, unsigned inc, int32_t tid, const char *comm,
		    const char *thread, uint64_t on, uint64_t off, uint64_t sw)
{
	char want[512];
	row(want, sizeof(want), pid, inc, tid, comm, thread, on, off, sw);
	if (!strstr(json, want))
		fail_msg("report --offcpu --json lacks %s in\n%s", want, json);
}

static void test_offcpu_incs_report_per_process(void **state)
{
	struct fx *f = *state;
	int64_t sid = make(f, true);
	struct store *s;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct rows r = {0};
	assert_int_equal(query_task_times(s, sid, take, &r), 0);
	assert_int_equal(r.n, 4); /* (P, P, 0), (P, P, 1), (P, T2, 0), (Q, Q, 0) */
	uint64_t on = 0, off = 0;
	for (size_t i = 0; i < r.n; i++) {
		on += r.v[i].on_ns;
		off += r.v[i].off_ns;
	}
	uint64_t won = 0, woff = 0; /* every row written, once */
	for (uint64_t seq = 1; seq <= 4; seq++) {
		won += on_of(P, seq) + on_of(Q, seq) + (seq < 3 ? on_of(T2, seq) : 0);
		woff += off_of(P, seq) + off_of(Q, seq) + (seq < 3 ? off_of(T2, seq) : 0);
	}
	assert_true(on == won && off == woff);
	char *json = report_json(s, sid);
	has_row(json, P, 0, 0, "a", "", on_of(P, 1) + on_of(P, 2) + on_of(T2, 1) + on_of(T2, 2),
		off_of(P, 1) + off_of(P, 2) + off_of(T2, 1) + off_of(T2, 2), 6);
	has_row(json, P, 0, P, "a", "a", on_of(P, 1) + on_of(P, 2), off_of(P, 1) + off_of(P, 2), 3);
	has_row(json, P, 0, T2, "a", "a-worker", on_of(T2, 1) + on_of(T2, 2), off_of(T2, 1) + off_of(T2, 2),
		3);
	has_row(json, P, 1, 0, "b", "", on_of(P, 3) + on_of(P, 4), off_of(P, 3) + off_of(P, 4), 7);
	has_row(json, P, 1, P, "b", "b", on_of(P, 3) + on_of(P, 4), off_of(P, 3) + off_of(P, 4), 7);
	has_row(json, Q, 0, Q, "c", "c", on_of(Q, 1) + on_of(Q, 2) + on_of(Q, 3) + on_of(Q, 4),
		off_of(Q, 1) + off_of(Q, 2) + off_of(Q, 3) + off_of(Q, 4), 10);
	free(json);
	store_close(s);
}

/* The flame's ms per (process name, module of the leaf) and the sum. */
static void flame_ms(struct store *s, int64_t sid, uint64_t *a_b, uint64_t *b_a, uint64_t *a_ms,
		     uint64_t *b_ms)
{
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	struct stack_set set;
	stack_set_init(&set);
	assert_int_equal(offcpu_flame_set(s, &qo, &set), 0);
	*a_b = *b_a = *a_ms = *b_ms = 0;
	for (size_t i = 0; i < set.nstacks; i++) {
		const struct vstack *v = &set.stacks[i];
		const char *comm = stack_set_str(&set, v->comm);
		const char *leafmod = stack_set_str(&set, set.frames[v->first + v->n - 1].module);
		if (strcmp(comm, "a") == 0) {
			*a_ms += v->count;
			*a_b += strcmp(leafmod, "b") == 0 ? v->count : 0;
		} else if (strcmp(comm, "b") == 0) {
			*b_ms += v->count;
			*b_a += strcmp(leafmod, "a") == 0 ? v->count : 0;
		}
	}
	stack_set_free(&set);
}

static uint64_t ms(uint64_t ns)
{
	return (ns + 500000) / 1000000;
}

static void test_offcpu_incs_flame_per_process(void **state)
{
	struct fx *f = *state;
	int64_t sid = make(f, true);
	struct store *s;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	uint64_t a_b, b_a, a_ms, b_ms;
	flame_ms(s, sid, &a_b, &b_a, &a_ms, &b_ms);
	assert_int_equal(a_b, 0); /* no time of "a" in b's file, nor of "b" in a's */
	assert_int_equal(b_a, 0);
	uint64_t want_a = ms(on_of(P, 1) + on_of(P, 2)) + ms(off_of(P, 1) + off_of(P, 2)) +
			  ms(on_of(T2, 1) + on_of(T2, 2)) + ms(off_of(T2, 1) + off_of(T2, 2));
	uint64_t want_b = ms(on_of(P, 3) + on_of(P, 4)) + ms(off_of(P, 3) + off_of(P, 4));
	assert_int_equal(a_ms, want_a);
	assert_int_equal(b_ms, want_b);
	store_close(s);
}

/* An older agent's session: every name incarnation 0, the later one replacing the first: one row
 * of the pid with all its times, as before. */
/* The report of session sid has pid P as one row named comm with all four records' times. */
static void one_row_of_pid(struct fx *f, int64_t sid, const char *comm)
{
	struct store *s;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	char *json = report_json(s, sid);
	uint64_t on = 0, off = 0;
	for (uint64_t seq = 1; seq <= 4; seq++) {
		on += on_of(P, seq);
		off += off_of(P, seq);
	}
	has_row(json, P, 0, P, comm, comm, on, off, 10);
	assert_null(strstr(json, "\"incarnation\":1"));
	free(json);
	store_close(s);
}

static void test_offcpu_incs_older_agent_one_row(void **state)
{
	struct fx *f = *state;
	one_row_of_pid(f, make(f, false), "b");
}

/* An older store: no sample_task_incs (a collector before w44a): read as before, one row of the pid. */
static void test_offcpu_incs_older_store_one_row(void **state)
{
	struct fx *f = *state;
	int64_t sid = make(f, true);
	fx_exec(f, "DROP TABLE sample_task_incs");
	one_row_of_pid(f, sid, "a");
}

/* The same records from an agent over loopback (the collector's server, in process, on a SQLite store in
 * memory): the report splits the pid's processes as the records' declarations say. */
static int first_session(const struct store_session_row *r, void *arg)
{
	*(int64_t *)arg = r->id;
	return 0;
}

static void test_offcpu_incs_over_the_wire(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len,
			&(struct hello_spec){.agent = "offcpu-wire", .boot = 77, .board = "host"});
	client_send(&c, buf, len);
	free(buf);
	assert_int_equal(expect_ack(&c, f->srv), 0);
	for (uint64_t seq = 1; seq <= 4; seq++)
		assert_int_equal(put_to(NULL, 0, seq, true, &c, f->srv), 1);
	client_close(&c);
	int64_t sid = 0;
	assert_int_equal(store_list_sessions(f->store, first_session, &sid), 0);
	assert_true(sid > 0);
	char *json = report_json(f->store, sid);
	has_row(json, P, 0, P, "a", "a", on_of(P, 1) + on_of(P, 2), off_of(P, 1) + off_of(P, 2), 3);
	has_row(json, P, 1, 0, "b", "", on_of(P, 3) + on_of(P, 4), off_of(P, 3) + off_of(P, 4), 7);
	has_row(json, P, 1, P, "b", "b", on_of(P, 3) + on_of(P, 4), off_of(P, 3) + off_of(P, 4), 7);
	free(json);
}

static int wire_setup(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_frame = 1u << 20});
}

#define BOTH(t)                                                                                              \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL},                                               \
	{                                                                                                    \
#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL                                          \
	}

int main(void)
{
	log_init("test_offcpu_incs", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    BOTH(test_offcpu_incs_report_per_process),
	    BOTH(test_offcpu_incs_flame_per_process),
	    BOTH(test_offcpu_incs_older_agent_one_row),
	    BOTH(test_offcpu_incs_older_store_one_row),
	    cmocka_unit_test_setup_teardown(test_offcpu_incs_over_the_wire, wire_setup, srv_fixture_teardown),
	};
	return cmocka_run_group_tests_name("offcpu_incs", tests, fx_group_setup, fx_group_teardown);
}
