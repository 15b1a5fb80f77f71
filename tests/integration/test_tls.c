/* TLS and the idle timeout end to end on loopback: a real collector with
 * --tls-cert/--tls-key (certificates made by the openssl tool in the test's
 * temp dir), real agents with the right CA, a wrong CA, a certificate for
 * another address, no TLS against a TLS collector and TLS against a
 * plaintext one; then a silent peer closed by --idle-timeout while an agent
 * that only sends heartbeats stays connected. */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "fleet.h"
#include "frame.h"
#include "net.h"
#include "testproc.h"
#include "tlscert.h"

struct env {
	struct tp_env t;
	char cert[300], key[300], other[300], other_key[300], far[300], far_key[300], token[300];
	char alog2[300], spool2[300];
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "tls", false) < 0)
		return -1;
	struct env *e = *state;
	tp_env_path(&e->t, "token", e->token, sizeof(e->token));
	tp_env_path(&e->t, "agent2.log", e->alog2, sizeof(e->alog2));
	tp_env_path(&e->t, "spool2", e->spool2, sizeof(e->spool2));
	if (fl_write_token(e->token, 0) < 0 ||
	    tc_make_cert(e->t.dir, "collector", "IP:127.0.0.1,DNS:localhost", e->cert, sizeof(e->cert), e->key,
			 sizeof(e->key)) < 0 ||
	    tc_make_cert(e->t.dir, "other", "IP:127.0.0.1", e->other, sizeof(e->other), e->other_key,
			 sizeof(e->other_key)) < 0 ||
	    tc_make_cert(e->t.dir, "far", "IP:10.9.8.7,DNS:far.example", e->far, sizeof(e->far), e->far_key,
			 sizeof(e->far_key)) < 0)
		return -1;
	return 0;
}

static void start_collector(struct env *e, const char *const *extra)
{
	e->t.collector = tp_start_collector_args(e->t.dir, e->t.db, 0, &e->t.port, e->t.clog, extra);
	if (e->t.collector < 0)
		tp_dump_file(e->t.clog);
	assert_true(e->t.collector > 0);
}

/* SIGTERM: the collector writes its stats line and exits 0. */
static void stop_collector(struct env *e)
{
	int status;
	kill(e->t.collector, SIGTERM);
	assert_int_equal(tp_wait(e->t.collector, 10000, &status), 0);
	e->t.collector = -1;
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

static void expect_stored(struct env *e, pid_t agent, const char *log, const char *id)
{
	int rc = fl_wait_exit(agent, 60000);
	if (rc != 0) {
		tp_dump_file(log);
		tp_dump_file(e->t.clog);
	}
	assert_int_equal(rc, 0);
	int complete = 0;
	int64_t n = fl_records(e->t.db, id, &complete);
	assert_true(n > 5);
	assert_true(complete);
	assert_int_equal(n, fl_created(log));
}

static void expect_refused(struct env *e, pid_t agent, const char *log, const char *text)
{
	int rc = fl_wait_exit(agent, 30000);
	tp_dump_file(log);
	assert_int_equal(rc, 1); /* refused for good: exit 1, not a reconnect loop */
	assert_true(tp_file_count(log, text) >= 1);
}

static void test_tls_session_stored_with_token(void **state)
{
	struct env *e = *state;
	const char *cx[] = {"--tls-cert", e->cert, "--tls-key", e->key, "--token-file", e->token, NULL};
	start_collector(e, cx);
	const char *ax[] = {"--tls-ca", e->cert, NULL};
	pid_t a = fl_start_agent(e->t.port, e->t.spool, "tls-board", "50", "2", e->token, e->t.alog, ax);
	expect_stored(e, a, e->t.alog, "tls-board");
	assert_true(tp_file_count(e->t.clog, "TLS established (TLSv1.3") >= 1);
	stop_collector(e);
	assert_int_equal(tp_file_count(e->t.clog, "stats: 0 authentication failures"), 1);
	assert_int_equal(tp_file_count(e->t.clog, " 0 TLS failures"), 1);
}

static void test_tls_wrong_ca_refused_and_counted(void **state)
{
	struct env *e = *state;
	const char *cx[] = {"--tls-cert", e->cert, "--tls-key", e->key, NULL};
	start_collector(e, cx);
	const char *ax[] = {"--tls-ca", e->other, NULL};
	pid_t a = fl_start_agent(e->t.port, e->t.spool, "wrong-ca", "50", "5", NULL, e->t.alog, ax);
	expect_refused(e, a, e->t.alog, "certificate verification failed");
	assert_true(tp_file_count(e->t.alog, "--tls-ca") >= 1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM sessions"), 0);
	stop_collector(e);
	tp_dump_file(e->t.clog);
	assert_int_equal(tp_file_count(e->t.clog, " 1 TLS failures"), 1);
}

static void test_tls_certificate_for_other_address_refused(void **state)
{
	struct env *e = *state;
	const char *cx[] = {"--tls-cert", e->far, "--tls-key", e->far_key, NULL};
	start_collector(e, cx);
	const char *ax[] = {"--tls-ca", e->far, NULL};
	pid_t a = fl_start_agent(e->t.port, e->t.spool, "far", "50", "5", NULL, e->t.alog, ax);
	expect_refused(e, a, e->t.alog, "IP address mismatch");
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM sessions"), 0);
}

/* A plaintext agent gets a plaintext Error it can print; a TLS agent next to it is unaffected. */
static void test_tls_plain_agent_to_tls_collector_refused(void **state)
{
	struct env *e = *state;
	const char *cx[] = {"--tls-cert", e->cert, "--tls-key", e->key, NULL};
	start_collector(e, cx);
	const char *ax[] = {"--tls-ca", e->cert, NULL};
	pid_t good = fl_start_agent(e->t.port, e->t.spool, "tls-ok", "50", "3", NULL, e->t.alog, ax);
	pid_t plain = fl_start_agent(e->t.port, e->spool2, "plain", "50", "5", NULL, e->alog2, NULL);
	expect_refused(e, plain, e->alog2, "accepts TLS connections only");
	assert_true(tp_file_count(e->alog2, "--tls-ca") >= 1);
	expect_stored(e, good, e->t.alog, "tls-ok");
	assert_true(tp_file_count(e->t.clog, "plaintext peer on a TLS listener") >= 1);
	stop_collector(e);
	assert_int_equal(tp_file_count(e->t.clog, " 1 TLS failures"), 1);
}

static void test_tls_agent_to_plain_collector_refused(void **state)
{
	struct env *e = *state;
	start_collector(e, NULL);
	pid_t good = fl_start_agent(e->t.port, e->t.spool, "plain-ok", "50", "3", NULL, e->t.alog, NULL);
	const char *ax[] = {"--tls-ca", e->cert, NULL};
	pid_t tls = fl_start_agent(e->t.port, e->spool2, "tls-agent", "50", "5", NULL, e->alog2, ax);
	expect_refused(e, tls, e->alog2, "does not speak TLS");
	expect_stored(e, good, e->t.alog, "plain-ok");
	assert_true(tp_file_count(e->t.clog, "TLS handshake on a plaintext listener") >= 1);
	assert_int_equal(tp_db_int(e->t.db, "SELECT COUNT(*) FROM sessions WHERE agent_id='tls-agent'"), 0);
}

/* Connect, send a Hello, read its Ack, then stay silent: returns the seconds
 * until the collector closed the connection, and the Error it sent first. */
static double silent_peer(int port, char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_storage ss;
	socklen_t sl;
	char hp[64];
	snprintf(hp, sizeof(hp), "127.0.0.1:%d", port);
	assert_int_equal(net_parse_hostport(hp, &ss, &sl), 0);
	assert_int_equal(connect(fd, (struct sockaddr *)&ss, sl), 0);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "silent";
	h.boot_id = 5;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	uint8_t *f;
	size_t len;
	assert_int_equal(frame_encode(&env, 65536, &f, &len), 0);
	assert_int_equal(send(fd, f, len, MSG_NOSIGNAL), (ssize_t)len);
	free(f);
	uint64_t t0 = clock_mono_ns();
	struct frame_decoder dec;
	assert_int_equal(frame_decoder_init(&dec, 65536), 0);
	snprintf(err, errlen, "(no Error)");
	bool acked = false;
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		assert_true(poll(&p, 1, 30000) == 1); /* bounded: the idle timeout is far below */
		size_t avail;
		uint8_t *dst = frame_decoder_space(&dec, &avail);
		ssize_t n = recv(fd, dst, avail, 0);
		if (n <= 0)
			break;
		frame_decoder_commit(&dec, (size_t)n);
		const uint8_t *pl;
		size_t plen;
		while (frame_decoder_next(&dec, &pl, &plen) > 0) {
			Prof__Envelope *r = prof__envelope__unpack(NULL, plen, pl);
			assert_non_null(r);
			if (r->body_case == PROF__ENVELOPE__BODY_ACK && !acked) {
				acked = true;
				t0 = clock_mono_ns(); /* silent from here */
			}
			if (r->body_case == PROF__ENVELOPE__BODY_ERROR)
				snprintf(err, errlen, "%u %s", r->error->code, r->error->message);
			prof__envelope__free_unpacked(r, NULL);
		}
	}
	frame_decoder_free(&dec);
	close(fd);
	assert_true(acked);
	return (double)(clock_mono_ns() - t0) / 1e9;
}

/* --idle-timeout 12: a peer silent after its Hello is closed after ~12 s with
 * a counted log line; an agent that reads counters every 20 s (so it sends
 * only heartbeats, every 10 s, in between) keeps its one connection. ~25 s. */
static void test_idle_timeout_closes_silent_peer_not_agent(void **state)
{
	struct env *e = *state;
	const char *cx[] = {"--idle-timeout", "12", NULL};
	start_collector(e, cx);
	pid_t a = fl_start_agent(e->t.port, e->t.spool, "slow-agent", "20000", "23", NULL, e->t.alog, NULL);
	char err[256];
	double s = silent_peer(e->t.port, err, sizeof(err));
	fprintf(stderr, "silent peer closed after %.1f s: %s\n", s, err);
	assert_true(s >= 11.5 && s < 16.0);
	assert_true(strstr(err, "--idle-timeout") != NULL);
	char code[16];
	snprintf(code, sizeof(code), "%d ", ETIMEDOUT);
	assert_true(strncmp(err, code, strlen(code)) == 0);
	int rc = fl_wait_exit(a, 60000);
	if (rc != 0)
		tp_dump_file(e->t.alog);
	assert_int_equal(rc, 0);
	int complete = 0;
	assert_true(fl_records(e->t.db, "slow-agent", &complete) >= 2);
	assert_true(complete);
	assert_int_equal(tp_file_count(e->t.clog, "(1 idle timeouts so far)"), 1);
	/* two Hellos (the silent peer, the agent): the agent was never cut, never reconnected */
	assert_int_equal(tp_file_count(e->t.clog, " (new), highest committed seq"), 2);
	assert_int_equal(tp_file_count(e->t.clog, "(resumed)"), 0);
	stop_collector(e);
	assert_int_equal(tp_file_count(e->t.clog, " 1 idle timeouts"), 1);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tls_session_stored_with_token, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_tls_wrong_ca_refused_and_counted, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_tls_certificate_for_other_address_refused, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_tls_plain_agent_to_tls_collector_refused, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_tls_agent_to_plain_collector_refused, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_idle_timeout_closes_silent_peer_not_agent, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("tls", tests, NULL, NULL);
}
