/* Unit tests of collector/server/server.c, in process: the server listens on
 * 127.0.0.1:0 and the test drives its loop with server_step() while talking
 * to it through real sockets. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "log.h"
#include "server/server.h"
#include "srvclient.h"
#include "store/store.h"

#define MAX_FRAME (64u * 1024u)

static int setup(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_frame = MAX_FRAME});
}

static int setup_one_conn(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_conns = 1, .max_frame = MAX_FRAME});
}

/* ---------------------------------------------------------------- envelopes */

static void add_hello(uint8_t **buf, size_t *len, const char *agent, uint32_t schema)
{
	add_hello_frame(buf, len,
			&(struct hello_spec){.agent = agent, .boot = 77, .schema = schema, .board = "host"});
}

struct counts {
	uint64_t samples, records;
	int sessions;
};

static int count_session(const struct store_session_row *r, void *arg)
{
	struct counts *n = arg;
	n->samples += r->samples;
	n->records += r->records;
	n->sessions++;
	return 0;
}

static struct counts store_counts(struct store *s)
{
	struct counts n = {0};
	assert_int_equal(store_list_sessions(s, count_session, &n), 0);
	return n;
}

/* ---------------------------------------------------------------- tests */

static void test_server_hello_records_acked(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "agent-1", PROF_SCHEMA_VERSION);
	send_and_free(&c, &buf, &len);
	assert_int_equal(expect_ack(&c, f->srv), 0);

	for (uint64_t seq = 1; seq <= 3; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&c, &buf, &len);
	expect_ack_reaching(&c, f->srv, 3);
	struct counts n = store_counts(f->store);
	assert_int_equal(n.sessions, 1);
	assert_int_equal(n.records, 3);
	assert_int_equal(n.samples, 3);

	/* reconnect and replay 2..4: 2 and 3 are duplicates, all acked */
	client_close(&c);
	client_open(&c, f->srv);
	add_hello(&buf, &len, "agent-1", PROF_SCHEMA_VERSION);
	send_and_free(&c, &buf, &len);
	assert_int_equal(expect_ack(&c, f->srv), 3);
	for (uint64_t seq = 2; seq <= 4; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&c, &buf, &len);
	expect_ack_reaching(&c, f->srv, 4);
	n = store_counts(f->store);
	assert_int_equal(n.sessions, 1);
	assert_int_equal(n.records, 4);
	assert_int_equal(n.samples, 4);
	client_close(&c);

	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.duplicates, 2);
}

static void test_server_garbage_isolated(void **state)
{
	struct srv_fixture *f = *state;
	struct client good, bad;
	client_open(&good, f->srv);
	client_open(&bad, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "good", PROF_SCHEMA_VERSION);
	send_and_free(&good, &buf, &len);
	assert_int_equal(expect_ack(&good, f->srv), 0);

	const uint8_t garbage[] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00};
	client_send(&bad, garbage, sizeof(garbage));
	expect_error_and_close(&bad, f->srv, "malformed length prefix");
	client_close(&bad);

	add_counters(&buf, &len, 1);
	send_and_free(&good, &buf, &len);
	assert_int_equal(expect_ack(&good, f->srv), 1);
	client_close(&good);
	assert_int_equal(store_counts(f->store).samples, 1);
}

static void test_server_commits_frames_before_bad_one(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "partly-bad", PROF_SCHEMA_VERSION);
	add_counters(&buf, &len, 1);
	add_counters(&buf, &len, 2);
	const uint8_t payload_not_envelope[] = {0x03, 0xff, 0xff, 0xff};
	buf = realloc(buf, len + sizeof(payload_not_envelope));
	assert_non_null(buf);
	memcpy(buf + len, payload_not_envelope, sizeof(payload_not_envelope));
	len += sizeof(payload_not_envelope);
	send_and_free(&c, &buf, &len);
	/* the ack of 1..2 comes before the Error */
	assert_int_equal(expect_ack(&c, f->srv), 2);
	expect_error_and_close(&c, f->srv, "invalid envelope");
	client_close(&c);
	assert_int_equal(store_counts(f->store).samples, 2);
}

static void test_server_schema_mismatch(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "future", 2);
	send_and_free(&c, &buf, &len);
	expect_error_and_close(&c, f->srv, "schema version 2 not supported (collector speaks 1)");
	client_close(&c);
	assert_int_equal(store_counts(f->store).sessions, 0);
}

static void test_server_record_before_hello(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_counters(&buf, &len, 1);
	send_and_free(&c, &buf, &len);
	expect_error_and_close(&c, f->srv, "before Hello");
	client_close(&c);
}

static void test_server_oversized_frame(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t hdr[FRAME_VARINT_MAX];
	size_t h = frame_put_varint(hdr, MAX_FRAME + 1);
	client_send(&c, hdr, h);
	expect_error_and_close(&c, f->srv, "exceeds the maximum");
	client_close(&c);
}

static void test_server_split_frames(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "dribble", PROF_SCHEMA_VERSION);
	add_counters(&buf, &len, 1);
	for (size_t i = 0; i < len; i++) { /* one byte at a time, the loop turning in between */
		client_send(&c, buf + i, 1);
		assert_true(server_step(f->srv, 0) >= 0);
	}
	free(buf);
	expect_ack_reaching(&c, f->srv, 1);
	client_close(&c);
}

static void test_server_truncated_frame_at_eof(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "cut", PROF_SCHEMA_VERSION);
	add_counters(&buf, &len, 1);
	client_send(&c, buf, len - 2);
	free(buf);
	assert_int_equal(expect_ack(&c, f->srv), 0);
	shutdown(c.fd, SHUT_WR);
	assert_null(client_next(&c, f->srv)); /* closed, nothing of the cut record stored */
	client_close(&c);
	assert_int_equal(store_counts(f->store).samples, 0);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.conns, 0);
	assert_int_equal(st.closed_bad, 1);
}

static void test_server_max_conns(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, b;
	client_open(&a, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "first", PROF_SCHEMA_VERSION);
	send_and_free(&a, &buf, &len);
	assert_int_equal(expect_ack(&a, f->srv), 0);
	add_counters(&buf, &len, 1); /* a record: an agent, never evicted for a newcomer */
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 1);
	client_open(&b, f->srv);
	expect_error_and_close(&b, f->srv, "connection limit");
	client_close(&b);
	client_close(&a);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.refused, 1);
}

static void test_server_stop_drains_and_acks(void **state)
{
	struct srv_fixture *f = *state;
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, "stopper", PROF_SCHEMA_VERSION);
	send_and_free(&c, &buf, &len);
	assert_int_equal(expect_ack(&c, f->srv), 0);
	for (uint64_t seq = 1; seq <= 5; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&c, &buf, &len);
	/* the stop comes before the loop has seen the records: they are still
	 * read, committed and acked before the connection closes */
	server_request_stop(f->srv);
	int rc = 0;
	for (int i = 0; i < 100 && rc == 0; i++)
		rc = server_step(f->srv, 10);
	assert_int_equal(rc, 1);
	assert_int_equal(store_counts(f->store).samples, 5);
	assert_false(store_in_tx(f->store));
	expect_ack_reaching(&c, f->srv, 5);
	assert_null(client_next(&c, f->srv));
	client_close(&c);
	assert_int_equal(server_run(f->srv), 0); /* already stopped */
}

int main(void)
{
	log_init("test_server", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_server_hello_records_acked, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_garbage_isolated, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_commits_frames_before_bad_one, setup,
					    srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_schema_mismatch, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_record_before_hello, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_oversized_frame, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_split_frames, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_truncated_frame_at_eof, setup, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_max_conns, setup_one_conn, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_stop_drains_and_acks, setup, srv_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
