/* The collector client against an in-process fake collector on loopback:
 * Hello/Ack, streaming, reconnect + replay from the Hello ack, fatal version
 * mismatch, backoff while unreachable. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "net.h"
#include "record.h"
#include "spool.h"
#include "transport.h"

#define MAXSEQ 256

struct fake {
	int lfd, cfd;
	char addr[64];
	struct frame_decoder dec;
	bool hello_seen;
	uint64_t committed;  /* what it answers the Hello with */
	bool auto_ack;       /* ack every record right away */
	const char *hello_error;
	int received[MAXSEQ]; /* times each seq arrived */
	int hellos;
	/* The collector's store failing (collector/server/server_store.c, srv_store_failed): the
	 * Hello is acked, the first record then answered with Error{EAGAIN, retry_after_ms} and
	 * the connection closed, fail_records times. */
	int fail_records;
	uint32_t retry_ms;
	uint64_t hello_ns[8];
	/* Pages answers (issue 36): how many, and the last one's */
	int pages_seen;
	uint64_t pages_seq;
	uint32_t pages_id, pages_status[64];
	size_t pages_n, pages_bytes;
	uint8_t pages_first;
};

static void fake_start(struct fake *f)
{
	memset(f, 0, sizeof(*f));
	f->cfd = -1;
	f->auto_ack = true;
	f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	assert_true(f->lfd >= 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(f->lfd, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(f->lfd, 4), 0);
	socklen_t l = sizeof(a);
	getsockname(f->lfd, (struct sockaddr *)&a, &l);
	snprintf(f->addr, sizeof(f->addr), "127.0.0.1:%u", ntohs(a.sin_port));
}

static void fake_drop_conn(struct fake *f)
{
	if (f->cfd >= 0) {
		close(f->cfd);
		frame_decoder_free(&f->dec);
	}
	f->cfd = -1;
	f->hello_seen = false;
}

static void fake_stop(struct fake *f)
{
	fake_drop_conn(f);
	if (f->lfd >= 0)
		close(f->lfd);
	f->lfd = -1;
}

static void fake_send(struct fake *f, Prof__Envelope *env)
{
	uint8_t *b;
	size_t len;
	assert_int_equal(frame_encode(env, 1 << 20, &b, &len), 0);
	assert_int_equal(send(f->cfd, b, len, MSG_NOSIGNAL), (ssize_t)len);
	free(b);
}

static void fake_ack(struct fake *f, uint64_t seq)
{
	Prof__Ack ack;
	prof__ack__init(&ack);
	ack.seq = seq;
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.body_case = PROF__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	fake_send(f, &env);
}

static void fake_step(struct fake *f)
{
	if (f->cfd < 0 && f->lfd >= 0) {
		int c = accept4(f->lfd, NULL, NULL, SOCK_NONBLOCK);
		if (c < 0)
			return;
		f->cfd = c;
		frame_decoder_init(&f->dec, 1 << 20);
	}
	if (f->cfd < 0)
		return;
	uint8_t buf[65536];
	ssize_t n = recv(f->cfd, buf, sizeof(buf), 0);
	if (n == 0) {
		fake_drop_conn(f);
		return;
	}
	if (n < 0)
		return;
	assert_int_equal(frame_decoder_feed(&f->dec, buf, (size_t)n), 0);
	const uint8_t *p;
	size_t len;
	while (frame_decoder_next(&f->dec, &p, &len) > 0) {
		char err[200];
		Prof__Envelope *env = envelope_decode(p, len, err, sizeof(err));
		assert_non_null(env);
		if (env->body_case == PROF__ENVELOPE__BODY_HELLO) {
			assert_false(f->hello_seen);
			f->hello_seen = true;
			if (f->hellos < 8)
				f->hello_ns[f->hellos] = clock_mono_ns();
			f->hellos++;
			if (f->hello_error) {
				Prof__Error e;
				prof__error__init(&e);
				e.code = EPROTO;
				e.message = (char *)f->hello_error;
				Prof__Envelope r;
				prof__envelope__init(&r);
				r.body_case = PROF__ENVELOPE__BODY_ERROR;
				r.error = &e;
				fake_send(f, &r);
			} else {
				fake_ack(f, f->committed);
			}
		} else if (env->body_case == PROF__ENVELOPE__BODY_PAGES) {
			assert_true(f->hello_seen);
			Prof__Pages *pg = env->pages;
			f->pages_seen++;
			f->pages_seq = env->seq;
			f->pages_id = pg->snapshot_id;
			f->pages_n = pg->n_status < 64 ? pg->n_status : 64;
			memcpy(f->pages_status, pg->status, f->pages_n * sizeof(uint32_t));
			f->pages_bytes = pg->data.len;
			f->pages_first = pg->data.len ? pg->data.data[0] : 0;
		} else {
			assert_true(f->hello_seen); /* Hello first */
			assert_true(env->seq < MAXSEQ);
			f->received[env->seq]++;
			if (f->fail_records > 0) {
				f->fail_records--;
				Prof__Error e;
				prof__error__init(&e);
				e.code = EAGAIN;
				e.message = "store unavailable: nothing of the last batch was stored";
				e.retry_after_ms = f->retry_ms;
				Prof__Envelope r;
				prof__envelope__init(&r);
				r.body_case = PROF__ENVELOPE__BODY_ERROR;
				r.error = &e;
				fake_send(f, &r);
				prof__envelope__free_unpacked(env, NULL);
				fake_drop_conn(f);
				return;
			}
			if (f->auto_ack && env->seq > f->committed) {
				f->committed = env->seq;
				fake_ack(f, f->committed);
			}
		}
		prof__envelope__free_unpacked(env, NULL);
	}
}

/* Run the transport and the fake for ms milliseconds (or until done() holds). */
static int pump(struct transport *t, struct fake *f, int ms, bool (*done)(struct transport *, struct fake *))
{
	uint64_t end = clock_mono_ns() + (uint64_t)ms * 1000000ull;
	while (clock_mono_ns() < end) {
		struct pollfd p[3];
		int tmo = transport_poll_prepare(t, &p[0], clock_mono_ns());
		p[1] = (struct pollfd){.fd = f->lfd, .events = POLLIN};
		p[2] = (struct pollfd){.fd = f->cfd, .events = POLLIN};
		if (tmo < 0 || tmo > 10)
			tmo = 10;
		int n = poll(p, 3, tmo);
		fake_step(f);
		int rc = transport_process(t, n > 0 ? p[0].revents : 0, clock_mono_ns());
		if (rc < 0)
			return rc;
		if (done && done(t, f))
			return 1;
	}
	return 0;
}

static struct record_builder rb;

static void submit_range(struct transport *t, uint64_t from, uint64_t to)
{
	for (uint64_t q = from; q <= to; q++) {
		uint8_t *fr;
		size_t len;
		assert_int_equal(record_heartbeat_frame(&rb, q, q * 10, 0, 0, &fr, &len), 0);
		assert_int_equal(transport_submit(t, q, fr, len), 0);
		free(fr);
	}
}

struct ctx {
	char dir[64];
	struct spool *spool;
	struct transport *t;
	struct fake f;
};

static void setup_ctx(struct ctx *c, const char *addr_override)
{
	snprintf(c->dir, sizeof(c->dir), "/tmp/test_transport_XXXXXX");
	assert_non_null(mkdtemp(c->dir));
	char err[256];
	assert_int_equal(spool_open(&c->spool, c->dir, "tr", 7, 1 << 20, 512, err, sizeof(err)), 0);
	fake_start(&c->f);
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "tr";
	h.boot_id = 7;
	uint8_t *hf;
	size_t hl;
	assert_int_equal(record_hello_frame(&h, 1 << 20, &hf, &hl), 0);
	assert_int_equal(transport_create(&c->t, addr_override ? addr_override : c->f.addr, c->spool, hf, hl, 1 << 20,
					  err, sizeof(err)),
			 0);
	free(hf);
	record_builder_init(&rb, 0, 1, NULL, 0, 1 << 20);
}

static void teardown_ctx(struct ctx *c)
{
	transport_destroy(c->t);
	spool_ack(c->spool, UINT64_MAX);
	spool_close(c->spool, true);
	fake_stop(&c->f);
	assert_int_equal(rmdir(c->dir), 0);
}

static bool reconnected(struct transport *t, struct fake *f);
static uint64_t want_acked;
static bool acked_enough(struct transport *t, struct fake *f)
{
	(void)f;
	return transport_get_stats(t)->acked >= want_acked;
}

static void test_transport_hello_ack_then_stream(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	submit_range(c.t, 1, 5); /* before any connection: spooled */
	assert_int_equal(spool_records(c.spool), 5);
	want_acked = 5;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	assert_true(transport_streaming(c.t));
	submit_range(c.t, 6, 40); /* streamed directly */
	want_acked = 40;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	for (int q = 1; q <= 40; q++)
		assert_int_equal(c.f.received[q], 1);
	assert_int_equal(c.f.hellos, 1);
	assert_int_equal(spool_records(c.spool), 0); /* acks deleted every segment */
	const struct transport_stats *st = transport_get_stats(c.t);
	assert_int_equal(st->records_sent, 40);
	assert_int_equal(st->records_replayed, 5);
	assert_int_equal(st->records_resent, 0); /* spooled before the connection: not sent twice */
	assert_true(st->bytes_sent > 40);
	assert_int_equal(st->connects, 1);
	teardown_ctx(&c);
}

static bool got_upto;
static uint64_t want_received;
static bool received_enough(struct transport *t, struct fake *f)
{
	(void)t;
	return f->received[want_received] > 0;
}

static void test_transport_reconnect_replays_unacked(void **state)
{
	(void)state;
	(void)got_upto;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.auto_ack = false;
	submit_range(c.t, 1, 10);
	want_received = 10;
	assert_int_equal(pump(c.t, &c.f, 3000, received_enough), 1);
	/* The collector committed 1..4 only, then the connection drops. */
	c.f.committed = 4;
	fake_ack(&c.f, 4);
	pump(c.t, &c.f, 50, NULL);
	fake_drop_conn(&c.f);
	submit_range(c.t, 11, 12); /* while disconnected */
	c.f.auto_ack = true;
	want_acked = 12;
	assert_int_equal(pump(c.t, &c.f, 5000, acked_enough), 1);
	assert_int_equal(c.f.hellos, 2);
	for (int q = 1; q <= 4; q++)
		assert_int_equal(c.f.received[q], 1); /* committed: not replayed */
	for (int q = 5; q <= 10; q++)
		assert_int_equal(c.f.received[q], 2); /* unacked: replayed once */
	for (int q = 11; q <= 12; q++)
		assert_int_equal(c.f.received[q], 1);
	assert_int_equal(spool_records(c.spool), 0);
	assert_int_equal(transport_get_stats(c.t)->connects, 2);
	/* 5..10 on the wire twice; 11 and 12 too when the socket took them whole before the agent
	 * saw the drop (the first write after the peer closed succeeds; a later one fails once the
	 * reset is in) */
	uint64_t resent = transport_get_stats(c.t)->records_resent;
	assert_true(resent >= 6 && resent <= 8);
	teardown_ctx(&c);
}

/* A collector that acks Hellos but cannot store (issue 31: REVOKE, disk full): each
 * attempt waits for its retry hint (the Hello's ack does not reset the backoff), and
 * the connection after a hint sends one record, not the backlog, until it is acked. */
static void test_transport_store_unavailable_hint_and_probe(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.fail_records = 2;
	c.f.retry_ms = 300;
	submit_range(c.t, 1, 30); /* spooled before the first connection */
	want_acked = 30;
	assert_int_equal(pump(c.t, &c.f, 8000, acked_enough), 1);
	const struct transport_stats *st = transport_get_stats(c.t);
	assert_int_equal(c.f.hellos, 3);
	assert_int_equal(st->retry_hints, 2);
	for (int i = 1; i < 3; i++) /* at least the hint between attempts */
		assert_true(c.f.hello_ns[i] - c.f.hello_ns[i - 1] >= 300000000ull);
	assert_int_equal(c.f.received[1], 3); /* the first record of each connection */
	assert_int_equal(c.f.received[30], 1);
	/* the first connection wrote the backlog (no hint yet: 30 frames), the second only its
	 * probe (1), the third the probe and, once it was acked, the rest (30) */
	assert_true(st->records_sent <= 61);
	assert_true(st->records_sent >= 31);
	assert_int_equal(spool_records(c.spool), 0);
	teardown_ctx(&c);
}

/* A collector whose store lost acked records (a server without synchronous commit that
 * crashed, a restored backup) answers the next Hello below what it acked (issue 31): the
 * agent logs it, keeps the earlier ack as its own figure, counts it, and re-sends what its
 * spool still holds above the lower seq. */
static void test_transport_ack_regression_logged_and_resent(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.auto_ack = false;
	submit_range(c.t, 1, 10);
	want_received = 10;
	assert_int_equal(pump(c.t, &c.f, 3000, received_enough), 1);
	fake_ack(&c.f, 10);
	want_acked = 10;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	fake_drop_conn(&c.f);
	c.f.committed = 6; /* the store kept 1..6 only */
	c.f.auto_ack = true;
	assert_int_equal(pump(c.t, &c.f, 5000, reconnected), 1);
	submit_range(c.t, 11, 12);
	want_acked = 12;
	assert_int_equal(pump(c.t, &c.f, 5000, acked_enough), 1);
	const struct transport_stats *st = transport_get_stats(c.t);
	assert_int_equal(st->ack_regressions, 1);
	assert_int_equal(st->acked, 12);
	for (int q = 11; q <= 12; q++)
		assert_int_equal(c.f.received[q], 1);
	/* 7..10 were acked before: re-sent only where the spool still held them */
	for (int q = 7; q <= 10; q++)
		assert_true(c.f.received[q] == 1 || c.f.received[q] == 2);
	teardown_ctx(&c);
}

static void test_transport_version_mismatch_is_fatal(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.hello_error = "schema version 1 not supported (collector speaks 2)";
	submit_range(c.t, 1, 3);
	assert_int_equal(pump(c.t, &c.f, 3000, NULL), -EPROTONOSUPPORT);
	assert_non_null(strstr(transport_error(c.t), "schema version 1 not supported"));
	assert_int_equal(spool_records(c.spool), 3); /* nothing lost */
	teardown_ctx(&c);
}

static bool reconnected(struct transport *t, struct fake *f)
{
	return f->hellos >= 2 && transport_streaming(t);
}

/* An ack above every seq the agent created (issue 25 item 6: a forged Ack of
 * 60308 after ~500 records made the agent delete unacked records and report
 * them acked): refused, the spool untouched, the connection closed and made
 * again; the honest acks that follow take every record. */
static void test_transport_refuses_ack_above_created(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.auto_ack = false;
	submit_range(c.t, 1, 40);
	want_received = 40;
	assert_int_equal(pump(c.t, &c.f, 3000, received_enough), 1);
	fake_ack(&c.f, 60308);
	assert_int_equal(pump(c.t, &c.f, 3000, reconnected), 1);
	const struct transport_stats *st = transport_get_stats(c.t);
	assert_int_equal(st->acks_refused, 1);
	assert_int_equal(st->acked, 0);
	assert_int_equal(spool_records(c.spool), 40); /* nothing dropped */
	want_received = 40; /* the replay on the new connection */
	for (int i = 0; i < 300 && c.f.received[40] < 2; i++)
		pump(c.t, &c.f, 10, NULL);
	assert_int_equal(c.f.received[40], 2);
	fake_ack(&c.f, 40); /* the honest ack */
	want_acked = 40;
	assert_int_equal(pump(c.t, &c.f, 5000, acked_enough), 1);
	for (int q = 1; q <= 40; q++)
		assert_true(c.f.received[q] >= 1);
	assert_int_equal(st->acked, 40);
	assert_int_equal(spool_records(c.spool), 0);
	assert_int_equal(spool_dropped(c.spool), 0);
	teardown_ctx(&c);
}

static void test_transport_unreachable_backs_off(void **state)
{
	(void)state;
	struct ctx c;
	/* A port nobody listens on: bind one, close it. */
	int s = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	assert_int_equal(bind(s, (struct sockaddr *)&a, sizeof(a)), 0);
	socklen_t l = sizeof(a);
	getsockname(s, (struct sockaddr *)&a, &l);
	close(s);
	char addr[64];
	snprintf(addr, sizeof(addr), "127.0.0.1:%u", ntohs(a.sin_port));
	setup_ctx(&c, addr);
	submit_range(c.t, 1, 3);
	uint64_t t0 = clock_mono_ns();
	assert_int_equal(pump(c.t, &c.f, 800, NULL), 0);
	uint64_t took = clock_mono_ns() - t0;
	assert_true(took < 1500000000ull); /* never blocks */
	const struct transport_stats *st = transport_get_stats(c.t);
	/* 100 ms, ~200 ms, ~400 ms: a few attempts in 0.8 s, not hundreds. */
	printf("# %llu failed attempts in 0.8 s\n", (unsigned long long)st->failures);
	assert_true(st->failures >= 2 && st->failures <= 6);
	assert_int_equal(spool_records(c.spool), 3);
	struct pollfd p;
	int tmo = transport_poll_prepare(c.t, &p, clock_mono_ns());
	assert_true(tmo >= 0 && tmo <= 5000);
	teardown_ctx(&c);
}

/* A board snapshot's pages (issue 36): the collector's PageRequest answered by the handler as a
 * live Pages frame (seq 0, beside the records), SnapshotDone (and an Error naming a snapshot)
 * handed to it; without a handler every page is ESRCH. */
struct fake_snap {
	uint8_t page[2 * 4096];
	uint64_t addr[64];
	uint32_t status[64];
	uint32_t done_id;
	int calls;
};

static int fake_pages(void *ctx, const Prof__PageRequest *req, Prof__Pages *out)
{
	struct fake_snap *fs = ctx;
	fs->calls++;
	prof__pages__init(out);
	out->snapshot_id = req->snapshot_id;
	size_t nd = 0;
	for (size_t i = 0; i < req->n_addr; i++) {
		fs->addr[i] = req->addr[i];
		fs->status[i] = req->addr[i] == 0 ? 14 /* EFAULT */ : 0;
		nd += fs->status[i] == 0;
	}
	out->addr = fs->addr;
	out->n_addr = out->n_status = req->n_addr;
	out->status = fs->status;
	out->data.data = fs->page;
	out->data.len = nd * 4096;
	return 0;
}

static void fake_done(void *ctx, uint32_t id)
{
	((struct fake_snap *)ctx)->done_id = id;
}

static bool pages_answered(struct transport *t, struct fake *f)
{
	(void)t;
	return f->pages_seen > 0;
}

static void send_page_request(struct fake *f, uint32_t id, uint64_t *addr, size_t n)
{
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	r.snapshot_id = id;
	r.addr = addr;
	r.n_addr = n;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_PAGE_REQUEST;
	env.page_request = &r;
	fake_send(f, &env);
}

static void test_transport_answers_page_requests(void **state)
{
	(void)state;
	struct ctx c;
	setup_ctx(&c, NULL);
	c.f.auto_ack = true;
	submit_range(c.t, 1, 3);
	want_acked = 3;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	/* no handler: ESRCH for each page, the connection goes on */
	uint64_t addr[3] = {0x10000, 0, 0x11000};
	send_page_request(&c.f, 9, addr, 3);
	assert_int_equal(pump(c.t, &c.f, 3000, pages_answered), 1);
	assert_int_equal(c.f.pages_seq, 0);
	assert_int_equal(c.f.pages_id, 9);
	assert_int_equal(c.f.pages_n, 3);
	for (int i = 0; i < 3; i++)
		assert_int_equal(c.f.pages_status[i], ESRCH);
	assert_int_equal(c.f.pages_bytes, 0);
	/* the handler's pages */
	struct fake_snap fs = {0};
	memset(fs.page, 0xa5, sizeof(fs.page));
	transport_set_snapshots(c.t, fake_pages, fake_done, &fs);
	c.f.pages_seen = 0;
	send_page_request(&c.f, 4, addr, 3);
	assert_int_equal(pump(c.t, &c.f, 3000, pages_answered), 1);
	assert_int_equal(fs.calls, 1);
	assert_int_equal(c.f.pages_id, 4);
	assert_int_equal(c.f.pages_status[0], 0);
	assert_int_equal(c.f.pages_status[1], 14);
	assert_int_equal(c.f.pages_status[2], 0);
	assert_int_equal(c.f.pages_bytes, 2 * 4096);
	assert_int_equal(c.f.pages_first, 0xa5);
	/* SnapshotDone reaches the handler; records still flow and are acked */
	Prof__SnapshotDone d = PROF__SNAPSHOT_DONE__INIT;
	d.snapshot_id = 4;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_SNAPSHOT_DONE;
	env.snapshot_done = &d;
	fake_send(&c.f, &env);
	submit_range(c.t, 4, 6);
	want_acked = 6;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	assert_int_equal(fs.done_id, 4);
	/* a snapshot the collector refuses (Error with its id): handed to done, the connection stays */
	Prof__Error er = PROF__ERROR__INIT;
	er.code = EBUSY;
	er.message = "snapshot 5 refused: 4 snapshots of this connection are being replayed";
	er.snapshot_id = 5;
	env.body_case = PROF__ENVELOPE__BODY_ERROR;
	env.error = &er;
	fake_send(&c.f, &env);
	submit_range(c.t, 7, 8);
	want_acked = 8;
	assert_int_equal(pump(c.t, &c.f, 3000, acked_enough), 1);
	assert_int_equal(fs.done_id, 5);
	assert_int_equal(c.f.hellos, 1); /* one connection throughout */
	teardown_ctx(&c);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_transport_hello_ack_then_stream),
		cmocka_unit_test(test_transport_reconnect_replays_unacked),
		cmocka_unit_test(test_transport_store_unavailable_hint_and_probe),
		cmocka_unit_test(test_transport_ack_regression_logged_and_resent),
		cmocka_unit_test(test_transport_version_mismatch_is_fatal),
		cmocka_unit_test(test_transport_unreachable_backs_off),
		cmocka_unit_test(test_transport_refuses_ack_above_created),
		cmocka_unit_test(test_transport_answers_page_requests),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
