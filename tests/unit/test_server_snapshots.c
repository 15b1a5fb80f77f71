/* Board snapshots replayed by the collector on a live connection (issue 36,
 * collector/server/ingest_snap.c): the real server on 127.0.0.1, stepped in
 * process, and a test agent over a real socket (tests/lib/srvclient.c: the
 * project's framing) that sends a TraceSnapshot of a cross-built AArch64 /
 * Thumb-2 program (tests/lib/replay_prog.c, as test_trace_replay_arm makes
 * one) and answers the collector's PageRequests with Pages as the agent's page
 * server does (agent/trace/snapshot_serve.c snap_serve_pages: one status per
 * address in order, the page's bytes for status 0). The stored window must be
 * the one snap_session/trace_replay makes in process from the same pages; bad
 * snapshots and answers are refused with an Error naming the snapshot while the
 * connection's records go on. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "net.h"
#include "record.h"
#include "spool.h"
#include "transport.h"
#include "log.h"
#include "replay_prog.h"
#include "server/ingest_snap.h"
#include "server/server.h"
#include "srvclient.h"
#include "store/store.h"
#include "store/store_trace.h"
#include "trace/window_codec.h"
#include "trace_replay/snap_session.h"
#include "validate.h"
#include "validate_snapshot.h"

#define WARMUP 60000u
#define RECORD 30000u

static char tmpdir[64];

static int setup(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_server_snapshots.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	return srv_fixture_open(state, (struct server_options){.max_frame = 256u * 1024u});
}

/* A store file, for the collector's own commands to read after the test's connection. */
static int setup_file(void **state)
{
	snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_server_snapshots.XXXXXX");
	if (!mkdtemp(tmpdir))
		return -1;
	char path[128];
	snprintf(path, sizeof(path), "%s/store.db", tmpdir);
	struct srv_fixture *f = calloc(1, sizeof(*f));
	struct server_options opt = {.listen = "127.0.0.1:0", .signal_fd = -1, .max_frame = 256u * 1024u};
	if (!f || store_open(path, 0, &f->store) < 0 || server_open(f->store, &opt, &f->srv) < 0)
		return -1;
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	(void)!system(cmd);
	return srv_fixture_teardown(state);
}

static bool prog_for(const char *cc, const char *flags, const char *name, struct replay_prog *p)
{
	char exe[256];
	if (!replay_prog_build(cc, flags, tmpdir, name, exe, sizeof(exe)))
		return false;
	replay_prog_load(exe, p);
	return true;
}

/* Append a TraceSnapshot of p with a page budget of max_pages. */
static void add_snapshot_budget(uint8_t **buf, size_t *len, struct replay_prog *p, uint32_t id, uint64_t window_seq,
				uint32_t max_pages)
{
	Prof__TraceSnapshot ts;
	replay_prog_snapshot(p, &ts, id, max_pages);
	ts.pid = 42;
	ts.tid = 43;
	ts.window_index = id;
	ts.window_seq = window_seq;
	ts.warmup_insns = WARMUP;
	ts.record_insns = RECORD;
	ts.t_ns = 5000 + id;
	ts.stop_ns = 2300000;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_SNAPSHOT;
	env.trace_snapshot = &ts;
	frames_add(buf, len, &env);
}

static void add_snapshot(uint8_t **buf, size_t *len, struct replay_prog *p, uint32_t id, uint64_t window_seq)
{
	add_snapshot_budget(buf, len, p, id, window_seq, 64);
}

/* The agent's answer to a PageRequest: refuse_from >= 0 answers EFAULT from that many pages on;
 * bad names a page the collector did not ask for (valid on the wire, wrong for the replay). */
static void answer(struct client *cl, struct replay_prog *p, const Prof__PageRequest *req, int refuse_from,
		   bool bad)
{
	static uint8_t data[SNAPSHOT_REQ_PAGES * REPLAY_PROG_PAGE];
	uint32_t status[SNAPSHOT_REQ_PAGES];
	size_t off = 0;
	for (size_t i = 0; i < req->n_addr; i++) {
		int rc = refuse_from >= 0 && (int)p->fetched >= refuse_from
			     ? -EFAULT
			     : replay_prog_fetch(p, req->addr[i], data + off, REPLAY_PROG_PAGE);
		status[i] = rc < 0 ? (uint32_t)-rc : 0;
		if (rc == 0)
			off += REPLAY_PROG_PAGE;
	}
	Prof__Pages pg = PROF__PAGES__INIT;
	pg.snapshot_id = req->snapshot_id;
	pg.n_addr = pg.n_status = req->n_addr;
	uint64_t addr[SNAPSHOT_REQ_PAGES];
	memcpy(addr, req->addr, req->n_addr * sizeof(*addr));
	if (bad)
		addr[0] += 1024u * REPLAY_PROG_PAGE;
	pg.addr = addr;
	pg.status = status;
	pg.data.data = data;
	pg.data.len = off;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_PAGES;
	env.pages = &pg;
	uint8_t *buf = NULL;
	size_t len = 0;
	frames_add(&buf, &len, &env);
	send_and_free(cl, &buf, &len);
}

/* What came back from the collector while serving pages. */
struct seen {
	uint64_t acked;
	unsigned requests, done, errors;
	uint32_t done_id, error_id, error_code;
	char error[400];
};

/* Answer PageRequests until `until` SnapshotDone/Errors came (bounded). */
static void serve(struct client *cl, struct server *srv, struct replay_prog *p, unsigned until, int refuse_from,
		  bool bad, struct seen *sn)
{
	for (int i = 0; i < 400 && sn->done + sn->errors < until; i++) {
		Prof__Envelope *env = client_next(cl, srv);
		assert_non_null(env);
		switch (env->body_case) {
		case PROF__ENVELOPE__BODY_PAGE_REQUEST:
			sn->requests++;
			answer(cl, p, env->page_request, refuse_from, bad);
			break;
		case PROF__ENVELOPE__BODY_ACK:
			if (env->ack->seq > sn->acked)
				sn->acked = env->ack->seq;
			break;
		case PROF__ENVELOPE__BODY_SNAPSHOT_DONE:
			sn->done++;
			sn->done_id = env->snapshot_done->snapshot_id;
			break;
		case PROF__ENVELOPE__BODY_ERROR:
			sn->errors++;
			sn->error_id = env->error->snapshot_id;
			sn->error_code = env->error->code;
			snprintf(sn->error, sizeof(sn->error), "%s", env->error->message);
			fprintf(stderr, "collector: Error %u snapshot %u: %s\n", env->error->code,
				env->error->snapshot_id, env->error->message);
			assert_int_not_equal(env->error->snapshot_id, 0); /* the connection is never refused */
			break;
		default: fail_msg("unexpected %s from the collector", envelope_kind(env));
		}
		prof__envelope__free_unpacked(env, NULL);
	}
	assert_int_equal(sn->done + sn->errors, until);
}

struct windows {
	unsigned n;
	uint64_t seq[8];
	uint8_t *packed[8];
	size_t len[8];
};

static int keep_window(const struct store_trace_row *row, void *arg)
{
	struct windows *w = arg;
	if (w->n >= 8)
		return 0;
	w->seq[w->n] = row->seq;
	w->len[w->n] = prof__trace_window__get_packed_size(row->tw);
	w->packed[w->n] = malloc(w->len[w->n]);
	prof__trace_window__pack(row->tw, w->packed[w->n]);
	w->n++;
	return 0;
}

static int64_t first_session(struct store *s)
{
	int64_t sid = 0;
	uint64_t seq = 0;
	assert_int_equal(store_session_find(s, "board-1", 77, &sid, &seq), 1);
	return sid;
}

/* The window snap_session makes in process from the same program and pages. */
static void expected_window(struct replay_prog *p, uint32_t id, uint8_t **packed, size_t *len)
{
	Prof__TraceSnapshot ts;
	replay_prog_snapshot(p, &ts, id, 64);
	ts.pid = 42;
	ts.tid = 43;
	ts.window_index = id;
	struct trace_replay_config cfg = {.warmup = WARMUP, .record = RECORD, .max_pages = 64};
	struct snap_session *ss;
	char why[200];
	assert_int_equal(snap_session_new(&ts, &cfg, &ss, why, sizeof(why)), 0);
	uint64_t addr[SNAP_SESSION_PREFETCH];
	size_t n;
	int rc;
	static uint8_t data[SNAP_SESSION_PREFETCH * REPLAY_PROG_PAGE];
	uint32_t status[SNAP_SESSION_PREFETCH];
	for (int i = 0; i < 200 && (rc = snap_session_step(ss, addr, &n)) >= 1; i++) {
		if (rc == 2)
			continue;
		size_t off = 0;
		for (size_t k = 0; k < n; k++) {
			int f = replay_prog_fetch(p, addr[k], data + off, REPLAY_PROG_PAGE);
			status[k] = f < 0 ? (uint32_t)-f : 0;
			off += f == 0 ? REPLAY_PROG_PAGE : 0;
		}
		Prof__Pages pg = PROF__PAGES__INIT;
		pg.snapshot_id = id;
		pg.n_addr = pg.n_status = n;
		pg.addr = addr;
		pg.status = status;
		pg.data.data = data;
		pg.data.len = off;
		assert_int_equal(snap_session_pages(ss, &pg, why, sizeof(why)), 0);
	}
	assert_int_equal(snap_session_step(ss, addr, &n), 0);
	assert_int_equal(snap_session_result(ss)->end, TRACE_REPLAY_END_LIMIT);
	Prof__TraceWindow tw;
	assert_int_equal(snap_session_window(ss, &tw), 0);
	tw.t_ns = 5000 + id;
	tw.stop_ns = 2300000;
	*len = prof__trace_window__get_packed_size(&tw);
	*packed = malloc(*len);
	prof__trace_window__pack(&tw, *packed);
	edag_window_encode_free(&tw);
	snap_session_free(ss);
}

/* The first stored window in w is byte for byte the one the replay of snapshot 7
 * of p makes in process: its length. */
static size_t expect_stored_window(struct replay_prog *p, const struct windows *w)
{
	uint8_t *want;
	size_t want_len;
	p->fetched = 0;
	expected_window(p, 7, &want, &want_len);
	assert_int_equal(w->len[0], want_len);
	assert_memory_equal(w->packed[0], want, want_len);
	free(want);
	return want_len;
}

static void hello(struct client *cl, struct server *srv)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "board-1", .boot = 77, .board = "qemu-virt-arm64"});
	add_counters(&buf, &len, 1);
	send_and_free(cl, &buf, &len);
	expect_ack_reaching(cl, srv, 1);
}

static void window_stored(void **state, const char *cc, const char *flags, const char *name)
{
	struct srv_fixture *f = *state;
	struct replay_prog p;
	if (!prog_for(cc, flags, name, &p)) {
		skip();
		return;
	}
	struct client cl;
	client_open(&cl, f->srv);
	hello(&cl, f->srv);
	/* the window's seq 3 is above record 2, still to come: the window waits for it */
	uint8_t *buf = NULL;
	size_t len = 0;
	add_snapshot(&buf, &len, &p, 7, 3);
	send_and_free(&cl, &buf, &len);
	struct seen sn = {0};
	/* every page asked for answered; nothing more comes until record 2 is here (bounded steps:
	 * each runs one slice of the replay, so the replay is done well within them) */
	for (int i = 0; i < 200; i++) {
		const uint8_t *pl;
		size_t pln;
		if (frame_decoder_next(&cl.dec, &pl, &pln) != 1) {
			size_t avail;
			uint8_t *dst = frame_decoder_space(&cl.dec, &avail);
			ssize_t r = recv(cl.fd, dst, avail, MSG_DONTWAIT);
			if (r > 0)
				frame_decoder_commit(&cl.dec, (size_t)r);
			else
				assert_true(server_step(f->srv, 0) >= 0);
			continue;
		}
		char err[160];
		Prof__Envelope *env = envelope_decode(pl, pln, err, sizeof(err));
		assert_non_null(env);
		assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_PAGE_REQUEST);
		sn.requests++;
		answer(&cl, &p, env->page_request, -1, false);
		prof__envelope__free_unpacked(env, NULL);
	}
	assert_true(sn.requests >= 2);
	struct windows w = {0};
	int64_t sid = first_session(f->store);
	assert_int_equal(store_list_trace_windows(f->store, sid, -1, keep_window, &w), 0);
	assert_int_equal(w.n, 0); /* not before record 2 */
	add_counters(&buf, &len, 2);
	add_counters(&buf, &len, 4);
	send_and_free(&cl, &buf, &len);
	serve(&cl, f->srv, &p, 1, -1, false, &sn);
	assert_int_equal(sn.done, 1);
	assert_int_equal(sn.done_id, 7);
	if (sn.acked < 4)
		expect_ack_reaching(&cl, f->srv, 4);
	assert_int_equal(store_list_trace_windows(f->store, sid, -1, keep_window, &w), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.seq[0], 3);
	size_t want_len = expect_stored_window(&p, &w);
	uint64_t records = 0;
	assert_int_equal(store_session_records(f->store, sid, &records), 0);
	assert_int_equal(records, 4); /* counters 1, 2, 4 and the window 3 */
	fprintf(stderr, "%s: window seq 3 stored (%zu bytes), %u page requests\n", name, want_len, sn.requests);
	free(w.packed[0]);
	client_close(&cl);
	replay_prog_free(&p);
}

static void test_server_snapshots_aarch64_window_stored(void **state)
{
	window_stored(state, "aarch64-linux-gnu-gcc", "", "walk.a64");
}

static void test_server_snapshots_thumb2_window_stored(void **state)
{
	window_stored(state, "arm-linux-gnueabihf-gcc", "-mthumb", "walk.t32");
}

/* Refusals name the snapshot and the limit; the connection's records go on. */
static void test_server_snapshots_refusals_keep_the_connection(void **state)
{
	struct srv_fixture *f = *state;
	struct replay_prog p;
	if (!prog_for("aarch64-linux-gnu-gcc", "", "walk.ref", &p)) {
		skip();
		return;
	}
	struct client cl;
	client_open(&cl, f->srv);
	hello(&cl, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	struct seen sn = {0};

	/* no window_seq */
	add_snapshot(&buf, &len, &p, 1, 0);
	add_counters(&buf, &len, 2);
	send_and_free(&cl, &buf, &len);
	serve(&cl, f->srv, &p, 1, -1, false, &sn);
	assert_int_equal(sn.error_id, 1);
	assert_int_equal(sn.error_code, EINVAL);
	assert_non_null(strstr(sn.error, "window_seq"));

	/* more instructions than the limit */
	Prof__TraceSnapshot ts;
	replay_prog_snapshot(&p, &ts, 2, 64);
	ts.window_seq = 10;
	ts.record_insns = INGEST_SNAP_RECORD_MAX + 1;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_SNAPSHOT;
	env.trace_snapshot = &ts;
	frames_add(&buf, &len, &env);
	add_counters(&buf, &len, 3);
	send_and_free(&cl, &buf, &len);
	serve(&cl, f->srv, &p, 2, -1, false, &sn);
	assert_int_equal(sn.error_id, 2);
	assert_int_equal(sn.error_code, E2BIG);
	assert_non_null(strstr(sn.error, "INGEST_SNAP_RECORD_MAX"));

	/* more snapshots at once than INGEST_SNAP_MAX: the one past it is refused */
	for (uint32_t id = 10; id < 10 + INGEST_SNAP_MAX + 1; id++)
		add_snapshot(&buf, &len, &p, id, 4 + (id - 10));
	send_and_free(&cl, &buf, &len);
	unsigned errors_before = sn.errors;
	serve(&cl, f->srv, &p, sn.done + sn.errors + INGEST_SNAP_MAX + 1, -1, false, &sn);
	assert_int_equal(sn.errors, errors_before + 1);
	assert_int_equal(sn.error_id, 10 + INGEST_SNAP_MAX);
	assert_int_equal(sn.error_code, EBUSY);
	assert_non_null(strstr(sn.error, "INGEST_SNAP_MAX"));
	assert_int_equal(sn.done, INGEST_SNAP_MAX);

	/* a Pages answer with a page not asked for: that snapshot is refused */
	add_snapshot(&buf, &len, &p, 20, 9);
	send_and_free(&cl, &buf, &len);
	p.fetched = 0;
	serve(&cl, f->srv, &p, sn.done + sn.errors + 1, -1, true, &sn);
	assert_int_equal(sn.error_id, 20);
	assert_non_null(strstr(sn.error, "not asked for"));

	/* the records around them all stored, acked, the connection still open */
	add_counters(&buf, &len, 10);
	send_and_free(&cl, &buf, &len);
	expect_ack_reaching(&cl, f->srv, 10);

	/* a refused snapshot's seq (11) holds no record: the next window (12) does not wait for it
	 * (before, it waited INGEST_SNAP_TIME_MS for a record 11 that never comes, and was refused) */
	replay_prog_snapshot(&p, &ts, 22, 64);
	ts.window_seq = 11;
	ts.record_insns = INGEST_SNAP_RECORD_MAX + 1;
	frames_add(&buf, &len, &env);
	add_snapshot(&buf, &len, &p, 23, 12);
	send_and_free(&cl, &buf, &len);
	p.fetched = 0;
	unsigned done_before = sn.done;
	serve(&cl, f->srv, &p, sn.done + sn.errors + 2, -1, false, &sn);
	assert_int_equal(sn.done, done_before + 1);
	assert_int_equal(sn.done_id, 23);

	int64_t sid = first_session(f->store);
	uint64_t records = 0;
	assert_int_equal(store_session_records(f->store, sid, &records), 0);
	assert_int_equal(records, 5 + INGEST_SNAP_MAX); /* counters 1, 2, 3, 10; windows 4..7, 12 */
	struct windows w = {0};
	assert_int_equal(store_list_trace_windows(f->store, sid, -1, keep_window, &w), 0);
	assert_int_equal(w.n, INGEST_SNAP_MAX + 1);
	assert_int_equal(w.seq[w.n - 1] == 12 || w.seq[0] == 12, 1);
	for (unsigned i = 0; i < w.n; i++)
		free(w.packed[i]);
	client_close(&cl);
	replay_prog_free(&p);
}

/* The first Error or PageRequest the collector sends on cl (acks skipped): its kind, and for
 * an Error its code and message. */
static int next_answer(struct client *cl, struct server *srv, uint32_t *code, char *msg, size_t msglen)
{
	for (int i = 0; i < 50; i++) {
		Prof__Envelope *env = client_next(cl, srv);
		assert_non_null(env);
		int kind = env->body_case;
		if (kind == PROF__ENVELOPE__BODY_ERROR) {
			*code = env->error->code;
			snprintf(msg, msglen, "%s", env->error->message);
		}
		prof__envelope__free_unpacked(env, NULL);
		if (kind != PROF__ENVELOPE__BODY_ACK)
			return kind;
	}
	fail_msg("no PageRequest or Error from the collector");
	return 0;
}

/* Page memory is bounded across connections (INGEST_SNAP_SERVER_BYTES), not only per connection:
 * two agents hold 2 x 64 MiB of page budget each, a third agent's snapshot is refused naming
 * the limit; once the first agent is gone (its snapshots freed), the third one's is taken. */
static void test_server_snapshots_page_memory_bounded_across_connections(void **state)
{
	struct srv_fixture *f = *state;
	struct replay_prog p;
	if (!prog_for("aarch64-linux-gnu-gcc", "", "walk.mem", &p)) {
		skip();
		return;
	}
	static const char *const agents[3] = {"board-m1", "board-m2", "board-m3"};
	const uint32_t whole = INGEST_SNAP_BYTES / REPLAY_PROG_PAGE;
	struct client cl[3];
	uint32_t code = 0;
	char msg[400] = "";
	for (int a = 0; a < 3; a++) {
		client_open(&cl[a], f->srv);
		uint8_t *buf = NULL;
		size_t len = 0;
		add_hello_frame(&buf, &len, &(struct hello_spec){.agent = agents[a], .boot = 78, .board = "qemu-virt-arm64"});
		add_counters(&buf, &len, 1);
		send_and_free(&cl[a], &buf, &len);
		expect_ack_reaching(&cl[a], f->srv, 1);
		unsigned n = a < 2 ? INGEST_SNAP_CONN_BYTES / INGEST_SNAP_BYTES : 1;
		for (unsigned k = 0; k < n; k++) {
			add_snapshot_budget(&buf, &len, &p, 30 + k, 2 + k, whole); /* the whole per-snapshot budget */
			send_and_free(&cl[a], &buf, &len);
			int kind = next_answer(&cl[a], f->srv, &code, msg, sizeof(msg));
			if (a < 2) {
				assert_int_equal(kind, PROF__ENVELOPE__BODY_PAGE_REQUEST); /* taken, its pages asked for */
			} else {
				assert_int_equal(kind, PROF__ENVELOPE__BODY_ERROR);
				assert_int_equal(code, EDQUOT);
				assert_non_null(strstr(msg, "INGEST_SNAP_SERVER_BYTES"));
				fprintf(stderr, "third agent: %s\n", msg);
			}
		}
	}
	client_close(&cl[0]);
	for (int i = 0; i < 20; i++) /* the server sees the close and frees that agent's snapshots */
		assert_true(server_step(f->srv, 10) >= 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_snapshot_budget(&buf, &len, &p, 40, 3, whole);
	send_and_free(&cl[2], &buf, &len);
	assert_int_equal(next_answer(&cl[2], f->srv, &code, msg, sizeof(msg)), PROF__ENVELOPE__BODY_PAGE_REQUEST);
	client_close(&cl[1]);
	client_close(&cl[2]);
	replay_prog_free(&p);
}

/* The real agent's transport (agent/transport.c) against the real collector: the snapshot sent
 * live under a reserved seq between two records, its pages answered by the transport's handler
 * (transport_set_snapshots), SnapshotDone handed back, every ack believed (the window's seq is
 * counted as the agent's), the window stored as the replay makes it. */
struct agent_pages {
	struct replay_prog *p;
	uint8_t data[SNAPSHOT_REQ_PAGES * REPLAY_PROG_PAGE];
	uint64_t addr[SNAPSHOT_REQ_PAGES];
	uint32_t status[SNAPSHOT_REQ_PAGES];
	uint32_t done_id;
	unsigned calls;
};

static int agent_pages(void *ctx, const Prof__PageRequest *req, Prof__Pages *out)
{
	struct agent_pages *ap = ctx;
	ap->calls++;
	prof__pages__init(out);
	size_t off = 0;
	for (size_t i = 0; i < req->n_addr; i++) {
		int rc = replay_prog_fetch(ap->p, req->addr[i], ap->data + off, REPLAY_PROG_PAGE);
		ap->addr[i] = req->addr[i];
		ap->status[i] = rc < 0 ? (uint32_t)-rc : 0;
		off += rc == 0 ? REPLAY_PROG_PAGE : 0;
	}
	out->snapshot_id = req->snapshot_id;
	out->addr = ap->addr;
	out->n_addr = out->n_status = req->n_addr;
	out->status = ap->status;
	out->data.data = ap->data;
	out->data.len = off;
	return 0;
}

static void agent_done(void *ctx, uint32_t id)
{
	((struct agent_pages *)ctx)->done_id = id;
}

/* One turn of both sides (bounded by the caller's count of turns, not by time). */
static void turn(struct server *srv, struct transport *t)
{
	assert_true(server_step(srv, 0) >= 0);
	struct pollfd pfd;
	transport_poll_prepare(t, &pfd, clock_mono_ns());
	if (pfd.fd >= 0)
		(void)poll(&pfd, 1, 1);
	assert_int_equal(transport_process(t, pfd.fd >= 0 ? pfd.revents : 0, clock_mono_ns()), 0);
}

static void submit_counters(struct transport *t, uint64_t seq)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	add_counters(&buf, &len, seq);
	assert_int_equal(transport_submit(t, seq, buf, len), 0);
	free(buf);
}

static void test_server_snapshots_agent_transport(void **state)
{
	struct srv_fixture *f = *state;
	struct replay_prog p;
	if (!prog_for("aarch64-linux-gnu-gcc", "", "walk.tr", &p)) {
		skip();
		return;
	}
	char dir[128], err[256], hostport[64];
	snprintf(dir, sizeof(dir), "%s/spool", tmpdir);
	assert_int_equal(mkdir(dir, 0700), 0);
	struct spool *spool;
	assert_int_equal(spool_open(&spool, dir, "board-1", 77, 1 << 20, 512, err, sizeof(err)), 0);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "board-1";
	h.boot_id = 77;
	h.board = "qemu-virt-arm64";
	uint8_t *hf;
	size_t hl;
	assert_int_equal(record_hello_frame(&h, 1 << 20, &hf, &hl), 0);
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", server_port(f->srv));
	struct transport *t;
	assert_int_equal(transport_create(&t, hostport, spool, hf, hl, 1 << 20, err, sizeof(err)), 0);
	free(hf);
	struct agent_pages ap = {.p = &p};
	transport_set_snapshots(t, agent_pages, agent_done, &ap);
	for (int i = 0; i < 400 && !transport_streaming(t); i++)
		turn(f->srv, t);
	assert_true(transport_streaming(t));

	submit_counters(t, 1);
	Prof__TraceSnapshot ts;
	replay_prog_snapshot(&p, &ts, 7, 64);
	ts.pid = 42;
	ts.tid = 43;
	ts.window_index = 7;
	ts.window_seq = 2; /* reserved: never submitted */
	ts.warmup_insns = WARMUP;
	ts.record_insns = RECORD;
	ts.t_ns = 5007;
	ts.stop_ns = 2300000;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_SNAPSHOT;
	env.trace_snapshot = &ts;
	uint8_t *sf;
	size_t sl;
	assert_int_equal(frame_encode(&env, 1 << 20, &sf, &sl), 0);
	assert_int_equal(transport_send_snapshot(t, 2, sf, sl), 0);
	free(sf);
	submit_counters(t, 3);
	for (int i = 0; i < 2000 && (ap.done_id != 7 || transport_get_stats(t)->acked < 3); i++)
		turn(f->srv, t);
	assert_int_equal(ap.done_id, 7);
	assert_true(ap.calls >= 2);
	assert_int_equal(transport_get_stats(t)->acked, 3);
	assert_int_equal(transport_get_stats(t)->acks_refused, 0);
	assert_true(transport_streaming(t)); /* one connection throughout */

	int64_t sid = first_session(f->store);
	struct windows w = {0};
	assert_int_equal(store_list_trace_windows(f->store, sid, -1, keep_window, &w), 0);
	assert_int_equal(w.n, 1);
	assert_int_equal(w.seq[0], 2);
	expect_stored_window(&p, &w);
	uint64_t records = 0;
	assert_int_equal(store_session_records(f->store, sid, &records), 0);
	assert_int_equal(records, 3);
	fprintf(stderr, "agent transport: window seq 2 stored, %u page requests answered\n", ap.calls);
	/* `collector edag` reads it as any stored window */
	char cmd[512], line[512];
	snprintf(cmd, sizeof(cmd), "'%s/collector' edag --store '%s/store.db' --session %lld 2>&1",
		 getenv("PROF_BIN_DIR") ? getenv("PROF_BIN_DIR") : "build/host-san", tmpdir, (long long)sid);
	FILE *pf = popen(cmd, "r");
	assert_non_null(pf);
	unsigned long W = 0, D = 0;
	while (fgets(line, sizeof(line), pf)) {
		fprintf(stderr, "collector edag: %s", line);
		const char *at = strstr(line, "memory accesses");
		if (at)
			assert_int_equal(sscanf(at, "memory accesses %*u, W %lu memory vertices, D %lu", &W, &D), 2);
	}
	assert_int_equal(pclose(pf), 0);
	/* no cache model: every access of the window is a memory vertex */
	Prof__TraceWindow *tw = prof__trace_window__unpack(NULL, w.len[0], w.packed[0]); /* the replay's, as checked */
	assert_non_null(tw);
	assert_int_equal(W, tw->n_size);
	assert_true(D > 0 && D <= W);
	prof__trace_window__free_unpacked(tw, NULL);
	free(w.packed[0]);
	transport_destroy(t);
	spool_ack(spool, UINT64_MAX);
	spool_close(spool, true);
	replay_prog_free(&p);
}

int main(void)
{
	log_init("test_server_snapshots", LOG_LEVEL_INFO); /* the server says what each window cost */
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_server_snapshots_aarch64_window_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_snapshots_thumb2_window_stored, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_snapshots_refusals_keep_the_connection, setup, teardown),
		cmocka_unit_test_setup_teardown(test_server_snapshots_page_memory_bounded_across_connections, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_server_snapshots_agent_transport, setup_file, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
