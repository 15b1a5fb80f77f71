/* Unit tests of the collector's authentication and per-connection limits
 * (issue #10), in process: the server listens on 127.0.0.1 and the test
 * drives its loop with server_step() while talking to it through real sockets.
 * The client helpers are those of test_server.c. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "frame.h"
#include "log.h"
#include "server/server.h"
#include "srvclient.h"
#include "store/store.h"

#define MAX_FRAME (64u * 1024u)
#include "auth.h"
#include "net.h"

struct fixture {
	struct store *store;
	struct server *srv;
	struct auth_token token;
};

static struct fixture *open_fixture(struct server_options opt, bool with_token)
{
	struct fixture *f = calloc(1, sizeof(*f));
	assert_non_null(f);
	assert_int_equal(store_open(":memory:", 0, &f->store), 0);
	memset(f->token.key, 'k', 32);
	f->token.len = 32;
	opt.signal_fd = -1;
	opt.max_frame = MAX_FRAME;
	if (!opt.listen)
		opt.listen = "127.0.0.1:0";
	opt.token = with_token ? &f->token : NULL;
	assert_int_equal(server_open(f->store, &opt, &f->srv), 0);
	return f;
}

static void close_fixture(struct fixture *f)
{
	server_close(f->srv);
	store_close(f->store);
	free(f);
}


/* ---------------------------------------------------------------- envelopes */

static void add_hello_auth(uint8_t **buf, size_t *len, const char *agent, uint64_t boot, const uint8_t *mac)
{
	add_hello_frame(buf, len,
			&(struct hello_spec){.agent = agent, .boot = boot, .board = "host", .mac = mac,
					     .mac_len = mac ? AUTH_MAC_LEN : 0});
}

/* The Challenge every connection of a server with a token starts with; returns its nonce. */
static void expect_challenge(struct client *c, struct server *srv, uint8_t nonce[AUTH_NONCE_LEN])
{
	Prof__Envelope *env = client_next(c, srv);
	assert_non_null(env);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_CHALLENGE);
	assert_int_equal(env->challenge->nonce.len, AUTH_NONCE_LEN);
	memcpy(nonce, env->challenge->nonce.data, AUTH_NONCE_LEN);
	prof__envelope__free_unpacked(env, NULL);
}

static void hello_with_token(struct client *c, struct server *srv, const struct auth_token *tok, const char *agent,
			     uint64_t boot)
{
	uint8_t nonce[AUTH_NONCE_LEN], mac[AUTH_MAC_LEN];
	expect_challenge(c, srv, nonce);
	assert_int_equal(auth_mac(tok, nonce, sizeof(nonce), agent, boot, mac), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_auth(&buf, &len, agent, boot, mac);
	send_and_free(c, &buf, &len);
}

/* ---------------------------------------------------------------- tests */

static void test_auth_mac_binds_nonce_agent_and_boot(void **state)
{
	struct auth_token t = {.len = 20};
	memset(t.key, 7, t.len);
	uint8_t n1[AUTH_NONCE_LEN] = {1}, n2[AUTH_NONCE_LEN] = {2}, m[4][AUTH_MAC_LEN];
	assert_int_equal(auth_mac(&t, n1, sizeof(n1), "a", 1, m[0]), 0);
	assert_int_equal(auth_mac(&t, n2, sizeof(n2), "a", 1, m[1]), 0);
	assert_int_equal(auth_mac(&t, n1, sizeof(n1), "b", 1, m[2]), 0);
	assert_int_equal(auth_mac(&t, n1, sizeof(n1), "a", 2, m[3]), 0);
	for (int i = 1; i < 4; i++)
		assert_memory_not_equal(m[0], m[i], AUTH_MAC_LEN);
	assert_int_equal(auth_verify(&t, n1, sizeof(n1), "a", 1, m[0], AUTH_MAC_LEN), 0);
	assert_int_equal(auth_verify(&t, n1, sizeof(n1), "a", 1, m[1], AUTH_MAC_LEN), -EACCES);
	assert_int_equal(auth_verify(&t, n1, sizeof(n1), "a", 1, m[0], AUTH_MAC_LEN - 1), -EACCES);
}

static void test_server_auth_good_token_acked(void **state)
{
	struct fixture *f = open_fixture((struct server_options){0}, true);
	struct client c;
	client_open(&c, f->srv);
	hello_with_token(&c, f->srv, &f->token, "board-1", 5);
	assert_int_equal(expect_ack(&c, f->srv), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_counters(&buf, &len, 1);
	send_and_free(&c, &buf, &len);
	expect_ack_reaching(&c, f->srv, 1);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.records, 1);
	assert_int_equal(st.auth_failed, 0);
	client_close(&c);
	close_fixture(f);
}

static void test_server_auth_missing_proof_refused_and_counted(void **state)
{
	struct fixture *f = open_fixture((struct server_options){0}, true);
	struct client c;
	client_open(&c, f->srv);
	uint8_t nonce[AUTH_NONCE_LEN];
	expect_challenge(&c, f->srv, nonce);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_auth(&buf, &len, "board-2", 5, NULL);
	send_and_free(&c, &buf, &len);
	expect_error_and_close(&c, f->srv, "--token-file");
	client_close(&c);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.auth_failed, 1);
	assert_int_equal(st.records, 0);
	close_fixture(f);
}

static void test_server_auth_wrong_token_refused(void **state)
{
	struct fixture *f = open_fixture((struct server_options){0}, true);
	struct auth_token other = f->token;
	other.key[0] ^= 1;
	struct client c;
	client_open(&c, f->srv);
	hello_with_token(&c, f->srv, &other, "board-3", 5);
	expect_error_and_close(&c, f->srv, "authentication failed");
	client_close(&c);
	/* A replayed proof for another nonce fails too: the nonce is new on every connection. */
	client_open(&c, f->srv);
	uint8_t nonce[AUTH_NONCE_LEN], mac[AUTH_MAC_LEN], zero[AUTH_NONCE_LEN] = {0};
	expect_challenge(&c, f->srv, nonce);
	assert_int_equal(auth_mac(&f->token, zero, sizeof(zero), "board-3", 5, mac), 0);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_auth(&buf, &len, "board-3", 5, mac);
	send_and_free(&c, &buf, &len);
	expect_error_and_close(&c, f->srv, "authentication failed");
	client_close(&c);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.auth_failed, 2);
	close_fixture(f);
}

static void test_server_non_loopback_needs_token(void **state)
{
	struct store *store;
	assert_int_equal(store_open(":memory:", 0, &store), 0);
	struct server *srv = NULL;
	struct server_options opt = {.listen = "0.0.0.0:0", .signal_fd = -1};
	/* refused before any socket is bound (tests bind nothing but loopback) */
	assert_int_equal(server_open(store, &opt, &srv), -EACCES);
	assert_null(srv);
	store_close(store);
}

static void test_server_hello_timeout_closes_silent_peer(void **state)
{
	struct fixture *f = open_fixture((struct server_options){.hello_timeout_ms = 300}, false);
	struct client silent, dribble;
	client_open(&silent, f->srv);
	client_open(&dribble, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_auth(&buf, &len, "slow", 1, NULL);
	client_send(&dribble, buf, 2); /* a byte at a time, never a whole Hello */
	free(buf);
	expect_error_and_close(&silent, f->srv, "no Hello within");
	expect_error_and_close(&dribble, f->srv, "no Hello within");
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.hello_timeouts, 2);
	assert_int_equal(st.conns, 0);
	client_close(&silent);
	client_close(&dribble);
	close_fixture(f);
}

static void test_server_max_sessions_per_agent(void **state)
{
	struct fixture *f = open_fixture((struct server_options){.max_sessions_per_agent = 2}, false);
	struct client c[3];
	for (int i = 0; i < 3; i++) {
		client_open(&c[i], f->srv);
		uint8_t *buf = NULL;
		size_t len = 0;
		add_hello_auth(&buf, &len, "twin", (uint64_t)i + 1, NULL);
		send_and_free(&c[i], &buf, &len);
		if (i < 2)
			assert_int_equal(expect_ack(&c[i], f->srv), 0);
	}
	expect_error_and_close(&c[2], f->srv, "--max-sessions-per-agent 2");
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.over_per_agent, 1);
	for (int i = 0; i < 3; i++)
		client_close(&c[i]);
	close_fixture(f);
}

static void test_server_rate_limit_throttles_without_loss(void **state)
{
	struct fixture *f = open_fixture((struct server_options){.max_rate = 200}, false);
	struct client c;
	client_open(&c, f->srv);
	uint8_t *buf = NULL;
	size_t len = 0;
	add_hello_auth(&buf, &len, "fast", 1, NULL);
	send_and_free(&c, &buf, &len);
	assert_int_equal(expect_ack(&c, f->srv), 0);
	uint64_t t0 = clock_mono_ns();
	for (uint64_t seq = 1; seq <= 500; seq++)
		add_counters(&buf, &len, seq);
	send_and_free(&c, &buf, &len);
	uint64_t acked = 0;
	for (int i = 0; i < 2000 && acked < 500; i++) {
		Prof__Envelope *env = client_next(&c, f->srv);
		assert_non_null(env);
		assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ACK);
		acked = env->ack->seq;
		prof__envelope__free_unpacked(env, NULL);
	}
	double secs = (double)(clock_mono_ns() - t0) * 1e-9;
	struct server_stats st;
	server_get_stats(f->srv, &st);
	fprintf(stderr, "500 records at --max-rate 200: all acked in %.2f s, throttled %llu times\n", secs,
		(unsigned long long)st.throttled);
	assert_int_equal(acked, 500);
	assert_int_equal(st.records, 500);
	assert_true(st.throttled >= 1);
	assert_true(secs >= 1.0); /* 500 records with a 200-record burst and 200/s: >= 1.5 s */
	client_close(&c);
	close_fixture(f);
}

/* auth_mac against an independent HMAC-SHA256 (Python's hmac module):
 * hmac.new(b"0123456789abcdef-token", bytes(range(32)) + b"agent-42" +
 * struct.pack("<Q", 0x1122334455667788), hashlib.sha256).hexdigest() */
static void test_auth_mac_known_answer(void **state)
{
	(void)state;
	if (!auth_available())
		skip();
	static const char want_hex[] = "d6bf12a76ddf935cc6239bf5d7b41c253ef1580fad686d8a1ed37b7e0eed6b5e";
	struct auth_token *t = calloc(1, sizeof(*t));
	assert_non_null(t);
	t->len = strlen("0123456789abcdef-token");
	memcpy(t->key, "0123456789abcdef-token", t->len);
	uint8_t nonce[32], mac[AUTH_MAC_LEN], want[AUTH_MAC_LEN];
	for (int i = 0; i < 32; i++)
		nonce[i] = (uint8_t)i;
	for (int i = 0; i < (int)AUTH_MAC_LEN; i++)
		sscanf(want_hex + 2 * i, "%2hhx", &want[i]);
	assert_int_equal(auth_mac(t, nonce, sizeof(nonce), "agent-42", 0x1122334455667788ull, mac), 0);
	assert_memory_equal(mac, want, AUTH_MAC_LEN);
	assert_int_equal(auth_verify(t, nonce, sizeof(nonce), "agent-42", 0x1122334455667788ull, want, AUTH_MAC_LEN), 0);
	want[31] ^= 1;
	assert_int_equal(auth_verify(t, nonce, sizeof(nonce), "agent-42", 0x1122334455667788ull, want, AUTH_MAC_LEN),
			 -EACCES);
	auth_token_wipe(t);
	free(t);
}

/* A token file that group or others may read is refused, naming the chmod to run. */
static void test_auth_token_file_open_to_others_refused(void **state)
{
	(void)state;
	char path[] = "/tmp/test_token_XXXXXX";
	int fd = mkstemp(path);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, "0123456789abcdef0123\n", 21), 21);
	close(fd);
	struct auth_token *t = malloc(sizeof(*t));
	assert_non_null(t);
	char err[512];
	const mode_t bad[] = {0644, 0640, 0604, 0660, 0602};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		assert_int_equal(chmod(path, bad[i]), 0);
		err[0] = 0;
		assert_int_equal(auth_token_load(path, t, err, sizeof(err)), -EACCES);
		char want[128];
		snprintf(want, sizeof(want), "chmod 600 %s", path);
		if (!strstr(err, want))
			fail_msg("message '%s' does not say '%s'", err, want);
		assert_int_equal(t->len, 0);
	}
	assert_int_equal(chmod(path, 0600), 0);
	assert_int_equal(auth_token_load(path, t, err, sizeof(err)), auth_available() ? 0 : -ENOTSUP);
	if (auth_available())
		assert_int_equal(t->len, 20);
	auth_token_wipe(t);
	free(t);
	unlink(path);
}

int main(void)
{
	log_init("test_server_auth", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_auth_mac_known_answer),
		cmocka_unit_test(test_auth_token_file_open_to_others_refused),
		cmocka_unit_test(test_auth_mac_binds_nonce_agent_and_boot),
		cmocka_unit_test(test_server_auth_good_token_acked),
		cmocka_unit_test(test_server_auth_missing_proof_refused_and_counted),
		cmocka_unit_test(test_server_auth_wrong_token_refused),
		cmocka_unit_test(test_server_non_loopback_needs_token),
		cmocka_unit_test(test_server_hello_timeout_closes_silent_peer),
		cmocka_unit_test(test_server_max_sessions_per_agent),
		cmocka_unit_test(test_server_rate_limit_throttles_without_loss),
	};
	return cmocka_run_group_tests_name("server_auth", tests, NULL, NULL);
}
