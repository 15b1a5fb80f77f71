/* Unit tests of collector/server/ingest.c: the per-connection protocol state
 * machine against an in-memory store. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"
#include "server/ingest.h"
#include "log.h"
#include "store/store.h"

#define MAX_FRAME (1024u * 1024u)

static Prof__Envelope *make_hello(Prof__Envelope *env, Prof__Hello *h, const char *agent, uint32_t schema)
{
	prof__envelope__init(env);
	prof__hello__init(h);
	h->schema_version = schema;
	h->agent_id = (char *)agent;
	h->boot_id = 1234;
	h->board = "host";
	env->body_case = PROF__ENVELOPE__BODY_HELLO;
	env->hello = h;
	return env;
}

struct counters_buf {
	Prof__Envelope env;
	Prof__Counters c;
	uint32_t id;
	uint64_t t, v;
};

static Prof__Envelope *make_counters(struct counters_buf *b, uint64_t seq)
{
	memset(b, 0, sizeof(*b));
	prof__envelope__init(&b->env);
	prof__counters__init(&b->c);
	b->id = 1;
	b->t = 10;
	b->v = 5;
	b->c.n_event_ids = 1;
	b->c.event_ids = &b->id;
	b->c.n_t_ns = 1;
	b->c.t_ns = &b->t;
	b->c.n_values = 1;
	b->c.values = &b->v;
	b->env.seq = seq;
	b->env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	b->env.counters = &b->c;
	return &b->env;
}

/* Feed env through the real wire path: frame_encode, then ingest_frame. */
static int feed(struct ingest_conn *c, const Prof__Envelope *env)
{
	uint8_t *buf;
	size_t len;
	assert_int_equal(frame_encode(env, MAX_FRAME, &buf, &len), 0);
	uint32_t plen;
	int h = frame_get_varint(buf, len, &plen);
	assert_true(h > 0);
	int rc = ingest_frame(c, buf + h, plen);
	free(buf);
	return rc;
}

static int setup(void **state)
{
	struct store *s;
	if (store_open(":memory:", 0, &s) < 0)
		return -1;
	*state = s;
	return 0;
}

static int teardown(void **state)
{
	store_close(*state);
	return 0;
}

static void hello_ok(struct ingest_conn *c, const char *agent)
{
	Prof__Envelope env;
	Prof__Hello h;
	assert_int_equal(feed(c, make_hello(&env, &h, agent, PROF_SCHEMA_VERSION)), 0);
	assert_true(c->hello_done);
}

static void test_ingest_record_before_hello(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "10.0.0.1:4000");
	struct counters_buf cb;
	assert_int_equal(feed(&c, make_counters(&cb, 1)), -EPROTO);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	assert_true(c.send_error);
	assert_int_equal(c.err_code, EPROTO);
	assert_non_null(strstr(c.err, "before Hello"));
	/* nothing more is accepted on a failed connection */
	Prof__Envelope env;
	Prof__Hello h;
	assert_int_equal(feed(&c, make_hello(&env, &h, "late", PROF_SCHEMA_VERSION)), -EPIPE);
	assert_false(c.hello_done);
	ingest_free(&c);
}

static void test_ingest_heartbeat_before_hello(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(feed(&c, &env), -EPROTO);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	ingest_free(&c);
}

static void test_ingest_schema_mismatch_error_text(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	Prof__Envelope env;
	Prof__Hello h;
	assert_int_equal(feed(&c, make_hello(&env, &h, "new-agent", 2)), -EPROTONOSUPPORT);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	assert_true(c.send_error);
	assert_int_equal(c.err_code, EPROTONOSUPPORT);
	assert_string_equal(
	    c.err, "schema version 2 not supported (collector speaks 1): upgrade the collector or the agent");
	assert_false(c.hello_done);
	uint64_t seq;
	assert_int_equal(ingest_take_ack(&c, &seq), 0);
	ingest_free(&c);
}

static void test_ingest_second_hello(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	hello_ok(&c, "a");
	Prof__Envelope env;
	Prof__Hello h;
	assert_int_equal(feed(&c, make_hello(&env, &h, "a", PROF_SCHEMA_VERSION)), -EPROTO);
	assert_non_null(strstr(c.err, "second Hello"));
	char who[128];
	assert_string_equal(ingest_who(&c, who, sizeof(who)), "agent a, session row at its first record");
	ingest_free(&c);
}

static void test_ingest_ack_from_agent(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	hello_ok(&c, "a");
	Prof__Ack ack = PROF__ACK__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	assert_int_equal(feed(&c, &env), -EPROTO);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	assert_true(c.send_error);
	ingest_free(&c);
}

/* Board snapshots (issue 36): the collector's own requests from an agent are refused as an Ack
 * is; an agent's Pages for no snapshot being replayed are dropped, the connection goes on
 * (ingest_snap.c; its replays: test_server_snapshots). */
static void test_ingest_snapshot_messages_from_agent(void **state)
{
	uint64_t addr[1] = {0x10000};
	uint32_t st[1] = {ESRCH};
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	r.snapshot_id = 1;
	r.addr = addr;
	r.n_addr = 1;
	Prof__Pages p = PROF__PAGES__INIT;
	p.snapshot_id = 1;
	p.addr = addr;
	p.n_addr = 1;
	p.status = st;
	p.n_status = 1;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	for (int k = 0; k < 2; k++) {
		struct ingest_conn c;
		ingest_init(&c, *state, "p");
		hello_ok(&c, "a");
		env.body_case = k ? PROF__ENVELOPE__BODY_PAGES : PROF__ENVELOPE__BODY_PAGE_REQUEST;
		env.pages = &p;
		if (!k)
			env.page_request = &r;
		if (k) {
			assert_int_equal(feed(&c, &env), 0);
			assert_int_equal(c.failure, INGEST_OK);
		} else {
			assert_int_equal(feed(&c, &env), -EPROTO);
			assert_int_equal(c.failure, INGEST_PROTOCOL);
			assert_true(c.send_error);
			assert_non_null(strstr(c.err, "only the collector asks"));
		}
		ingest_free(&c);
	}
}

static void test_ingest_error_from_agent(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	Prof__Error err = PROF__ERROR__INIT;
	err.code = 5;
	err.message = "disk\nfull";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ERROR;
	env.error = &err;
	assert_int_equal(feed(&c, &env), -EPROTO);
	assert_false(c.send_error); /* no Error answers an Error */
	assert_string_equal(c.err, "agent sent Error 5: disk?full");
	ingest_free(&c);
}

static void test_ingest_invalid_payload(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	const uint8_t junk[] = {0xff, 0xff, 0xff, 0x01, 0x02};
	assert_int_equal(ingest_frame(&c, junk, sizeof(junk)), -EINVAL);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	assert_non_null(strstr(c.err, "invalid envelope"));
	ingest_free(&c);
}

static void test_ingest_invalid_envelope_rejected(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	hello_ok(&c, "a");
	struct counters_buf cb;
	Prof__Envelope *env = make_counters(&cb, 1);
	cb.c.n_values = 0; /* rows x columns mismatch: validate.c refuses it */
	assert_int_equal(feed(&c, env), -EINVAL);
	assert_non_null(strstr(c.err, "counters"));
	ingest_free(&c);
}

static void test_ingest_hello_acks_highest_committed(void **state)
{
	struct store *s = *state;
	struct ingest_conn c;
	ingest_init(&c, s, "p");
	hello_ok(&c, "a");
	uint64_t seq = 99;
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 0); /* new session */
	assert_int_equal(ingest_take_ack(&c, &seq), 0);
	struct counters_buf cb;
	for (uint64_t i = 1; i <= 3; i++)
		assert_int_equal(feed(&c, make_counters(&cb, i)), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 3);
	assert_int_equal(c.stored, 3);
	ingest_free(&c);

	/* reconnect: the Hello is answered with 3, a replay of 2..3 is acked
	 * without storing anything twice, and 4 continues */
	ingest_init(&c, s, "p");
	hello_ok(&c, "a");
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 3);
	assert_int_equal(feed(&c, make_counters(&cb, 2)), 0);
	assert_int_equal(feed(&c, make_counters(&cb, 3)), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 3);
	assert_int_equal(c.duplicates, 2);
	assert_int_equal(c.stored, 0);
	assert_int_equal(feed(&c, make_counters(&cb, 4)), 0);
	assert_int_equal(store_commit(s), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 4);
	ingest_free(&c);
}

static void test_ingest_heartbeat_seq0_not_acked(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	hello_ok(&c, "a");
	uint64_t seq;
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	assert_int_equal(feed(&c, &env), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 0);
	env.seq = 1;
	assert_int_equal(feed(&c, &env), 0);
	assert_int_equal(ingest_take_ack(&c, &seq), 1);
	assert_int_equal(seq, 1);
	ingest_free(&c);
}

static void test_ingest_timestamp_overflow_is_protocol_error(void **state)
{
	struct ingest_conn c;
	ingest_init(&c, *state, "p");
	hello_ok(&c, "a");
	struct counters_buf cb;
	Prof__Envelope *env = make_counters(&cb, 1);
	cb.t = UINT64_MAX;
	assert_int_equal(feed(&c, env), -EINVAL);
	assert_int_equal(c.failure, INGEST_PROTOCOL);
	ingest_free(&c);
}

static Prof__Envelope *decode_frame(const uint8_t *buf, size_t len)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAX_FRAME), 0);
	assert_int_equal(frame_decoder_feed(&d, buf, len), 0);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 1);
	char err[160];
	Prof__Envelope *env = envelope_decode(p, plen, err, sizeof(err));
	assert_non_null(env);
	assert_int_equal(frame_decoder_pending(&d), 0);
	frame_decoder_free(&d);
	return env;
}

static void test_ingest_pack_ack_and_error(void **state)
{
	(void)state;
	uint8_t buf[64];
	int n = ingest_pack_ack(UINT64_MAX, buf, sizeof(buf));
	assert_true(n > 0);
	Prof__Envelope *env = decode_frame(buf, (size_t)n);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ACK);
	assert_true(env->ack->seq == UINT64_MAX);
	prof__envelope__free_unpacked(env, NULL);

	n = ingest_pack_error(EPROTO, "bad thing", 0, buf, sizeof(buf));
	assert_true(n > 0);
	env = decode_frame(buf, (size_t)n);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ERROR);
	assert_int_equal(env->error->code, EPROTO);
	assert_string_equal(env->error->message, "bad thing");
	prof__envelope__free_unpacked(env, NULL);

	assert_int_equal(ingest_pack_ack(1, buf, 2), -ENOBUFS);
}

int main(void)
{
	log_init("test_ingest", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_ingest_record_before_hello, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_heartbeat_before_hello, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_schema_mismatch_error_text, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_second_hello, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_ack_from_agent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_error_from_agent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_snapshot_messages_from_agent, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_invalid_payload, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_invalid_envelope_rejected, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_hello_acks_highest_committed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_heartbeat_seq0_not_acked, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_ingest_timestamp_overflow_is_protocol_error, setup,
					    teardown),
	    cmocka_unit_test(test_ingest_pack_ack_and_error),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
