/* Unit tests of the collector's admission (collector/server/server_admit.c,
 * server_memory.c, issue #25), in process with real sockets on 127.0.0.x:
 * a Hello alone writes no session row; connections with a Hello and no record
 * are evictable squatters; young flood connections from a few addresses give
 * way to a newcomer from another address; one frame memory budget for all. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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

/* 16 connections: 4 unproven, 2 of them per address */
static int setup_16(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_conns = 16});
}

/* frames of at most 64 KiB, 256 KiB of frame memory for all connections; no idle
 * timeout (a connection resumed from its wait and read in the same loop step as the
 * idle sweep hit the idle-timeout underflow of issue 25 item 8, fixed apart) */
static int setup_memory(void **state)
{
	return srv_fixture_open(state, (struct server_options){.max_frame = 65536,
							       .max_frame_memory = 256 * 1024,
							       .idle_timeout_ms = SERVER_NO_IDLE_TIMEOUT});
}

static int count_cb(const struct store_session_row *r, void *arg)
{
	(void)r;
	(*(int *)arg)++;
	return 0;
}

static int sessions(struct store *st)
{
	int n = 0;
	assert_int_equal(store_list_sessions(st, count_cb, &n), 0);
	return n;
}

static void steps(struct srv_fixture *f, int n)
{
	for (int i = 0; i < n; i++)
		assert_true(server_step(f->srv, 1) >= 0);
}

/* Connect from src, send a Hello; the Hello's ack. */
static uint64_t hello_from(struct client *c, struct srv_fixture *f, const char *src, const char *agent, uint64_t boot)
{
	client_open_from(c, f->srv, src);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = agent, .boot = boot});
	send_and_free(c, &buf, &len);
	return expect_ack(c, f->srv);
}

static void send_counters(struct client *c, struct srv_fixture *f, uint64_t from, uint64_t to)
{
	uint8_t *buf = NULL;
	size_t len = 0;
	for (uint64_t seq = from; seq <= to; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(c, &buf, &len);
	expect_ack_reaching(c, f->srv, to);
}

static void add_heartbeat(uint8_t **buf, size_t *len)
{
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	frames_add(buf, len, &env);
}

/* A Hello (and heartbeats) write nothing; the first record creates the row; a
 * later Hello of the same session resumes it with what is stored. */
static void test_server_hello_alone_writes_no_session(void **state)
{
	struct srv_fixture *f = *state;
	struct client a;
	assert_int_equal(hello_from(&a, f, NULL, "quiet", 5), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_heartbeat(&buf, &len);
	send_and_free(&a, &buf, &len);
	steps(f, 5);
	assert_int_equal(sessions(f->store), 0);
	send_counters(&a, f, 1, 2);
	assert_int_equal(sessions(f->store), 1);
	client_close(&a);
	steps(f, 5);
	assert_int_equal(hello_from(&a, f, NULL, "quiet", 5), 2);
	client_close(&a);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.records, 2);
}

/* Hellos with distinct agent ids and no record fill the unproven share; they
 * leave no rows, and an agent connecting later gets in and is acked. */
static void test_server_hello_squatters_evicted(void **state)
{
	struct srv_fixture *f = *state;
	enum { N = 4 };
	struct client sq[N];
	static const char *const src[N] = {"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"};
	char id[32];
	for (int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "squatter-%d", i);
		assert_int_equal(hello_from(&sq[i], f, src[i], id, 1), 0);
	}
	/* the share is full: a fifth squatter of the same addresses, still young, is refused */
	struct client late;
	client_open_from(&late, f->srv, "127.0.0.3");
	expect_error_and_close(&late, f->srv, "too many new connections");
	client_close(&late);
	/* the agent, from its own address, gets in at once and is acked */
	struct client a;
	assert_int_equal(hello_from(&a, f, "127.0.0.1", "real", 7), 0);
	send_counters(&a, f, 1, 21);
	int evicted = 0;
	for (int i = 0; i < N; i++) {
		Prof__Envelope *env;
		shutdown(sq[i].fd, SHUT_WR);
		while ((env = client_next(&sq[i], f->srv)) && env->body_case != PROF__ENVELOPE__BODY_ERROR)
			prof__envelope__free_unpacked(env, NULL);
		if (env && strstr(env->error->message, "without a record since its Hello"))
			evicted++;
		if (env)
			prof__envelope__free_unpacked(env, NULL);
		client_close(&sq[i]);
	}
	assert_int_equal(evicted, 1);
	assert_int_equal(sessions(f->store), 1); /* the agent's only */
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.evicted, 1);
	assert_int_equal(st.evicted_fair, 1);
	assert_int_equal(st.refused, 1);
	client_close(&a);
}

/* A squatter that sent the agent's own session ids and nothing else holds the
 * session only while it is young; an owner with records keeps it. */
static void test_server_session_squatter_taken_over(void **state)
{
	struct srv_fixture *f = *state;
	struct client sq, a, b;
	assert_int_equal(hello_from(&sq, f, "127.0.0.2", "victim", 9), 0);
	client_open(&a, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "victim", .boot = 9});
	send_and_free(&a, &buf, &len);
	expect_error_and_close(&a, f->srv, "already has a live connection"); /* young: refused */
	client_close(&a);
	usleep(300 * 1000);
	assert_int_equal(hello_from(&a, f, NULL, "victim", 9), 0);
	expect_error_and_close(&sq, f->srv, "another connection sent a Hello for this session");
	client_close(&sq);
	send_counters(&a, f, 1, 3);
	usleep(300 * 1000);
	client_open(&b, f->srv); /* the owner is an agent now: the session stays its own */
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "victim", .boot = 9});
	send_and_free(&b, &buf, &len);
	expect_error_and_close(&b, f->srv, "already has a live connection");
	client_close(&b);
	client_close(&a);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.squatters_evicted, 1);
	assert_int_equal(st.session_busy, 2);
}

static uint64_t hello_host(struct client *c, struct srv_fixture *f, const char *agent, uint64_t boot,
			   const char *host)
{
	client_open(c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = agent, .boot = boot, .hostname = host});
	send_and_free(c, &buf, &len);
	return expect_ack(c, f->srv);
}

/* Two boards deployed with one --agent-id: while the first streams (a proven
 * connection), the second board's Hello is refused, naming the host holding the
 * id and what to do; another agent process of the first host (another boot id) is
 * admitted as before; once the first closes, the second board gets in. */
static void test_server_agent_id_in_use_by_other_host(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, b, a2;
	assert_int_equal(hello_host(&a, f, "board", 1, "arndale-1"), 0);
	send_counters(&a, f, 1, 2);
	client_open(&b, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "board", .boot = 2, .hostname = "arndale-2"});
	send_and_free(&b, &buf, &len);
	expect_error_and_close(&b, f->srv, "agent id in use: a live agent on host 'arndale-1'");
	client_close(&b);
	assert_int_equal(hello_host(&a2, f, "board", 3, "arndale-1"), 0); /* same host: admitted */
	client_close(&a2);
	client_close(&a);
	steps(f, 5);
	assert_int_equal(hello_host(&b, f, "board", 2, "arndale-2"), 0);
	send_counters(&b, f, 1, 1);
	client_close(&b);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.id_in_use, 1);
	assert_int_equal(sessions(f->store), 2);
}

/* An unproven connection (Hello, no record yet) holds no agent id against other hosts. */
static void test_server_agent_id_unproven_other_host_admitted(void **state)
{
	struct srv_fixture *f = *state;
	struct client a, b;
	assert_int_equal(hello_host(&a, f, "board", 1, "arndale-1"), 0);
	assert_int_equal(hello_host(&b, f, "board", 2, "arndale-2"), 0);
	client_close(&b);
	client_close(&a);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.id_in_use, 0);
}

/* Young silent connections from two addresses fill the unproven share: a
 * newcomer from a third address evicts one of the address holding the most, a
 * newcomer from an address holding as many as the others is refused. */
static void test_server_flood_fair_eviction(void **state)
{
	struct srv_fixture *f = *state;
	struct client fl[4], n1, n2, n3;
	static const char *const src[4] = {"127.0.0.2", "127.0.0.2", "127.0.0.3", "127.0.0.3"};
	for (int i = 0; i < 4; i++) {
		client_open_from(&fl[i], f->srv, src[i]);
		steps(f, 2);
	}
	client_open_from(&n1, f->srv, "127.0.0.4"); /* evicts fl[0], the oldest of a busiest address */
	steps(f, 2);
	client_open_from(&n2, f->srv, "127.0.0.5"); /* evicts fl[2]: 127.0.0.3 holds the most now */
	steps(f, 2);
	client_open_from(&n3, f->srv, "127.0.0.2"); /* every address holds one, all young: refused */
	expect_error_and_close(&n3, f->srv, "too many new connections");
	expect_error_and_close(&fl[0], f->srv, "without a Hello");
	expect_error_and_close(&fl[2], f->srv, "without a Hello");
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.evicted, 2);
	assert_int_equal(st.evicted_fair, 2);
	assert_int_equal(st.refused, 1);
	assert_int_equal(st.conns, 4);
	/* the newcomers are served */
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_frame(&buf, &len, &(struct hello_spec){.agent = "n1", .boot = 1});
	send_and_free(&n1, &buf, &len);
	assert_int_equal(expect_ack(&n1, f->srv), 0);
	client_close(&n1);
	client_close(&n2);
	client_close(&n3);
	for (int i = 0; i < 4; i++)
		client_close(&fl[i]);
}

/* A Counters record (seq) of about want bytes on the wire, as one frame. */
static uint8_t *big_record(uint64_t seq, size_t want, size_t *len)
{
	size_t n = want / 2; /* rows of one column: two one-byte varints a row */
	uint64_t *t = calloc(n, sizeof(*t)), *v = calloc(n, sizeof(*v));
	assert_true(t && v);
	for (size_t i = 0; i < n; i++) {
		t[i] = 1;
		v[i] = 1;
	}
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp = &ev;
	ev.id = 1;
	ev.name = "cycles";
	uint32_t id = 1;
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = 1;
	c.new_events = &evp;
	c.n_event_ids = 1;
	c.event_ids = &id;
	c.n_t_ns = c.n_values = n;
	c.t_ns = t;
	c.values = v;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	uint8_t *f;
	assert_int_equal(frame_encode(&env, 65536, &f, len), 0);
	free(t);
	free(v);
	return f;
}

/* Eight agents each send most of a ~50 KB frame and stall: what they hold never
 * passes the 256 KiB budget (the ones beyond it wait); after a second, the ones
 * waiting close the longest holders, and the frames completed are stored. */
static void test_server_frame_memory_budget(void **state)
{
	struct srv_fixture *f = *state;
	enum { N = 8, KEEP = 1000 };
	struct client c[N];
	size_t len;
	uint8_t *rec = big_record(2, 50000, &len);
	assert_true(len > 40000 && len < 65536);
	char id[32];
	for (int i = 0; i < N; i++) {
		snprintf(id, sizeof(id), "big-%d", i);
		assert_int_equal(hello_from(&c[i], f, NULL, id, 1), 0);
		send_counters(&c[i], f, 1, 1);
	}
	for (int i = 0; i < N; i++) {
		client_send(&c[i], rec, len - KEEP);
		steps(f, 3);
	}
	steps(f, 10);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_true(st.frame_waits >= 3);
	assert_int_equal(st.frame_evicted, 0);
	assert_true(st.frame_mem_peak <= 256 * 1024);
	assert_true(st.frame_mem_peak >= 4 * (len - 4096));
	usleep(1100 * 1000);
	steps(f, 20);
	for (int i = 0; i < N; i++)
		client_send(&c[i], rec + len - KEEP, KEEP);
	int acked = 0, closed = 0;
	for (int i = 0; i < N; i++) {
		Prof__Envelope *env = client_next(&c[i], f->srv);
		assert_non_null(env);
		if (env->body_case == PROF__ENVELOPE__BODY_ACK && env->ack->seq == 2)
			acked++;
		else if (env->body_case == PROF__ENVELOPE__BODY_ERROR &&
			 strstr(env->error->message, "--max-frame-memory"))
			closed++;
		else
			print_message("client %d: body %d %s\n", i, (int)env->body_case,
				      env->body_case == PROF__ENVELOPE__BODY_ERROR ? env->error->message : "");
		prof__envelope__free_unpacked(env, NULL);
		client_close(&c[i]);
	}
	server_get_stats(f->srv, &st);
	assert_true(st.frame_evicted >= 1);
	assert_int_equal(closed, (int)st.frame_evicted);
	assert_int_equal(acked + closed, N);
	assert_true(st.frame_mem_peak <= 256 * 1024);
	free(rec);
}

int main(void)
{
	log_init("test_server_admit", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_server_hello_alone_writes_no_session, setup_16, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_hello_squatters_evicted, setup_16, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_session_squatter_taken_over, setup_16, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_flood_fair_eviction, setup_16, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_frame_memory_budget, setup_memory, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_agent_id_in_use_by_other_host, setup_16, srv_fixture_teardown),
	    cmocka_unit_test_setup_teardown(test_server_agent_id_unproven_other_host_admitted, setup_16,
					    srv_fixture_teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
