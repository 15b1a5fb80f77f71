/* The store against both back ends: SQLite (a file) and PostgreSQL (a real
 * server started by the test from Debian's packages on 127.0.0.1; skipped
 * with the reason when it cannot run). The same behaviours: sessions found or
 * created, exactly once by (session, seq) also across two store handles on
 * one database (two collectors), rollback, heartbeats, refused records,
 * versioned schema; every record kind written, replayed (all duplicates) and
 * read back through every query (sessions, hardware, counters, top functions,
 * OpenCL commands, calibration, trace windows, the overview report). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "block_keys.h"
#include "log.h"
#include "pgserver.h"
#include "query/query.h"
#include "report/gpu.h"
#include "report/overview.h"
#include "report/report.h"
#include "report_fixture.h"
#include "sample_rec.h"
#include "store/db.h"
#include "store/store.h"
#include "store/store_calib.h"
#include "store/store_kallsyms.h"
#include "store/store_opencl.h"
#include "store/store_prune.h"
#include "store/store_trace.h"
#include "store_fx.h"
#include "testproc.h"

static void hello(Prof__Hello *h, const char *agent, uint64_t boot)
{
	prof__hello__init(h);
	h->schema_version = 1;
	h->agent_id = (char *)agent;
	h->boot_id = boot;
	h->board = "host";
}

static int64_t session(struct store *s, const char *agent, uint64_t boot, uint64_t *max_seq, bool *created)
{
	Prof__Hello h;
	hello(&h, agent, boot);
	int64_t id = 0;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &id, max_seq, created), 0);
	assert_true(id > 0);
	return id;
}

/* counters record: one row of two columns (events 1, 2 declared), times t, 2t; sent ahead
 * (store_put_record_ahead) or exactly. */
static int put_how(struct store *s, int64_t sid, uint64_t seq, bool ahead)
{
	Prof__EventDesc ev[2] = {PROF__EVENT_DESC__INIT, PROF__EVENT_DESC__INIT};
	Prof__EventDesc *evp[2] = {&ev[0], &ev[1]};
	ev[0].id = 1;
	ev[0].name = "cycles";
	ev[1].id = 2;
	ev[1].name = "instructions";
	uint32_t ids[2] = {1, 2};
	uint64_t t[2] = {1000, 1000}, v[4] = {seq, seq * 2, seq * 3, seq * 4};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = 2;
	c.new_events = evp;
	c.n_event_ids = 2;
	c.event_ids = ids;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 4;
	c.values = v;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	return ahead ? store_put_record_ahead(s, sid, &env, 40) : store_put_record(s, sid, &env, 40);
}

static int put(struct store *s, int64_t sid, uint64_t seq) { return put_how(s, sid, seq, false); }

static void test_store_backend_sessions_found_or_created(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 99;
	bool created = false;
	int64_t a = session(s, "board-a", 1, &max, &created);
	assert_true(created);
	assert_int_equal(max, 0);
	int64_t b = session(s, "board-a", 2, &max, &created);
	assert_true(created);
	assert_true(a != b);
	assert_int_equal(session(s, "board-a", 1, &max, &created), a);
	assert_false(created);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT connects FROM sessions WHERE agent_id = 'board-a' AND boot_id = 1"),
			 2);
	store_close(s);
}

static void test_store_backend_exactly_once(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = session(s, "board-b", 7, &(uint64_t){0}, NULL);
	for (uint64_t seq = 1; seq <= 3; seq++)
		assert_int_equal(put(s, sid, seq), 1);
	assert_int_equal(store_tx_records(s), 3);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(put(s, sid, 2), 0); /* replayed: ignored */
	assert_int_equal(put(s, sid, 4), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	s = fx_open_store(f);
	uint64_t max = 0;
	assert_int_equal(session(s, "board-b", 7, &max, NULL), sid);
	assert_int_equal(max, 4);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 4);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 16);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM events"), 2);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-b'"), 4);
	/* delta decoding: the second row of seq 3 is at 2000 ns */
	assert_int_equal(fx_q(f, "SELECT MAX(t_ns) FROM counter_samples WHERE seq = 3"), 2000);
	assert_int_equal(
	    fx_q(f, "SELECT value FROM counter_samples WHERE seq = 3 AND event_id = 2 AND t_ns = 2000"), 12);
}

/* Two collectors on one database: the database enforces the rule. */
static void test_store_backend_two_handles_one_database(void **state)
{
	struct fx *f = *state;
	struct store *a = fx_open_store(f), *b = fx_open_store(f);
	int64_t sa = session(a, "board-c", 9, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(a), 0);
	uint64_t max = 0;
	int64_t sb = session(b, "board-c", 9, &max, NULL);
	assert_int_equal(sa, sb);
	assert_int_equal(store_commit(b), 0);
	for (uint64_t seq = 1; seq <= 5; seq++)
		assert_int_equal(put(a, sa, seq), 1);
	assert_int_equal(store_commit(a), 0);
	int stored = 0, dups = 0;
	for (uint64_t seq = 3; seq <= 8; seq++) {
		int rc = put(b, sb, seq);
		assert_true(rc == 0 || rc == 1);
		stored += rc == 1;
		dups += rc == 0;
	}
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(stored, 3);
	assert_int_equal(dups, 3);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 8);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 32);
	store_close(a);
	store_close(b);
}

/* #40: records sent ahead (no round trip each on PostgreSQL), two of them already stored by
 * another collector: found at the commit, or by the next exact record, the batch is redone
 * record by record and every record is stored once, its rows too. */
static void test_store_backend_ahead_duplicate_stored_once(void **state)
{
	struct fx *f = *state;
	struct store *a = fx_open_store(f), *b = fx_open_store(f);
	int64_t sa = session(a, "board-k", 3, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(a), 0);
	int64_t sb = session(b, "board-k", 3, &(uint64_t){0}, NULL); /* b knows nothing stored */
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(put(a, sa, 3), 1);
	assert_int_equal(put(a, sa, 6), 1);
	assert_int_equal(store_commit(a), 0);
	int stored = 0;
	for (uint64_t seq = 1; seq <= 8; seq++) { /* 3 and 6 are duplicates among new records */
		int rc = put_how(b, sb, seq, true);
		assert_true(rc == 0 || rc == 1); /* PostgreSQL: 1 each (not waited for); SQLite: exact */
		stored += rc;
	}
	assert_int_equal(store_commit(b), 0); /* the duplicate found here: redone, committed */
	uint64_t redos = 0, dups = 0;
	store_ahead_redos(b, &redos, &dups);
	assert_int_equal(redos, f->b == B_PG ? 1 : 0);
	assert_int_equal(dups, f->b == B_PG ? 2 : 0);
	assert_int_equal(stored, f->b == B_PG ? 8 : 6);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 8);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 32);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-k'"), 8);
	/* the same found by an exact record of the same batch (its round trip reads the pipeline) */
	assert_int_equal(put(a, sa, 10), 1);
	assert_int_equal(store_commit(a), 0);
	for (uint64_t seq = 9; seq <= 11; seq++)
		assert_int_equal(put_how(b, sb, seq, true), f->b == B_PG || seq != 10 ? 1 : 0);
	assert_int_equal(put(b, sb, 5), 0); /* a replayed seq: redone first, then known stored */
	assert_int_equal(store_tx_records(b), 2);
	assert_int_equal(store_commit(b), 0);
	store_ahead_redos(b, &redos, &dups);
	assert_int_equal(redos, f->b == B_PG ? 2 : 0);
	assert_int_equal(dups, f->b == B_PG ? 3 : 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 11);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 44);
	assert_int_equal(fx_q(f, "SELECT COUNT(DISTINCT seq) FROM counter_samples"), 11);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-k'"), 11);
	/* an exact record and a heartbeat between records sent ahead are not undone with them */
	assert_int_equal(put(a, sa, 15), 1);
	assert_int_equal(store_commit(a), 0);
	assert_int_equal(put_how(b, sb, 12, true), 1);
	assert_int_equal(put(b, sb, 13), 1); /* exact: its round trip settles 12 */
	assert_int_equal(put_how(b, sb, 14, true), 1);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.spool_dropped = 77;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(store_put_record(b, sb, &env, 10), 1);
	assert_int_equal(put_how(b, sb, 15, true), f->b == B_PG ? 1 : 0); /* the duplicate */
	assert_int_equal(store_commit(b), 0);
	store_ahead_redos(b, &redos, &dups);
	assert_int_equal(redos, f->b == B_PG ? 3 : 0);
	assert_int_equal(dups, f->b == B_PG ? 4 : 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 15);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 60);
	assert_int_equal(fx_q(f, "SELECT records FROM sessions WHERE agent_id = 'board-k'"), 15);
	assert_int_equal(fx_q(f, "SELECT spool_dropped FROM sessions WHERE agent_id = 'board-k'"), 77);
	store_close(a);
	store_close(b);
}

/* #40: each record sent ahead after a round trip opens a savepoint; past 32 in one transaction
 * (PostgreSQL's subtransaction cache holds 64) records go the exact way: a duplicate is then
 * known at once. */
static void test_store_backend_ahead_savepoints_bounded(void **state)
{
	struct fx *f = *state;
	struct store *a = fx_open_store(f), *b = fx_open_store(f);
	int64_t sa = session(a, "board-m", 1, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(a), 0);
	int64_t sb = session(b, "board-m", 1, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(b), 0);
	assert_int_equal(put(a, sa, 100), 1);
	assert_int_equal(store_commit(a), 0);
	uint64_t seq = 1;
	for (int i = 0; i < 32; i++) { /* 32 savepoints: an exact record settles each */
		assert_int_equal(put_how(b, sb, seq++, true), 1);
		assert_int_equal(put(b, sb, seq++), 1);
	}
	assert_int_equal(put_how(b, sb, 100, true), 0); /* no savepoint left: exact */
	assert_int_equal(store_commit(b), 0);
	uint64_t redos = 9, dups = 9;
	store_ahead_redos(b, &redos, &dups);
	assert_int_equal(redos, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 65);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM counter_samples"), 260);
	store_close(a);
	store_close(b);
}

static void test_store_backend_rollback_discards(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = session(s, "board-d", 1, &(uint64_t){0}, NULL);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(put(s, sid, 1), 1);
	assert_true(store_in_tx(s));
	store_rollback(s);
	assert_false(store_in_tx(s));
	assert_int_equal(put(s, sid, 1), 1); /* not a duplicate: the first one is gone */
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 1);
}

static void test_store_backend_heartbeat_and_refusals(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = session(s, "board-e", 1, &(uint64_t){0}, NULL);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.spool_dropped = 5;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(store_put_record(s, sid, &env, 10), 1); /* seq 0: outside the ledger */
	Prof__Hello h;
	hello(&h, "x", 1);
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	assert_int_equal(store_put_record(s, sid, &env, 10), -EINVAL);
	/* timestamps that overflow after delta decoding */
	uint32_t id = 1;
	uint64_t t[2] = {UINT64_MAX / 2 + 1, UINT64_MAX / 2 + 1}, v[2] = {1, 2};
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_event_ids = 1;
	c.event_ids = &id;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 2;
	c.values = v;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	assert_int_equal(store_put_record(s, sid, &env, 10), -ERANGE);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT spool_dropped FROM sessions WHERE agent_id = 'board-e'"), 5);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 0);
}

/* A Samples record: 40 CPU sample rows (more than one multi-row statement),
 * one mapping with a build id, one stack, one task time. */
static int put_samples(struct store *s, int64_t sid, uint64_t seq)
{
	enum { N = 40 };
	uint8_t bid[4] = {0xde, 0xad, 0x00, 0xef};
	Prof__Mapping m = PROF__MAPPING__INIT, *mp[1] = {&m};
	m.id = 1;
	m.pid = 42;
	m.start = 0x400000;
	m.end = 0x500000;
	m.path = "/usr/bin/busy";
	m.build_id.data = bid;
	m.build_id.len = sizeof(bid);
	uint64_t ips[3] = {0x401000, 0x402000, UINT64_MAX};
	Prof__Stack k = PROF__STACK__INIT, *kp[1] = {&k};
	k.id = 7;
	k.n_ips = 3;
	k.ips = ips;
	Prof__TaskTime tt = PROF__TASK_TIME__INIT, *ttp[1] = {&tt};
	tt.pid = 42;
	tt.tid = 43;
	tt.on_cpu_ns = 1000;
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp[1] = {&ev};
	ev.id = 9;
	ev.name = "cpu-clock";
	int32_t pid[N], tid[N];
	uint64_t ip[N], count[N];
	uint32_t stack[N];
	for (int i = 0; i < N; i++) {
		pid[i] = 42;
		tid[i] = 43;
		ip[i] = 0x400000 + 0x10 * (uint64_t)(i % 4);
		count[i] = (uint64_t)i + 1;
		stack[i] = 7;
	}
	struct sample_rec_keys keys = {N, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &keys);
	sm.event_id = 9;
	sm.n_new_events = 1;
	sm.new_events = evp;
	sm.n_new_mappings = 1;
	sm.new_mappings = mp;
	sm.n_new_stacks = 1;
	sm.new_stacks = kp;
	sm.n_task_times = 1;
	sm.task_times = ttp;
	return store_put_record(s, sid, &env, 100);
}

static int put_cl(struct store *s, int64_t sid, uint64_t seq)
{
	Prof__ClKernelDesc k = PROF__CL_KERNEL_DESC__INIT, *kp[1] = {&k};
	k.id = 3;
	k.name = "matmul";
	k.program_hash = UINT64_MAX - 1;
	uint64_t gs[2] = {1024, 512}, waits[2] = {seq - 1, UINT64_MAX};
	Prof__ClCommand c = PROF__CL_COMMAND__INIT;
	c.pid = 42;
	c.id = seq;
	c.queue_id = 1;
	c.kernel_id = 3;
	c.work_dim = 2;
	c.n_global_size = 2;
	c.global_size = gs;
	c.start_ns = 1000 * seq;
	c.end_ns = 1000 * seq + 700;
	c.n_wait_ids = 2;
	c.wait_ids = waits;
	c.n_new_kernels = 1;
	c.new_kernels = kp;
	c.layer_event = 1;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_CL_COMMAND;
	env.cl_command = &c;
	return store_put_record(s, sid, &env, 80);
}

/* A GpuCounters record: 2 rows x 3 columns (ARITH_WORDS, the two beat counters)
 * covering (5000 + 1000 (seq - 7), +1000], declared in the first one. */
static int put_gpu(struct store *s, int64_t sid, uint64_t seq)
{
	Prof__GpuCounterDesc a = PROF__GPU_COUNTER_DESC__INIT, r = PROF__GPU_COUNTER_DESC__INIT,
			     w = PROF__GPU_COUNTER_DESC__INIT, *d[3] = {&a, &r, &w};
	a.id = 1, a.name = "ARITH_WORDS", a.block = 3, a.index = 27, a.role = 4;
	r.id = 2, r.name = "L2_EXT_READ_BEATS", r.block = 2, r.index = 31, r.role = 7;
	w.id = 3, w.name = "L2_EXT_WRITE_BEATS", w.block = 2, w.index = 30, w.role = 8;
	Prof__GpuInfo info = PROF__GPU_INFO__INIT;
	info.family = "T62x", info.arch = "Midgard", info.interface = "uk-dump", info.gpu_id = 0x06201000;
	info.shader_present = 0x3f, info.bus_bytes = 16, info.interval_ns = 500;
	uint32_t ids[3] = {1, 2, 3};
	uint64_t lens[2] = {500, 500}, vals[6] = {30, 3, 0, 40, 4, 0};
	Prof__GpuCounters g = PROF__GPU_COUNTERS__INIT;
	g.t0_ns = 5000 + 1000 * (seq - 7);
	g.n_counter_ids = 3, g.counter_ids = ids, g.n_t_ns = 2, g.t_ns = lens, g.n_values = 6, g.values = vals;
	g.dumps = 2;
	if (seq == 7)
		g.info = &info, g.n_new_counters = 3, g.new_counters = d;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_GPU_COUNTERS;
	env.gpu_counters = &g;
	return store_put_record(s, sid, &env, 60);
}

static int cl_cmd_cb(const struct store_cl_command_row *r, void *arg)
{
	int *n = arg;
	assert_int_equal(r->pid, 42);
	assert_int_equal(r->kernel_id, 3);
	assert_int_equal(r->global_size[1], 512);
	assert_int_equal(r->end_ns - r->start_ns, 700);
	assert_true(r->layer_event);
	assert_int_equal(r->n_wait, 2);
	assert_true(r->wait_ids[0] == r->id - 1 && r->wait_ids[1] == UINT64_MAX);
	(*n)++;
	return 0;
}

static int cl_kernel_cb(const struct store_cl_kernel_row *r, void *arg)
{
	assert_string_equal(r->name, "matmul");
	assert_true(r->program_hash == UINT64_MAX - 1);
	(*(int *)arg)++;
	return 0;
}

static int session_cb(const struct store_session_row *r, void *arg)
{
	struct store_session_row *out = arg;
	*out = *r;
	out->agent_id = out->board = out->peer = NULL; /* strings do not outlive the call */
	assert_string_equal(r->board, "host");
	return 0;
}

static int cpu_cb(const struct store_cpu_row *r, void *arg)
{
	assert_string_equal(r->model, "Cortex-A15");
	(*(int *)arg)++;
	return 0;
}

static int gpu_cb(const struct store_gpu_row *r, void *arg)
{
	assert_string_equal(r->name, "Mali-T628");
	assert_int_equal(r->global_mem_bytes, 1ull << 31);
	(*(int *)arg)++;
	return 0;
}

static int event_cb(const struct store_event_summary *e, void *arg)
{
	uint64_t *total = arg;
	if (e->event_id == 1) {
		assert_string_equal(e->name, "cycles");
		*total = e->total;
	}
	return 0;
}

static int sample_cb(const struct store_sample_row *r, void *arg)
{
	(*(int *)arg)++;
	return 0;
}

/* Every kind written, then the same records replayed (duplicates, nothing
 * changes), then read back through the query API on a read-only handle. */
static void test_store_backend_every_kind_and_queries(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	Prof__Hello h;
	hello(&h, "board-k", 3);
	Prof__CpuInfo cpu = PROF__CPU_INFO__INIT, *cpus[2] = {&cpu, &cpu};
	cpu.model = "Cortex-A15";
	Prof__GpuDevice gpu = PROF__GPU_DEVICE__INIT, *gpus[1] = {&gpu};
	gpu.name = "Mali-T628";
	gpu.global_mem_bytes = 1ull << 31;
	h.n_cpus = 2;
	h.cpus = cpus;
	h.n_gpus = 1;
	h.gpus = gpus;
	int64_t sid = 0;
	uint64_t max = 0;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:2", &sid, &max, NULL), 0);
	for (int pass = 0; pass < 2; pass++) {
		int want = pass == 0 ? 1 : 0; /* the second pass replays: all duplicates */
		assert_int_equal(put(s, sid, 1), want);
		assert_int_equal(put(s, sid, 2), want);
		assert_int_equal(put_samples(s, sid, 3), want);
		assert_int_equal(put_samples(s, sid, 4), want);
		assert_int_equal(put_cl(s, sid, 5), want);
		assert_int_equal(put_cl(s, sid, 6), want);
		assert_int_equal(put_gpu(s, sid, 7), want);
		assert_int_equal(put_gpu(s, sid, 8), want);
		assert_int_equal(store_commit(s), 0);
	}
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 8);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM gpu_samples"), 8); /* non-zero values only */
	/* the mapping both Samples records declare: a packed block each, no row (#40, w40h: the query keeps
	 * the first declaration, test_store_backend_mappings_packed) */
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_map_blocks"), 2);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_mappings"), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM task_times"), 2);
	assert_int_equal(fx_q(f, "SELECT SUM(commands) FROM cl_command_blocks"),
			 2); /* a packed block per record (#41) */
	/* the blocks are the only store of the samples (#40): no per-key rows; each block has its 40 keys
	 * and the sum of their counts (1 + 2 + ... + 40 per record) */
	int64_t cpu_sum = 2 * (40 * 41 / 2);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"),
			 2); /* one packed row per Samples record */
	assert_int_equal(fx_q(f, "SELECT SUM(keys) FROM sample_blocks"), 80);
	assert_int_equal(fx_q(f, "SELECT SUM(samples) FROM sample_blocks"), cpu_sum);
	/* stored compressed (#40): 40 keys of at least 6 varint bytes each would be 480 bytes raw per block
	 */
	assert_true(fx_q(f, "SELECT SUM(LENGTH(data)) FROM sample_blocks") < 2 * 40 * 6);

	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	assert_false(store_has_table(s, "cpu_samples")); /* not created (#40) */
	assert_true(store_has_column(s, "sample_blocks", "samples"));
	struct store_session_row row;
	memset(&row, 0, sizeof(row));
	assert_int_equal(store_list_sessions(s, session_cb, &row), 0);
	assert_int_equal(row.id, sid);
	assert_int_equal(row.records, 8);
	assert_int_equal(row.counter_samples, 8);
	assert_int_equal(row.cpu_samples, cpu_sum); /* agent record's samples count too (issue 27) */
	assert_int_equal(row.samples, 8 + cpu_sum);
	assert_int_equal(row.last_t_ns, 2000);
	assert_int_equal(row.boot_id, 3);
	assert_int_equal(store_get_session(s, sid + 1000, session_cb, &row), -ENOENT);
	struct query_opts qo; /* the query model reads the compressed blocks back to every sample */
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	assert_int_equal(qr->total, cpu_sum);
	query_result_free(qr);
	query_opts_free(&qo);
	int n = 0;
	assert_int_equal(store_list_cpus(s, sid, cpu_cb, &n), 0);
	assert_int_equal(n, 2);
	n = 0;
	assert_int_equal(store_list_gpus(s, sid, gpu_cb, &n), 0);
	assert_int_equal(n, 1);
	uint64_t total = 0;
	assert_int_equal(store_event_summaries(s, sid, event_cb, &total), 0);
	assert_int_equal(total, 1 + 3 + 2 + 6); /* event 1 of seq 1 and 2 */
	n = 0;
	assert_int_equal(store_list_samples(s, sid, sample_cb, &n), 0);
	assert_int_equal(n, 8);
	n = 0;
	assert_int_equal(store_cl_kernels(s, sid, cl_kernel_cb, &n), 0);
	assert_int_equal(n, 1);
	n = 0;
	assert_int_equal(store_cl_commands(s, sid, cl_cmd_cb, &n), 0);
	assert_int_equal(n, 2);
	/* GPU counters back as a series, and attributed to the two launches
	 * ([5000, 5700) and [6000, 6700) ns): every row holds one launch. */
	struct gpu_report gr;
	assert_int_equal(gpu_report_load(s, sid, &gr), 0);
	assert_int_equal(gr.s.nrows, 4);
	assert_int_equal(gr.s.ncols, 3);
	assert_int_equal(gr.s.bus_bytes, 16);
	assert_string_equal(gr.s.family, "T62x");
	assert_int_equal(gr.s.dumps, 4);
	assert_int_equal(gr.s.t0[2], 6000);
	assert_int_equal(gr.nk, 1);
	assert_string_equal(gr.k[0].name, "matmul");
	assert_true(gr.k[0].arith == 140.0);
	assert_true(gr.k[0].read_beats == 14.0);
	assert_true(gr.k[0].dram_bytes == 14.0 * 16);
	assert_true(gr.k[0].words_per_byte == 140.0 / 224.0);
	assert_true(gr.session.arith == 140.0);
	assert_int_equal(gr.session.time_ns, 2000); /* (5000, 7000] */
	assert_true(gr.unattributed_arith == 0.0);
	gpu_report_free(&gr);
	/* report --top: 2 x sum(1..40) samples, resolved against the mapping (no file: one [module] row) */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	struct report_opts ro = {.json = true, .limit = 3};
	assert_int_equal(report_top(s, sid, &ro, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "\"samples\":1640,"));
	assert_non_null(strstr(buf, "{\"function\":\"[busy]\",\"module\":\"busy\",\"samples\":1640}")); /* one row per module */
	assert_non_null(strstr(buf, "\"event\":\"cpu-clock\""));
	free(buf);
	store_close(s);
}

static int calib_cb(const struct store_calib_param_row *r, void *arg)
{
	assert_string_equal(r->benchmark, "peak");
	(*(int *)arg)++;
	return 0;
}

/* Calibration and trace windows through the overview report: the same JSON
 * as the reviewed golden file (which test_report makes with SQLite). */
static void test_store_backend_overview_report(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid = 0;
	assert_int_equal(rf_make_session(s, &sid), 0);
	store_close(s);
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct overview_opts oo = {.sections = true, .json = true, .limit = 20};
	struct overview ov;
	assert_int_equal(overview_load(s, sid, &oo, &ov), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	assert_int_equal(overview_json(&ov, m), 0);
	fclose(m);
	overview_free(&ov);
	const char *src = getenv("PROF_SRC_DIR");
	char path[4096];
	snprintf(path, sizeof(path), "%s/tests/data/report_overview.golden.json", src ? src : ".");
	char *golden = tp_slurp(path);
	assert_non_null(golden);
	if (strcmp(buf, golden) != 0) {
		print_message("got:\n%s\n", buf);
		fail_msg("the overview JSON on %s differs from %s", f->b == B_PG ? "PostgreSQL" : "SQLite", path);
	}
	free(golden);
	free(buf);
	int n = 0;
	assert_int_equal(store_calib_params(s, sid, calib_cb, &n), 9);
	assert_int_equal(n, 9);
	store_close(s);
}

/* PostgreSQL only: migrations are versioned, run once, and a newer schema is refused. */
static void test_store_backend_pg_migrations_versioned(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	store_close(s);
	s = fx_open_store(f); /* reopening migrates nothing */
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM prof_schema_migrations"), 6);
	assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
	assert_int_equal(pg_exec(f->uri, "INSERT INTO prof_schema_migrations (version) VALUES (99)"), 0);
	assert_int_equal(store_open(f->uri, 0, &s), -EPROTONOSUPPORT);
	assert_null(s);
}

/* PostgreSQL only (issue 31): in the collector's loop mode a killed session fails fast,
 * says it needs a reconnect, is re-made without blocking and takes writes again; sync full
 * runs the session with synchronous_commit = on although the test server's default is off,
 * and the durability line says which. */
static void test_store_backend_pg_loop_reconnects(void **state)
{
	struct fx *f = *state;
	if (!fx_pg_ok) {
		fprintf(stderr, "skipped: %s\n", fx_pg_why);
		skip();
	}
	struct store *s = NULL;
	char d[320];
	assert_int_equal(store_open(f->uri, 0, &s), 0); /* --sync normal: the server's setting */
	assert_int_equal(store_durability(s, d, sizeof(d)), 0);
	assert_non_null(strstr(d, "synchronous_commit=off"));
	store_close(s);
	assert_int_equal(store_open(f->uri, STORE_SYNC_FULL, &s), 0);
	assert_int_equal(store_durability(s, d, sizeof(d)), 0);
	assert_non_null(strstr(d, "synchronous_commit=on"));
	store_set_loop_mode(s, -1, -1);
	uint64_t max;
	int64_t sid = session(s, "reconnecting", 1, &max, NULL);
	assert_int_equal(put(s, sid, 1), 1);
	assert_int_equal(store_commit(s), 0);
	assert_false(store_needs_reconnect(s));
	assert_int_equal(pg_exec(f->uri, "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE "
					 "application_name = 'prof-collector/2' AND datname = current_database()"),
			 0);
	int rc = put(s, sid, 2);
	if (rc >= 0)
		rc = store_commit(s);
	assert_true(rc < 0);
	store_rollback(s);
	assert_true(store_needs_reconnect(s));
	assert_true(strlen(store_last_error(s)) > 0);
	assert_int_equal(put(s, sid, 2), -ECONNRESET); /* fails fast, no reconnect of its own */
	store_rollback(s);
	int r = 0;
	for (int i = 0; i < 500 && (r = store_reconnect_poll(s)) != 1; i++)
		tp_sleep_ms(10);
	assert_int_equal(r, 1);
	assert_false(store_needs_reconnect(s));
	assert_int_equal(put(s, sid, 2), 1);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(store_durability(s, d, sizeof(d)), 0); /* the new session too */
	assert_non_null(strstr(d, "synchronous_commit=on"));
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM records"), 2);
}

/* --check on open (issue 25 item 5): a sound store opens with quick and full checks,
 * for writing and read-only; PostgreSQL takes the option (its server checks its own
 * pages) and says so, SQLite runs quick_check / integrity_check. */
static void test_store_backend_check_on_open(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t sid;
	uint64_t max_seq;
	Prof__Hello h;
	hello(&h, "checked", 1);
	assert_int_equal(store_session_open(s, &h, "peer", &sid, &max_seq, NULL), 0);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	const unsigned modes[] = {STORE_CHECK_QUICK, STORE_CHECK_FULL, STORE_CHECK_QUICK | STORE_READ_ONLY,
				  STORE_CHECK_FULL | STORE_READ_ONLY};
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		assert_int_equal(store_open(f->uri, modes[i], &s), 0);
		assert_false(store_damaged(s));
		store_close(s);
	}
	unsigned fl = 99;
	assert_int_equal(store_check_flags("quick", &fl), 0);
	assert_int_equal(fl, STORE_CHECK_QUICK);
	assert_int_equal(store_check_flags("full", &fl), 0);
	assert_int_equal(fl, STORE_CHECK_FULL);
	assert_int_equal(store_check_flags("off", &fl), 0);
	assert_int_equal(fl, 0);
	assert_int_equal(store_check_flags("fast", &fl), -EINVAL);
}

/* A KernelSymbols record: three functions ("do_a", "do_b", "do_c" at 0xffffffff81000000 + 0x100 i),
 * or a reference (no symbols). */
static int put_ksyms(struct store *s, int64_t sid, uint64_t seq, bool reference)
{
	int64_t d[3] = {(int64_t)0xffffffff81000000ull, 0x100, 0x100};
	uint32_t sh[3] = {0, 3, 3};
	static uint8_t names[] = "do_a\0b\0c";
	Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
	m.kernel_boot_id = "boot-xyz";
	m.chunks = 1;
	m.total = 3;
	if (!reference) {
		m.n_addr_delta = m.n_shared = 3;
		m.addr_delta = d;
		m.shared = sh;
		m.suffixes.data = names;
		m.suffixes.len = sizeof(names);
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = &m;
	return store_put_record(s, sid, &env, 60);
}

/* Samples in the kernel: 5 at do_b + 0x10, 2 at do_c + 0x20. */
static int put_kernel_samples(struct store *s, int64_t sid, uint64_t seq)
{
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp[1] = {&ev};
	ev.id = 9;
	ev.name = "cpu-clock";
	int32_t pid[2] = {42, 42}, tid[2] = {42, 42};
	uint64_t ip[2] = {0, 0}, kip[2] = {0xffffffff81000110ull, 0xffffffff81000220ull}, count[2] = {5, 2};
	uint32_t stack[2] = {0, 0};
	struct sample_rec_keys keys = {2, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &keys);
	sm.event_id = 9;
	sm.n_new_events = 1;
	sm.new_events = evp;
	sm.n_kip = 2;
	sm.kip = kip;
	return store_put_record(s, sid, &env, 100);
}

/* Self samples of the function row named fn of session sid (query --by function). */
static uint64_t kernel_self(struct store *s, int64_t sid, const char *fn)
{
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	struct query_top t;
	assert_int_equal(query_top(r, QUERY_BY_FUNCTION, &t), 0);
	uint64_t n = 0;
	for (size_t i = 0; i < t.nrows; i++)
		if (strcmp(t.rows[i].name, fn) == 0 && strcmp(t.rows[i].module, "[kernel]") == 0)
			n += t.rows[i].self;
	query_top_free(&t);
	query_result_free(r);
	query_opts_free(&qo);
	return n;
}

/* The agent's kernel table: kept once per (agent, boot), a later session's reference links to it, the
 * query (and report --top over it) names the kernel samples of both sessions; another agent's session
 * on a boot of the same id does not see it; a prune of both sessions drops the table. */
static void test_store_backend_kernel_symbols(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t s1 = session(s, "board-k", 1, &(uint64_t){0}, NULL);
	assert_int_equal(put_ksyms(s, s1, 1, false), 1);
	assert_int_equal(put_kernel_samples(s, s1, 2), 1);
	int64_t s2 = session(s, "board-k", 2, &(uint64_t){0}, NULL);
	assert_int_equal(put_ksyms(s, s2, 1, true), 1);
	assert_int_equal(put_kernel_samples(s, s2, 2), 1);
	int64_t s3 = session(s, "board-other", 1, &(uint64_t){0}, NULL);
	assert_int_equal(put_ksyms(s, s3, 1, true), 1); /* a reference to a table this agent never sent */
	assert_int_equal(put_kernel_samples(s, s3, 2), 1);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM kernel_symbols"), 1);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM session_kernels"), 3);
	char boot[KSYMS_BOOT_ID_MAX + 1];
	assert_int_equal(store_session_kernel_boot(s, s2, boot, sizeof(boot)), 0);
	assert_string_equal(boot, "boot-xyz");
	assert_int_equal(kernel_self(s, s1, "do_b"), 5);
	assert_int_equal(kernel_self(s, s1, "do_c"), 2);
	assert_int_equal(kernel_self(s, s2, "do_b"), 5);
	assert_int_equal(kernel_self(s, s3, "do_b"), 0);
	assert_int_equal(kernel_self(s, s3, "[kernel]"), 7);
	/* report --top renders the same rows */
	char *buf = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&buf, &len);
	assert_non_null(m);
	struct report_opts ro = {.json = true, .limit = 5};
	assert_int_equal(report_top(s, s2, &ro, m), 0);
	fclose(m);
	assert_non_null(strstr(buf, "{\"function\":\"do_b\",\"module\":\"[kernel]\",\"samples\":5}"));
	free(buf);
	uint64_t rows = 0;
	assert_int_equal(store_delete_session(s, s1, &rows), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM kernel_symbols"), 1); /* s2 still runs on that boot */
	assert_int_equal(store_delete_session(s, s2, &rows), 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM kernel_symbols"), 0);
	store_close(s);
}

enum { KBIG = 2000 }; /* symbols of the compressible table: ksym_fn_00000 .. at 0x40 apart */

/* A KernelSymbols chunk of KBIG functions (boot "boot-big"), front coded as the agent packs it; its
 * packed size in *packed (the bytes an older collector stored). */
static int put_big_ksyms(struct store *s, int64_t sid, uint64_t seq, size_t *packed, uint8_t **raw)
{
	static int64_t d[KBIG];
	static uint32_t sh[KBIG];
	static uint8_t names[KBIG * 16];
	size_t off = 0;
	char prev[32] = "", cur[32];
	for (int i = 0; i < KBIG; i++) {
		d[i] = i ? 0x40 : (int64_t)0xffffffff81000000ull;
		snprintf(cur, sizeof(cur), "ksym_fn_%05d", i);
		uint32_t n = 0;
		while (prev[n] && prev[n] == cur[n])
			n++;
		sh[i] = n;
		size_t sl = strlen(cur + n) + 1;
		memcpy(names + off, cur + n, sl);
		off += sl;
		memcpy(prev, cur, sizeof(cur));
	}
	Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
	m.kernel_boot_id = "boot-big";
	m.chunks = 1;
	m.total = KBIG;
	m.n_addr_delta = m.n_shared = KBIG;
	m.addr_delta = d;
	m.shared = sh;
	m.suffixes.data = names;
	m.suffixes.len = off;
	*packed = prof__kernel_symbols__get_packed_size(&m);
	if (raw) {
		*raw = malloc(*packed);
		prof__kernel_symbols__pack(&m, *raw);
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = &m;
	return store_put_record(s, sid, &env, 60);
}

/* #40: a kernel table's chunk is stored as one zstd frame, smaller than the agent's packing; the query
 * names kernel samples from it; the same table sent again is the same (kept once, nothing differs);
 * an older collector's chunk, stored as the agent packed it, is read as it is. */
static void test_store_backend_kernel_symbols_compressed(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	int64_t s1 = session(s, "board-kz", 1, &(uint64_t){0}, NULL);
	size_t packed = 0;
	uint8_t *raw = NULL;
	assert_int_equal(put_big_ksyms(s, s1, 1, &packed, &raw), 1);
	assert_int_equal(put_kernel_samples(s, s1, 2), 1); /* 5 at +0x110 (ksym_fn_00004), 2 at +0x220 */
	assert_int_equal(store_commit(s), 0);
	int64_t stored = fx_q(f, "SELECT LENGTH(data) FROM kernel_symbols WHERE kernel_boot_id = 'boot-big'");
	assert_true(stored > 0 && (size_t)stored * 2 < packed);
	assert_int_equal(
	    fx_q(f, f->b == B_PG
			? "SELECT COUNT(*) FROM kernel_symbols WHERE substring(data from 1 for 4)"
			  " = '\\x28b52ffd'::bytea"
			: "SELECT COUNT(*) FROM kernel_symbols WHERE substr(data, 1, 4) = X'28b52ffd'"),
	    1);
	assert_int_equal(kernel_self(s, s1, "ksym_fn_00004"), 5);
	assert_int_equal(kernel_self(s, s1, "ksym_fn_00008"), 2);
	int64_t s2 = session(s, "board-kz", 2, &(uint64_t){0}, NULL); /* the same table again */
	size_t packed2;
	assert_int_equal(put_big_ksyms(s, s2, 1, &packed2, NULL), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM kernel_symbols"), 1);
	assert_int_equal(fx_q(f, "SELECT LENGTH(data) FROM kernel_symbols WHERE kernel_boot_id = 'boot-big'"),
			 stored);

	/* as an older collector stored it: the agent's packing */
	char *sql = malloc(packed * 2 + 200), *p;
	assert_non_null(sql);
	p = sql + sprintf(sql, f->b == B_PG ? "UPDATE kernel_symbols SET data = '\\x" : "UPDATE kernel_symbols SET data = X'");
	for (size_t i = 0; i < packed; i++)
		p += sprintf(p, "%02x", raw[i]);
	sprintf(p, f->b == B_PG ? "'::bytea" : "'");
	fx_exec(f, sql);
	free(sql);
	free(raw);
	assert_int_equal(fx_q(f, "SELECT LENGTH(data) FROM kernel_symbols WHERE kernel_boot_id = 'boot-big'"),
			 (int64_t)packed);
	s = fx_open_store(f);
	assert_int_equal(kernel_self(s, s1, "ksym_fn_00004"), 5);
	assert_int_equal(kernel_self(s, s1, "ksym_fn_00008"), 2);
	store_close(s);
}

/* The CPU samples of the store's one session: the query model's total and the session's count. */
static void cpu_figures(struct fx *f, int64_t sid, uint64_t *total, uint64_t *listed)
{
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct store_session_row row;
	memset(&row, 0, sizeof(row));
	assert_int_equal(store_list_sessions(s, session_cb, &row), 0);
	*listed = row.cpu_samples;
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	*total = qr->total;
	query_result_free(qr);
	store_close(s);
}

/* #40: a store an older collector wrote (record 1 as cpu_samples rows only, from before sample_blocks;
 * record 2 as rows beside a block without the samples column; PostgreSQL at schema version 1), built
 * from its schema and rows by SQL, is read as it is, then upgraded by a read-write open (the column
 * added; PostgreSQL: migration 2) and written on: its rows count once, the new record's block once. */
static void test_store_backend_older_samples_upgraded(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	bool created = false;
	int64_t sid = session(s, "board-old", 4, &max, &created);
	assert_int_equal(put_samples(s, sid, 3), 1);
	assert_int_equal(put_samples(s, sid, 4), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	char sql[2048];
	char *pg_schema = f->b == B_PG ? tp_old_cpu_samples_schema_pg() : NULL;
	assert_true(f->b != B_PG || pg_schema);
	snprintf(sql, sizeof(sql),
		 "%s"
		 "WITH RECURSIVE k(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM k WHERE i < 39), r(seq) AS"
		 " (SELECT 3 UNION ALL SELECT 4) INSERT INTO cpu_samples SELECT %lld, seq, 1000000 * seq, 0, 9, 42,"
		 " 43, 4194304 + 16 * (i %% 4), 0, 7, i + 1 FROM k, r;"
		 "DELETE FROM sample_blocks WHERE seq = 3; ALTER TABLE sample_blocks DROP COLUMN samples;%s",
		 pg_schema ? pg_schema : TP_OLD_CPU_SAMPLES_SCHEMA, (long long)sid,
		 f->b == B_PG ? "DELETE FROM prof_schema_migrations WHERE version >= 2;" : "");
	free(pg_schema);
	fx_exec(f, sql);
	uint64_t total, listed, want = 2 * (40 * 41 / 2); /* two records of counts 1..40 */
	cpu_figures(f, sid, &total, &listed);		   /* as the older collector left it */
	assert_int_equal(total, want);
	assert_int_equal(listed, want);
	s = fx_open_store(f); /* the upgrade, then a record of this collector: its block only */
	assert_true(store_has_column(s, "sample_blocks", "samples"));
	assert_int_equal(put_samples(s, sid, 5), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	if (f->b == B_PG)
		assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM cpu_samples"), 80);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE samples IS NOT NULL"), 1);
	want += 40 * 41 / 2;
	cpu_figures(f, sid, &total, &listed);
	assert_int_equal(total, want);
	assert_int_equal(listed, want);
}

/* A Samples record of one pid (40 keys, counts 1..40): its block's pid range is that pid. */
/* A record of 40 keys of pid (counts 1..40), seq samples lost, sampled at freq Hz: 1 stored. */
static int put_pid_samples_at(struct store *s, int64_t sid, uint64_t seq, int32_t pid, uint64_t freq)
{
	enum { N = 40 };
	int32_t pids[N], tid[N];
	uint64_t ip[N], count[N];
	uint32_t stack[N];
	for (int i = 0; i < N; i++) {
		pids[i] = pid;
		tid[i] = pid;
		ip[i] = 0x400000 + 0x10 * (uint64_t)i;
		count[i] = (uint64_t)i + 1;
		stack[i] = 0;
	}
	struct sample_rec_keys k = {N, pids, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	sm.lost = seq;
	sm.freq_hz = freq;
	return store_put_record(s, sid, &env, 100);
}

static int put_pid_samples(struct store *s, int64_t sid, uint64_t seq, int32_t pid)
{
	return put_pid_samples_at(s, sid, seq, pid, 99);
}

/* The samples of pid in the store (read-only), the blocks read and those passed over. */
static uint64_t pid_total(struct fx *f, int32_t pid, uint64_t *read, uint64_t *passed)
{
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.pids[0] = pid;
	qo.f.npids = 1;
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	uint64_t total = qr->total;
	*read = qr->blocks_read;
	*passed = qr->blocks_passed;
	query_result_free(qr);
	store_close(s);
	return total;
}

/* #40: blocks carry their pid range and bits, so a --pid query passes over the others unread; an older
 * collector's blocks (without the columns; PostgreSQL at schema version 2) are read by every --pid
 * query as they are, and after the upgrading open (columns added, NULL in them; migration 3) beside
 * this collector's blocks, which are passed over where the pid is not theirs. */
static void test_store_backend_block_pid_ranges(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0, read, passed, each = 40 * 41 / 2;
	bool created = false;
	int64_t sid = session(s, "board-pids", 5, &max, &created);
	for (uint64_t seq = 11; seq <= 14; seq++) /* pids 101..104 (seq 1 would start at the epoch: no range) */
		assert_int_equal(put_pid_samples(s, sid, seq, 90 + (int32_t)seq), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE pid_min = 103 AND pid_max = 103"),
			 1);
	assert_int_equal(pid_total(f, 103, &read, &passed), each);
	assert_int_equal(read, 1);
	assert_int_equal(passed, 3);

	fx_exec(f, f->b == B_PG ? "DROP INDEX sample_blocks_keys; ALTER TABLE sample_blocks DROP COLUMN pid_min,"
				   " DROP COLUMN pid_max, DROP COLUMN pid_bits; DELETE FROM prof_schema_migrations"
				   " WHERE version >= 3; CREATE INDEX sample_blocks_time ON sample_blocks(session_id, t_ns);"
				 : "DROP INDEX sample_blocks_keys; ALTER TABLE sample_blocks DROP COLUMN pid_min;"
				   " ALTER TABLE sample_blocks DROP COLUMN pid_max; ALTER TABLE sample_blocks DROP COLUMN"
				   " pid_bits; CREATE INDEX sample_blocks_time ON sample_blocks(session_id, t_ns);");
	assert_int_equal(pid_total(f, 103, &read, &passed), each); /* as the older collector left it */
	assert_int_equal(read, 4);
	assert_int_equal(passed, 0);

	s = fx_open_store(f); /* the upgrade, then two records of this collector */
	assert_true(store_has_column(s, "sample_blocks", "pid_bits"));
	assert_int_equal(put_pid_samples(s, sid, 15, 105), 1);
	assert_int_equal(put_pid_samples(s, sid, 16, 106), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	if (f->b == B_PG)
		assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE pid_bits IS NULL"), 4);
	assert_int_equal(pid_total(f, 103, &read, &passed), each);
	assert_int_equal(read, 4); /* the older blocks, not the new ones */
	assert_int_equal(passed, 2);
	assert_int_equal(pid_total(f, 106, &read, &passed), each);
	assert_int_equal(read, 5);
	assert_int_equal(passed, 1);
}

/* The query's total, and pid 101's, of the store's samples; the session list's count. */
static void totals(struct fx *f, int64_t sid, uint64_t *all, uint64_t *p101, uint64_t *listed)
{
	uint64_t read, passed;
	*p101 = pid_total(f, 101, &read, &passed);
	cpu_figures(f, sid, all, listed);
}

/* The query's figures of a session's intervals (lost, sampled time, range, rate, rows), copied out. */
static void interval_figures(struct fx *f, int64_t sid, struct query_result *out)
{
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	memset(out, 0, sizeof(*out));
	out->lost = qr->lost;
	out->interval_ns = qr->interval_ns;
	out->first_ns = qr->first_ns;
	out->last_ns = qr->last_ns;
	out->freq_hz = qr->freq_hz;
	out->intervals = qr->intervals;
	query_result_free(qr);
	store_close(s);
}

/* #40: downsampling merges the blocks of records older than the cutoff per window of the session's
 * time into one block of summed keys: the totals (all, per pid, the session list's) stay, the blocks
 * past the cutoff are untouched, and a second run finds nothing more to merge. A pass bounded to a
 * number of windows stops there and says more are left; the next goes on. */
static void test_store_backend_downsample(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	bool created = false;
	int64_t sid = session(s, "board-down", 6, &max, &created);
	for (uint64_t seq = 11; seq <= 22; seq++) /* ending at 11..22 ms, pids 101..103; 17 at another rate */
		assert_int_equal(put_pid_samples_at(s, sid, seq, 101 + (int32_t)(seq % 3), seq == 17 ? 199 : 99), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	uint64_t all, p101, listed, all2, p101b, listed2;
	totals(f, sid, &all, &p101, &listed);
	assert_int_equal(all, 12 * (40 * 41 / 2));
	struct query_result iv, iv2; /* the intervals' figures: lost, sampled time, range, rate */
	interval_figures(f, sid, &iv);
	assert_int_equal(iv.lost, (11 + 22) * 12 / 2);
	assert_int_equal(iv.interval_ns, 12000000);

	/* before 20 ms, per 5 ms: 11-14 merged; 15-19 split at 17's rate (w40o: a merged block is
	 * counted at its first seq's period): 15-16 and 18-19 merged, 17 alone; 20-22 left */
	s = fx_open_store(f);
	struct query_downsample_stats ds; /* in passes of one window (the listening collector's) */
	assert_int_equal(query_downsample_some(s, 20000000, 5000000, 1, &ds), 0);
	assert_int_equal(ds.windows, 1);
	assert_int_equal(ds.blocks_in, 4);
	assert_true(ds.more);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 9);
	assert_int_equal(query_downsample_some(s, 20000000, 5000000, 1, &ds), 0);
	assert_int_equal(ds.windows, 1);
	assert_int_equal(ds.blocks_in, 2);
	assert_int_equal(ds.blocks_out, 1);
	assert_true(ds.more);
	assert_int_equal(query_downsample_some(s, 20000000, 5000000, 1, &ds), 0);
	store_close(s);
	assert_int_equal(ds.windows, 1);
	assert_int_equal(ds.blocks_in, 2);
	assert_int_equal(ds.blocks_out, 1);
	assert_false(ds.more);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 7);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks WHERE seq BETWEEN 15 AND 19"), 3);
	assert_int_equal(fx_q(f, "SELECT t_ns FROM sample_blocks WHERE seq = 11"), 14000000);
	assert_int_equal(fx_q(f, "SELECT samples FROM sample_blocks WHERE seq = 11"), 4 * (40 * 41 / 2));
	assert_int_equal(fx_q(f, "SELECT pid_min FROM sample_blocks WHERE seq = 11"), 101);
	assert_int_equal(fx_q(f, "SELECT pid_max FROM sample_blocks WHERE seq = 11"), 103);
	totals(f, sid, &all2, &p101b, &listed2);
	assert_int_equal(all2, all);
	assert_int_equal(p101b, p101);
	assert_int_equal(listed2, listed);
	/* w40h: each merged run's intervals as one row of its seq and time (the second window's in its
	 * runs 15-16 and 18-19, 17 apart); the readers' figures unchanged */
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals"), 12 - 3 - 1 - 1);
	assert_int_equal(fx_q(f, "SELECT t_ns FROM sample_intervals WHERE seq = 11"), 14000000);
	assert_int_equal(fx_q(f, "SELECT interval_ns FROM sample_intervals WHERE seq = 11"), 4000000);
	assert_int_equal(fx_q(f, "SELECT lost FROM sample_intervals WHERE seq = 11"), 11 + 12 + 13 + 14);
	assert_int_equal(fx_q(f, "SELECT keys FROM sample_intervals WHERE seq = 11"), 3 * 40);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_intervals WHERE seq BETWEEN 15 AND 19"), 3);
	interval_figures(f, sid, &iv2);
	assert_int_equal(iv2.lost, iv.lost);
	assert_int_equal(iv2.interval_ns, iv.interval_ns);
	assert_int_equal(iv2.first_ns, iv.first_ns);
	assert_int_equal(iv2.last_ns, iv.last_ns);
	assert_int_equal(iv2.freq_hz, iv.freq_hz);
	assert_int_equal(iv2.intervals, 12 - 3 - 1 - 1);

	s = fx_open_store(f);
	assert_int_equal(query_downsample(s, 20000000, 5000000, &ds), 0);
	store_close(s);
	assert_int_equal(ds.windows, 0);
	assert_false(ds.more);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 7);
}

/* A record of n keys of pid 201..204 at distinct addresses from ip0 (counts 1..3): 1 stored. */
static int put_many_keys(struct store *s, int64_t sid, uint64_t seq, size_t n, uint64_t ip0)
{
	int32_t *pid = calloc(n, sizeof(*pid)), *tid = calloc(n, sizeof(*tid));
	uint64_t *ip = calloc(n, sizeof(*ip)), *count = calloc(n, sizeof(*count));
	uint32_t *stack = calloc(n, sizeof(*stack));
	assert_non_null(pid && tid && ip && count && stack);
	for (size_t i = 0; i < n; i++) {
		pid[i] = tid[i] = 201 + (int32_t)(i % 4);
		ip[i] = ip0 + 4 * (uint64_t)i;
		count[i] = 1 + i % 3;
	}
	struct sample_rec_keys k = {n, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	int rc = store_put_record(s, sid, &env, 100);
	free(pid), free(tid), free(ip), free(count), free(stack);
	return rc;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* What a report shows of the whole store, as text: the total, every stack (pid, tid, count, frames) in
 * sorted order, and the top rows by function and by process in their order. */
static char *report_rows(struct fx *f)
{
	struct store *s = NULL;
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	char **lines = calloc(qr->nstacks + 1, sizeof(*lines));
	assert_non_null(lines);
	size_t len = 64;
	for (size_t i = 0; i < qr->nstacks; i++) {
		const struct query_stack *k = &qr->stacks[i];
		char b[512];
		int n = snprintf(b, sizeof(b), "%d %d %llu", k->pid, k->tid, (unsigned long long)k->count);
		for (size_t j = 0; j < k->nframes && n < (int)sizeof(b); j++) {
			const struct query_frame *fr = &qr->frames[k->frames[j]];
			n += snprintf(b + n, sizeof(b) - (size_t)n, " %s@%s:%llx", fr->function, fr->module,
				      (unsigned long long)fr->ip);
		}
		assert_non_null(lines[i] = strdup(b));
		len += strlen(b) + 1;
	}
	qsort(lines, qr->nstacks, sizeof(*lines), cmp_str);
	struct query_top t[2];
	assert_int_equal(query_top(qr, QUERY_BY_FUNCTION, &t[0]), 0);
	assert_int_equal(query_top(qr, QUERY_BY_PROCESS, &t[1]), 0);
	for (int g = 0; g < 2; g++)
		len += t[g].nrows * 300;
	char *out = malloc(len), *p = out;
	assert_non_null(out);
	p += sprintf(p, "total %llu\n", (unsigned long long)qr->total);
	for (size_t i = 0; i < qr->nstacks; i++) {
		p += sprintf(p, "%s\n", lines[i]);
		free(lines[i]);
	}
	for (int g = 0; g < 2; g++) {
		for (size_t i = 0; i < t[g].nrows; i++)
			p += sprintf(p, "%d %.100s %.100s %llu %llu\n", g, t[g].rows[i].name, t[g].rows[i].module,
				     (unsigned long long)t[g].rows[i].self, (unsigned long long)t[g].rows[i].total);
		query_top_free(&t[g]);
	}
	free(lines);
	query_result_free(qr);
	store_close(s);
	return out;
}

/* #40: compaction (the downsampling's merge over a short window: fewer, larger zstd frames for a
 * report to decode) leaves a report's rows as they were: every stack's count, the top rows by function
 * and by process. A window's blocks are merged in runs of at most VALIDATE_MAX_SAMPLE_KEYS keys in all,
 * the most one record's block holds (the readers' bounds assume it): 40 + 30,000 + 30,000 keys into
 * one block, the next record's 10,000 (70,040 with it) left alone; a later pass merges nothing more. */
static void test_store_backend_compaction_rows_kept(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	bool created = false;
	int64_t sid = session(s, "board-compact", 7, &max, &created);
	for (uint64_t seq = 1; seq <= 8; seq++) /* small records ending at 1..8 ms, keys repeating */
		assert_int_equal(put_pid_samples(s, sid, seq, 101 + (int32_t)(seq % 3)), 1);
	/* large ones at 9..11 ms: distinct addresses, so the merged keys are the sum of theirs */
	assert_int_equal(put_many_keys(s, sid, 9, 30000, 0x500000), 1);
	assert_int_equal(put_many_keys(s, sid, 10, 30000, 0x600000), 1);
	assert_int_equal(put_many_keys(s, sid, 11, 10000, 0x700000), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	char *before = report_rows(f);

	s = fx_open_store(f); /* before 12 ms, per 8 ms: 1-7 (one window), 8-11 in runs under the key bound */
	struct query_downsample_stats ds;
	assert_int_equal(query_downsample(s, 12000000, 8000000, &ds), 0);
	store_close(s);
	assert_int_equal(ds.windows, 2); /* 1-7; 8-10 (60,040 keys), 11 left alone (70,040 with it) */
	assert_int_equal(ds.blocks_in, 7 + 3);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 3);
	assert_int_equal(fx_q(f, "SELECT keys FROM sample_blocks WHERE seq = 8"), 60040);
	assert_int_equal(fx_q(f, "SELECT keys FROM sample_blocks WHERE seq = 11"), 10000);
	char *after = report_rows(f);
	assert_string_equal(after, before);

	s = fx_open_store(f);
	assert_int_equal(query_downsample(s, 12000000, 8000000, &ds), 0);
	store_close(s);
	assert_int_equal(ds.windows, 0);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), 3);
	free(before);
	free(after);
}

/* #40 (w40h): a query reads the call chains of its keys' stacks QM_CHAIN_BATCH ids a statement, not one
 * per stack (on PostgreSQL, one round trip each). 150 stacks (3 batches, the last partial) of distinct
 * lengths, every fifth with a kernel chain too, and a key whose stack was never declared: each key's
 * stack gets its own chain's frames (kernel + user; its ip is the chain's first frame), the undeclared
 * one only its ip. */
#define CHAINS 150
static void test_store_backend_chains_batched(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	bool created = false;
	int64_t sid = session(s, "board-chains", 6, &max, &created);
	static uint64_t ips[CHAINS][9], kips[CHAINS][3];
	Prof__Stack st[CHAINS], *stp[CHAINS];
	int32_t pid[CHAINS + 1], tid[CHAINS + 1];
	uint64_t ip[CHAINS + 1], count[CHAINS + 1];
	uint32_t stack[CHAINS + 1];
	for (int i = 0; i < CHAINS; i++) {
		prof__stack__init(&st[i]);
		stp[i] = &st[i];
		st[i].id = (uint32_t)(i + 1);
		st[i].n_ips = 1 + (size_t)(i % 9);
		for (size_t j = 0; j < st[i].n_ips; j++)
			ips[i][j] = 0x400000 + 0x1000 * (uint64_t)i + 0x10 * j;
		st[i].ips = ips[i];
		if (i % 5 == 0) {
			st[i].n_kernel_ips = 1 + (size_t)(i % 3);
			for (size_t j = 0; j < st[i].n_kernel_ips; j++)
				kips[i][j] = 0xffffffff81000000ull + 0x100 * (uint64_t)i + j;
			st[i].kernel_ips = kips[i];
		}
		pid[i] = 42;
		tid[i] = 1000 + i;
		ip[i] = ips[i][0];
		count[i] = (uint64_t)i + 1;
		stack[i] = st[i].id;
	}
	pid[CHAINS] = 42, tid[CHAINS] = 5000, ip[CHAINS] = 0x5000, count[CHAINS] = 7, stack[CHAINS] = 999;
	struct sample_rec_keys keys = {CHAINS + 1, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, 11, &keys);
	sm.n_new_stacks = CHAINS;
	sm.new_stacks = stp;
	assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	assert_int_equal(qr->nstacks, CHAINS + 1);
	for (size_t k = 0; k < qr->nstacks; k++) {
		const struct query_stack *q = &qr->stacks[k];
		if (q->tid == 5000) {
			assert_int_equal(q->nframes, 1);
			assert_int_equal(q->count, 7);
			continue;
		}
		int i = q->tid - 1000;
		assert_true(i >= 0 && i < CHAINS);
		assert_int_equal(q->count, (uint64_t)i + 1);
		assert_int_equal(q->nframes, st[i].n_kernel_ips + st[i].n_ips);
		for (size_t j = 0; j < q->nframes; j++)
			assert_int_equal(qr->frames[q->frames[j]].kernel, j < st[i].n_kernel_ips);
	}
	query_result_free(qr);
	store_close(s);
}

/* #40 (w40h): a record's mappings are stored as one packed block (sample_map_blocks), not a row each; the
 * query reads an older collector's rows, then the blocks in seq order, and the first declaration of a map
 * id: a key in each mapping is named by its file, a later record's re-declaration of map 2 changes nothing. */
static int put_maps(struct store *s, int64_t sid, uint64_t seq, const int64_t *ids, const char *const *paths,
		    size_t n)
{
	Prof__Mapping m[4], *mp[4];
	int32_t pid[4], tid[4];
	uint64_t ip[4], count[4];
	uint32_t stack[4];
	for (size_t i = 0; i < n; i++) {
		prof__mapping__init(&m[i]);
		mp[i] = &m[i];
		m[i].id = (uint64_t)ids[i];
		m[i].pid = 42;
		m[i].start = 0x100000 * (uint64_t)ids[i];
		m[i].end = m[i].start + 0x10000;
		m[i].path = (char *)paths[i];
		pid[i] = 42, tid[i] = 42 + (int32_t)ids[i], ip[i] = m[i].start + 0x40, count[i] = 1, stack[i] = 0;
	}
	struct sample_rec_keys keys = {n, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &keys);
	sm.n_new_mappings = n;
	sm.new_mappings = mp;
	return store_put_record(s, sid, &env, 100);
}

static void test_store_backend_mappings_packed(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	bool created = false;
	int64_t sid = session(s, "board-maps", 7, &max, &created);
	const int64_t ids1[3] = {1, 2, 3}, ids2[2] = {2, 4};
	const char *p1[3] = {"/usr/bin/app", "/lib/libc.so.6", "/lib/libm.so.6"}, *p2[2] = {"/other/later.so", "/lib/libz.so.1"};
	assert_int_equal(put_maps(s, sid, 11, ids1, p1, 3), 1);
	assert_int_equal(put_maps(s, sid, 12, ids2, p2, 2), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_map_blocks"), 2);
	assert_int_equal(fx_q(f, "SELECT SUM(n) FROM sample_map_blocks"), 5);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_mappings"), 0);
	char sql[256]; /* an older collector's row of the same session (map 5) */
	snprintf(sql, sizeof(sql),
		 "INSERT INTO sample_mappings (session_id, map_id, pid, start, \"end\", pgoff, path) VALUES (%lld, 5,"
		 " 42, %d, %d, 0, '/old/libold.so')",
		 (long long)sid, 0x500000, 0x510000);
	fx_exec(f, sql);
	s = fx_open_store(f);
	const int64_t ids3[1] = {5};
	const char *p3[1] = {"/ignored/again.so"};
	assert_int_equal(put_maps(s, sid, 13, ids3, p3, 1), 1); /* map 5 declared again: the row stays */
	assert_int_equal(store_commit(s), 0);
	store_close(s);

	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	const char *want[6] = {NULL, "app", "libc.so.6", "libm.so.6", "libz.so.1", "libold.so"};
	size_t seen = 0;
	for (size_t k = 0; k < qr->nstacks; k++) {
		const struct query_stack *st = &qr->stacks[k];
		int id = st->tid - 42;
		assert_true(id >= 1 && id <= 5);
		assert_string_equal(qr->frames[st->frames[0]].module, want[id]);
		seen |= 1u << id;
	}
	assert_int_equal(seen, 0x3e); /* maps 1..5 */
	query_result_free(qr);
	store_close(s);
}

/* #40 (w40i), PostgreSQL only: a query's rows come one at a time (db_pg_stream.c), so the
 * collector holds one row of a result, not the whole of it: 2,000 rows of 1 KiB stepped with one
 * row held at most; a statement run between two rows of a query (allowed on SQLite) reads the
 * rest ahead and every row still comes, in order; a query reset before its end leaves the
 * connection usable; an error past the first rows ends the query with it after those rows (49 of
 * them), read directly or read ahead, the connection usable. */
#define STREAM_ROWS 2000
static void test_store_backend_pg_rows_streamed(void **state)
{
	struct fx *f = *state;
	if (!fx_pg_ok) {
		fprintf(stderr, "skipped: %s\n", fx_pg_why);
		skip();
	}
	struct db *d = NULL;
	assert_int_equal(db_open_pg(f->uri, NULL, &d), 0);
	assert_int_equal(db_exec(d,
				 "CREATE TABLE big (i BIGINT PRIMARY KEY, b BYTEA);"
				 " INSERT INTO big SELECT g, convert_to(repeat(chr(65 + g % 26), 1024), 'UTF8')"
				 " FROM generate_series(1, 2000) g",
				 "fill"),
			 0);
	struct db_stmt *a, *b;
	assert_int_equal(db_prepare(d, "SELECT i, b FROM big ORDER BY i", "rows", &a), 0);
	assert_int_equal(db_prepare(d, "SELECT COUNT(*) FROM big WHERE i <= ?1", "lookup", &b), 0);
	int64_t n = 0, sum = 0;
	int rc;
	while ((rc = db_step(a)) == 1) {
		size_t len;
		const uint8_t *v = db_col_blob(a, 1, &len);
		n++;
		assert_int_equal(db_col_i64(a, 0), n);
		assert_int_equal(len, 1024);
		assert_int_equal(v[0], 'A' + n % 26);
		sum += db_col_i64(a, 0);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, STREAM_ROWS);
	assert_int_equal(sum, (int64_t)STREAM_ROWS * (STREAM_ROWS + 1) / 2);
	assert_int_equal(db_pg_rows_held_peak(d), 1);
	db_reset(a);

	/* another statement after the 10th row: the rest read ahead, then given in order */
	n = 0;
	while ((rc = db_step(a)) == 1) {
		assert_int_equal(db_col_i64(a, 0), ++n);
		if (n == 10) {
			db_bind_i64(b, 1, 100);
			assert_int_equal(db_step(b), 1);
			assert_int_equal(db_col_i64(b, 0), 100);
			assert_int_equal(db_col_i64(a, 0), 10); /* the current row stays readable */
			db_reset(b);
		}
	}
	assert_int_equal(rc, 0);
	assert_int_equal(n, STREAM_ROWS);
	assert_true(db_pg_rows_held_peak(d) >= STREAM_ROWS - 10);
	db_reset(a);

	/* reset after 3 rows, then other statements */
	for (int i = 0; i < 3; i++)
		assert_int_equal(db_step(a), 1);
	db_reset(a);
	db_bind_i64(b, 1, 7);
	assert_int_equal(db_step(b), 1);
	assert_int_equal(db_col_i64(b, 0), 7);
	db_reset(b);

	/* an error past the first rows (division by zero at i = 50) */
	struct db_stmt *e;
	assert_int_equal(db_prepare(d, "SELECT 1 / (i - 50) FROM big ORDER BY i", "failing rows", &e), 0);
	n = 0;
	while ((rc = db_step(e)) == 1)
		assert_int_equal(db_col_i64(e, 0), 1 / (++n - 50)); /* the error is logged: "division by zero" */
	assert_true(rc < 0);
	assert_int_equal(n, 49); /* rows 1-49 streamed, then stream_read's error past the first rows */
	db_reset(e);

	/* the same error in the read-ahead: another statement after the 10th row reads rows 11-49
	 * and the error into the spill (dbpg_settle); the 39 held rows come, then the error */
	n = 0;
	while ((rc = db_step(e)) == 1) {
		assert_int_equal(db_col_i64(e, 0), 1 / (++n - 50));
		if (n == 10) {
			db_bind_i64(b, 1, 5);
			assert_int_equal(db_step(b), 1);
			assert_int_equal(db_col_i64(b, 0), 5);
			db_reset(b);
		}
	}
	assert_true(rc < 0);
	assert_int_equal(n, 49);
	db_finalize(e);
	db_bind_i64(b, 1, 2000);
	assert_int_equal(db_step(b), 1);
	assert_int_equal(db_col_i64(b, 0), 2000);
	db_finalize(b);
	db_finalize(a);
	db_close(d);
}

/* #40 (w40i), PostgreSQL only: a report over many blocks holds one row of the store's results at a
 * time (no reader runs another statement between the rows of its query): 300 records, 300 blocks. */
#define STREAM_RECORDS 300
static void test_store_backend_pg_report_rows_bounded(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max = 0;
	int64_t sid = session(s, "board-stream", 7, &max, NULL);
	for (int r = 0; r < STREAM_RECORDS; r++) {
		int32_t pid[2] = {42, 43}, tid[2] = {42, 43 + r};
		uint64_t ip[2] = {0x400000u + (uint64_t)r, 0x500000}, count[2] = {1, 2};
		uint32_t stack[2] = {0, 0};
		struct sample_rec_keys keys = {2, pid, tid, ip, stack, count};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, (uint64_t)r + 1, &keys);
		assert_int_equal(store_put_record(s, sid, &env, 100 + r), 1);
		if (r % 100 == 99)
			assert_int_equal(store_commit(s), 0);
	}
	store_close(s);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_blocks"), STREAM_RECORDS);
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	uint64_t total = 0;
	for (size_t k = 0; k < qr->nstacks; k++)
		total += qr->stacks[k].count;
	assert_int_equal(total, 3 * STREAM_RECORDS);
	size_t peak = store_rows_held_peak(s);
	fprintf(stderr, "report over %d blocks: at most %zu rows held\n", STREAM_RECORDS, peak);
	assert_int_equal(peak, 1); /* more: a reader ran a statement between two rows (read ahead) */
	query_result_free(qr);
	store_close(s);
}

/* Each test twice, named test_..._sqlite and test_..._postgresql. */
/* w44a, pid reuse: pid 700's first process "alpha" (record 1) and a later one "beta" that got its pid
 * (TaskName.incarnation 1 from record 2, its mappings from id 2; declared again in record 3 with a new
 * thread name): each process's samples under its own name, resolved in its own file mapped at the same
 * address; the later process's first seq kept (2), its latest names; PostgreSQL: migration 5. */
static int put_reuse(struct store *s, int64_t sid, uint64_t seq, const char *comm, const char *thread,
		     uint32_t inc, uint64_t n)
{
	int32_t pid[1] = {700}, tid[1] = {700};
	uint64_t ip[1] = {0x401000}, count[1] = {n};
	uint32_t stack[1] = {0};
	struct sample_rec_keys k = {1, pid, tid, ip, stack, count};
	Prof__Samples sm;
	Prof__Envelope env;
	sample_rec_init(&sm, &env, seq, &k);
	char path[64];
	snprintf(path, sizeof(path), "/nonexistent/%s", comm);
	Prof__Mapping m, *mp = &m;
	prof__mapping__init(&m);
	m.id = inc + 1;
	m.pid = 700;
	m.start = 0x400000;
	m.end = 0x500000;
	m.path = path;
	Prof__TaskName tn, *tp = &tn;
	prof__task_name__init(&tn);
	tn.pid = tn.tid = 700;
	tn.comm = (char *)comm;
	tn.thread = (char *)thread;
	tn.incarnation = inc;
	tn.first_map_id = inc ? inc + 1 : 0;
	sm.n_new_mappings = 1;
	sm.new_mappings = &mp;
	sm.n_new_tasks = 1;
	sm.new_tasks = &tp;
	return store_put_record(s, sid, &env, 100);
}

static void test_store_backend_pid_reuse(void **state)
{
	struct fx *f = *state;
	struct store *s = fx_open_store(f);
	uint64_t max_seq;
	int64_t sid = session(s, "reuse", 1, &max_seq, NULL);
	assert_int_equal(put_reuse(s, sid, 1, "alpha", "alpha", 0, 2), 1);
	assert_int_equal(put_reuse(s, sid, 2, "beta", "beta", 1, 3), 1);
	assert_int_equal(put_reuse(s, sid, 3, "beta", "beta2", 1, 5), 1);
	assert_int_equal(store_commit(s), 0);
	store_close(s);
	if (f->b == B_PG)
		assert_int_equal(fx_q(f, "SELECT MAX(version) FROM prof_schema_migrations"), 6);
	assert_int_equal(fx_q(f, "SELECT seq FROM sample_task_incs"), 2);
	assert_int_equal(fx_q(f, "SELECT COUNT(*) FROM sample_tasks"), 1);
	assert_int_equal(store_open(f->uri, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	struct query_result *qr;
	assert_int_equal(query_run(s, &qo, &qr), 0);
	uint64_t alpha = 0, beta = 0;
	for (size_t i = 0; i < qr->nstacks; i++) {
		const struct query_stack *k = &qr->stacks[i];
		const char *mod = qr->frames[k->frames[0]].module;
		if (strcmp(k->comm, "alpha") == 0) {
			assert_string_equal(mod, "alpha");
			assert_string_equal(k->thread, "alpha");
			alpha += k->count;
		} else {
			assert_string_equal(k->comm, "beta");
			assert_string_equal(k->thread, "beta2");
			assert_string_equal(mod, "beta");
			beta += k->count;
		}
	}
	assert_int_equal(alpha, 2);
	assert_int_equal(beta, 8);
	query_result_free(qr);
	store_close(s);
}

#define BOTH(t)                                                                                              \
	{#t "_sqlite", t, fx_setup_sqlite, fx_teardown, NULL},                                               \
	{                                                                                                    \
#t "_postgresql", t, fx_setup_pg, fx_teardown, NULL                                          \
	}

int main(void)
{
	log_init("test_store_backends", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    BOTH(test_store_backend_sessions_found_or_created),
	    BOTH(test_store_backend_exactly_once),
	    BOTH(test_store_backend_two_handles_one_database),
	    BOTH(test_store_backend_ahead_duplicate_stored_once),
	    BOTH(test_store_backend_ahead_savepoints_bounded),
	    BOTH(test_store_backend_rollback_discards),
	    BOTH(test_store_backend_heartbeat_and_refusals),
	    BOTH(test_store_backend_every_kind_and_queries),
	    BOTH(test_store_backend_overview_report),
	    BOTH(test_store_backend_check_on_open),
	    BOTH(test_store_backend_kernel_symbols),
	    BOTH(test_store_backend_kernel_symbols_compressed),
	    BOTH(test_store_backend_older_samples_upgraded),
	    BOTH(test_store_backend_block_pid_ranges),
	    BOTH(test_store_backend_downsample),
	    BOTH(test_store_backend_compaction_rows_kept),
	    BOTH(test_store_backend_chains_batched),
	    BOTH(test_store_backend_mappings_packed),
	    BOTH(test_store_backend_pid_reuse),
	    cmocka_unit_test_setup_teardown(test_store_backend_pg_migrations_versioned, fx_setup_pg,
					    fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_backend_pg_loop_reconnects, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_backend_pg_rows_streamed, fx_setup_pg, fx_teardown),
	    cmocka_unit_test_setup_teardown(test_store_backend_pg_report_rows_bounded, fx_setup_pg,
					    fx_teardown),
	};
	return cmocka_run_group_tests_name("store_backends", tests, fx_group_setup, fx_group_teardown);
}
