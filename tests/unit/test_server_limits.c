/* Unit tests of the collector's ingest limits (collector/server/server_limits.c,
 * issue #18), in process with real sockets on 127.0.0.1: one live connection
 * per session, the seq window, the pre-Hello connection budgets. */
#include <errno.h>
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

static int setup(void **state)
{
	return srv_fixture_open(state, (struct server_options){0});
}

static int setup_16(void **state)
{
	/* 4 without a Hello, 2 of them per address */
	return srv_fixture_open(state, (struct server_options){.max_conns = 16});
}

static int setup_2(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_conns = 2});
}

static void add_hello(uint8_t **buf, size_t *len, const char *agent, uint64_t boot)
{
	add_hello_frame(buf, len, &(struct hello_spec){.agent = agent, .boot = boot});
}

static void add_heartbeat(uint8_t **buf, size_t *len, uint64_t seq)
{
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	frames_add(buf, len, &env);
}

/* Connect, send the Hello, return the Hello's ack. */
static uint64_t hello(struct client *c, struct srv_fixture *f, const char *agent, uint64_t boot)
{
	client_open(c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello(&buf, &len, agent, boot);
	send_and_free(c, &buf, &len);
	return expect_ack(c, f->srv);
}

static void test_server_second_hello_for_live_session_refused(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, b, c;
	assert_int_equal(hello(&a, f, "owner", 42), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	for (uint64_t seq = 1; seq <= 3; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 3);
	/* same agent id and boot id while the owner is connected: refused, nothing written */
	client_open(&b, f->srv);
	add_hello(&buf, &len, "owner", 42);
	add_heartbeat(&buf, &len, 1000000);
	send_and_free(&b, &buf, &len);
	expect_error_and_close(&b, f->srv, "already has a live connection");
	client_close(&b);
	/* another boot of the same agent id is another session: fine */
	assert_int_equal(hello(&c, f, "owner", 43), 0);
	client_close(&c);
	/* the owner goes on */
	add_counters(&buf, &len, 4);
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 4);
	client_close(&a);
	/* once the owner is gone, a new connection takes the session over, with what is committed */
	for (int i = 0; i < 20; i++)
		server_step(f->srv, 5);
	assert_int_equal(hello(&b, f, "owner", 42), 4);
	client_close(&b);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.session_busy, 1);
}

static void test_server_seq_beyond_window_refused(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, b;
	assert_int_equal(hello(&a, f, "windowed", 7), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	for (uint64_t seq = 1; seq <= 3; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 3);
	/* just inside the window is a legitimate gap (the agent's spool dropped records) */
	add_heartbeat(&buf, &len, 3 + SERVER_DEFAULT_SEQ_WINDOW);
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 3 + SERVER_DEFAULT_SEQ_WINDOW);
	/* one beyond: an error that closes the connection; the ack never reaches it */
	add_heartbeat(&buf, &len, 3 + 2 * (uint64_t)SERVER_DEFAULT_SEQ_WINDOW + 1);
	send_and_free(&a, &buf, &len);
	expect_error_and_close(&a, f->srv, "above the session's highest stored seq");
	client_close(&a);
	for (int i = 0; i < 20; i++)
		server_step(f->srv, 5);
	/* what the next connection is told is what is stored */
	assert_int_equal(hello(&b, f, "windowed", 7), 3 + SERVER_DEFAULT_SEQ_WINDOW);
	add_heartbeat(&buf, &len, 1000000000);
	send_and_free(&b, &buf, &len);
	expect_error_and_close(&b, f->srv, "refused, nothing stored");
	client_close(&b);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.seq_refused, 2);
	assert_int_equal(st.records, 4);
}

/* Silent connections from one address: over its share a burst of new ones is
 * refused; once they are older than a moment, the oldest is evicted for a new
 * connection, so an agent connecting after the flood gets in. */
static void test_server_prehello_flood_evicted(void **state)
{
	struct srv_fixture *f = *state;
	enum { NSILENT = 40 };
	struct client silent[NSILENT];
	for (int i = 0; i < NSILENT; i++) {
		client_open(&silent[i], f->srv);
		server_step(f->srv, 0);
	}
	for (int i = 0; i < 10; i++)
		server_step(f->srv, 1);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.conns, 2); /* the per-address share (16 / 8) */
	assert_int_equal(st.refused, NSILENT - 2);
	assert_int_equal(st.evicted, 0);
	expect_error_and_close(&silent[2], f->srv, "too many new connections from this address");
	/* a real agent connects after the flood and is served */
	usleep(300 * 1000);
	struct client a;
	assert_int_equal(hello(&a, f, "flooded", 1), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_counters(&buf, &len, 1);
	send_and_free(&a, &buf, &len);
	expect_ack_reaching(&a, f->srv, 1);
	/* the oldest silent one made room, and was told why */
	expect_error_and_close(&silent[0], f->srv, "evicted after");
	server_get_stats(f->srv, &st);
	assert_int_equal(st.evicted, 1);
	client_close(&a);
	for (int i = 0; i < NSILENT; i++)
		client_close(&silent[i]);
}

/* Connect, send the Hello and one record: an agent (proven). */
static void agent(struct client *c, struct srv_fixture *f, const char *id, uint64_t boot)
{
	assert_int_equal(hello(c, f, id, boot), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_counters(&buf, &len, 1);
	send_and_free(c, &buf, &len);
	expect_ack_reaching(c, f->srv, 1);
}

/* Every slot taken: a connection without a record gives its slot up, an agent that sent one does not. */
static void test_server_full_evicts_unproven_not_agents(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, silent, b, c;
	agent(&a, f, "first", 1);
	client_open(&silent, f->srv);
	for (int i = 0; i < 5; i++)
		server_step(f->srv, 1);
	usleep(300 * 1000);
	agent(&b, f, "second", 1); /* evicts the silent one */
	expect_error_and_close(&silent, f->srv, "evicted after");
	client_open(&c, f->srv); /* both slots hold agents: refused */
	expect_error_and_close(&c, f->srv, "connection limit");
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.refused, 1);
	client_close(&a);
	client_close(&b);
	client_close(&c);
	client_close(&silent);
}

int main(void)
{
	log_init("test_server_limits", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_server_second_hello_for_live_session_refused, setup,
					    srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_seq_beyond_window_refused, setup,
					    srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_prehello_flood_evicted, setup_16,
					    srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_full_evicts_unproven_not_agents, setup_2,
					    srv_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
