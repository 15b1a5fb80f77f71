/* Unit tests of collector/server/http.c in the agents' loop (server.c): real
 * sockets on 127.0.0.1, the loop driven with server_step(). The session list
 * and a report page are served with 200; oversized and garbage requests get
 * 400 and an agent connection open meanwhile keeps being acked. */
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
#include <unistd.h>

#include <cmocka.h>
#include <nettle/base64.h>

#include "auth.h"

#include "frame.h"
#include "server/http.h"
#include "log.h"
#include "net.h"
#include "report_fixture.h"
#include "server/server.h"
#include "store/store.h"
#include "testproc.h"
#include "validate.h"

struct fx {
	char dir[256], db[300];
	struct store *st;
	struct server *srv;
	struct http_server *http;
};

static int setup_lim(void **state, const struct http_limits *lim)
{
	struct fx *f = calloc(1, sizeof(*f));
	int64_t sid;
	if (!f || tp_tmpdir(f->dir, sizeof(f->dir), "http") < 0)
		return -1;
	snprintf(f->db, sizeof(f->db), "%s/p.db", f->dir);
	if (store_open(f->db, 0, &f->st) < 0 || rf_make_session(f->st, &sid) < 0)
		return -1;
	if (http_open("127.0.0.1:0", f->db, lim, &f->http) < 0)
		return -1;
	struct server_options opt = {.listen = "127.0.0.1:0", .signal_fd = -1, .extra_fd = http_fd(f->http),
				     .extra_ready = http_ready, .extra_arg = f->http};
	if (server_open(f->st, &opt, &f->srv) < 0)
		return -1;
	*state = f;
	return 0;
}

static int setup(void **state)
{
	return setup_lim(state, NULL);
}

static struct auth_token key_token = {.len = 20, .key = "0123456789abcdefghij"};

/* The HTTP key required (as on a non-loopback address) */
static int setup_key(void **state)
{
	static const struct http_limits lim = {.token = &key_token, .key_on_loopback = true};
	return setup_lim(state, &lim);
}

/* 300 ms to send a request head, 4 HTTP connections */
static int setup_short(void **state)
{
	static const struct http_limits lim = {.head_timeout_ms = 300, .max_conns = 4};
	return setup_lim(state, &lim);
}

static int teardown(void **state)
{
	struct fx *f = *state;
	server_close(f->srv);
	http_close(f->http);
	store_close(f->st);
	tp_rm_rf(f->dir);
	free(f);
	return 0;
}

static int connect_to(uint16_t port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(fd >= 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	return fd;
}

/* Send req (len bytes), then read the whole answer while stepping the loop. */
static char *http_exchange(struct fx *f, const char *req, size_t len)
{
	int fd = connect_to(http_port(f->http));
	size_t off = 0;
	while (off < len) {
		ssize_t n = send(fd, req + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n > 0)
			off += (size_t)n;
		else if (n < 0 && errno != EAGAIN)
			break; /* the server answered and closed early */
		assert_true(server_step(f->srv, 5) >= 0);
	}
	size_t cap = 1 << 16, got = 0;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	for (int tries = 0; tries < 2000; tries++) {
		if (got == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
		ssize_t n = recv(fd, buf + got, cap - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		assert_true(server_step(f->srv, 5) >= 0);
	}
	close(fd);
	buf[got] = '\0';
	return buf;
}

static char *get(struct fx *f, const char *path)
{
	char req[512];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: test\r\n\r\n", path);
	return http_exchange(f, req, (size_t)n);
}

static void expect_status(const char *resp, int code)
{
	char want[32];
	snprintf(want, sizeof(want), "HTTP/1.1 %d ", code);
	if (strncmp(resp, want, strlen(want)) != 0) {
		print_message("want %s, got: %.200s\n", want, resp);
		fail();
	}
}

static void test_http_index_lists_sessions(void **state)
{
	struct fx *f = *state;
	char *r = get(f, "/");
	expect_status(r, 200);
	assert_non_null(strstr(r, "Content-Type: text/html"));
	assert_non_null(strstr(r, "<a href=\"/session/1\">1</a>"));
	assert_non_null(strstr(r, "report-test"));
	free(r);
	r = get(f, "/sessions.json");
	expect_status(r, 200);
	assert_non_null(strstr(r, "{\"sessions\":[{\"id\":1,"));
	free(r);
}

static void test_http_report_pages(void **state)
{
	struct fx *f = *state;
	char *r = get(f, "/session/1");
	expect_status(r, 200);
	assert_non_null(strstr(r, "<h1>Session 1</h1>"));
	const char *fig = strstr(r, "class=\"plot roofline-gpu\">");
	assert_non_null(fig);
	assert_ptr_equal(strstr(fig, "<svg "), strchr(fig, '\n') + 1); /* the chart is inline */
	assert_non_null(strstr(r, "fixture tid 101"));
	free(r);
	r = get(f, "/session/1.json");
	expect_status(r, 200);
	assert_non_null(strstr(r, "application/json"));
	assert_non_null(strstr(r, "\"schema\":\"prof-report/1\""));
	free(r);
	r = get(f, "/session/1/roofline-gpu.svg?x=1");
	expect_status(r, 200);
	assert_non_null(strstr(r, "image/svg+xml"));
	assert_non_null(strstr(r, "class=\"roof\""));
	free(r);
	r = get(f, "/session/7");
	expect_status(r, 404);
	free(r);
	r = get(f, "/nowhere");
	expect_status(r, 404);
	free(r);
}

static void test_http_bad_requests_400(void **state)
{
	struct fx *f = *state;
	/* an agent connection first: Hello, acked */
	int agent = connect_to(server_port(f->srv));
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "agent-x";
	h.boot_id = 9;
	h.board = "host";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	uint8_t *fr;
	size_t flen;
	assert_int_equal(frame_encode(&env, 1 << 16, &fr, &flen), 0);
	assert_int_equal(send(agent, fr, flen, MSG_NOSIGNAL), (ssize_t)flen);
	free(fr);

	static const char tls[] = "\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n"; /* a TLS hello, NULs */
	static const struct {
		const char *req;
		size_t len;
	} garbage[] = {
		{tls, sizeof(tls) - 1},
		{"HELLO\r\n\r\n", 9},
		{"GET  HTTP/1.1\r\n\r\n", 17},
		{"GET /x HTTP/9.9\r\n\r\n", 19},
		{"GET /a b HTTP/1.1\r\n\r\n", 21},
		/* the request line has one SP between its three parts (RFC 9112 section 3): these were 200 */
		{"GET  / HTTP/1.1\r\n\r\n", 19},
		{"GET/ HTTP/1.1\r\n\r\n", 17},
		{"GET /  HTTP/1.1\r\n\r\n", 19},
		{"GET / HTTP/1.1 \r\n\r\n", 19},
		{"GET\t/ HTTP/1.1\r\n\r\n", 18},
	};
	for (size_t i = 0; i < sizeof(garbage) / sizeof(garbage[0]); i++) {
		char *r = http_exchange(f, garbage[i].req, garbage[i].len);
		expect_status(r, 400);
		free(r);
	}
	char *r = http_exchange(f, "POST / HTTP/1.1\r\n\r\n", 19);
	expect_status(r, 405);
	free(r);
	/* oversized: 20 KiB of header without an end */
	size_t big = 20000;
	char *req = malloc(big);
	assert_non_null(req);
	memcpy(req, "GET / HTTP/1.1\r\nX-Pad: ", 23);
	memset(req + 23, 'a', big - 23);
	r = http_exchange(f, req, big);
	expect_status(r, 400);
	assert_non_null(strstr(r, "8 KiB"));
	free(r);
	free(req);

	/* the agent is still served: its ack for the Hello (seq 0) arrives */
	struct frame_decoder dec;
	assert_int_equal(frame_decoder_init(&dec, 1 << 16), 0);
	bool acked = false;
	for (int tries = 0; tries < 400 && !acked; tries++) {
		const uint8_t *p;
		size_t len;
		if (frame_decoder_next(&dec, &p, &len) == 1) {
			char err[160];
			Prof__Envelope *e = envelope_decode(p, len, err, sizeof(err));
			assert_non_null(e);
			acked = e->body_case == PROF__ENVELOPE__BODY_ACK;
			prof__envelope__free_unpacked(e, NULL);
			continue;
		}
		size_t avail;
		uint8_t *dst = frame_decoder_space(&dec, &avail);
		ssize_t n = recv(agent, dst, avail, MSG_DONTWAIT);
		if (n > 0)
			frame_decoder_commit(&dec, (size_t)n);
		else
			assert_true(server_step(f->srv, 5) >= 0);
	}
	assert_true(acked);
	struct server_stats st;
	server_get_stats(f->srv, &st);
	assert_int_equal(st.conns, 1);
	assert_int_equal(st.closed_bad, 0);
	frame_decoder_free(&dec);
	close(agent);
	/* and HTTP still works */
	r = get(f, "/");
	expect_status(r, 200);
	free(r);
}

/* Strings keep every character, escaped (the list used to delete some). */
static void test_http_sessions_json_escapes(void **state)
{
	struct fx *f = *state;
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "q\"b\\s\x01\xe2\x80\xa8" "e";
	h.boot_id = 5;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(f->st, &h, "test", &sid, &max_seq, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	char *r = get(f, "/sessions.json");
	expect_status(r, 200);
	if (!strstr(r, "\"agent_id\":\"q\\\"b\\\\s\\u0001\\u2028e\""))
		fail_msg("agent id not escaped: %s", r);
	free(r);
}

/* Read what fd has until EOF (stepping the loop), at most ms. */
static char *drain(struct fx *f, int fd, int ms)
{
	static char buf[4096];
	size_t got = 0;
	uint64_t end = clock_mono_ns() + (uint64_t)ms * 1000000u;
	while (clock_mono_ns() < end && got < sizeof(buf) - 1) {
		ssize_t n = recv(fd, buf + got, sizeof(buf) - 1 - got, MSG_DONTWAIT);
		if (n > 0) {
			got += (size_t)n;
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET))
			break;
		assert_true(server_step(f->srv, 5) >= 0);
	}
	buf[got] = '\0';
	return buf;
}

/* Half-sent requests: over the cap the oldest is evicted (503), the others get
 * 408 at the deadline, and a whole request is answered meanwhile and after. */
static void test_http_half_open_requests_408(void **state)
{
	struct fx *f = *state;
	enum { N = 10 };
	int fd[N];
	for (int i = 0; i < N; i++) {
		fd[i] = connect_to(http_port(f->http));
		assert_int_equal(send(fd[i], "GET / HT", 8, MSG_NOSIGNAL), 8);
		for (int k = 0; k < 3; k++)
			assert_true(server_step(f->srv, 1) >= 0);
	}
	/* a real request while all 4 slots hold half-sent ones: it is served */
	char *r = get(f, "/sessions.json");
	expect_status(r, 200);
	free(r);
	for (int i = 0; i < N - 4; i++)
		expect_status(drain(f, fd[i], 1000), 503);
	uint64_t t0 = clock_mono_ns();
	int timeouts = 0;
	for (int i = N - 4; i < N; i++) {
		char *a = drain(f, fd[i], 2000);
		if (strncmp(a, "HTTP/1.1 408 ", 13) == 0)
			timeouts++;
		else if (strncmp(a, "HTTP/1.1 503 ", 13) != 0) /* the request above evicted one */
			fail_msg("want 408 or 503, got: %.100s", a);
	}
	double waited_ms = (double)(clock_mono_ns() - t0) / 1e6;
	assert_true(timeouts >= 3);
	assert_true(waited_ms < 1500);
	for (int i = 0; i < N; i++)
		close(fd[i]);
	r = get(f, "/sessions.json");
	expect_status(r, 200);
	free(r);
	struct http_stats st;
	http_get_stats(f->http, &st);
	assert_int_equal(st.timeouts, (unsigned long long)timeouts);
	assert_true(st.evicted >= N - 4);
}

/* /session/N takes N in strict decimal only. */
static void test_http_strict_session_ids(void **state)
{
	struct fx *f = *state;
	static const char *const bad[] = {"/session/+1",      "/session/01",	"/session/-1",
					  "/session/0",	      "/session/1x",	"/session/ 1",
					  "/session/1.json.x", "/session/1234567890123456789", "/session/",
					  "/session/0x1",      "/session/1/roofline-gpu.svgx"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *r = get(f, bad[i]);
		if (strncmp(r, "HTTP/1.1 404 ", 13) != 0 && strncmp(r, "HTTP/1.1 400 ", 13) != 0)
			fail_msg("%s: want 404 or 400, got %.60s", bad[i], r);
		assert_null(strstr(r, "Session 1"));
		free(r);
	}
	char *r = get(f, "/session/1.txt");
	expect_status(r, 200);
	free(r);
}

/* Every answer says what it is and that it must not be sniffed as something else. */
static void test_http_content_type_nosniff(void **state)
{
	struct fx *f = *state;
	static const struct {
		const char *path;
		int code;
		const char *type;
	} pages[] = {
	    {"/", 200, "text/html; charset=utf-8"},
	    {"/sessions.json", 200, "application/json; charset=utf-8"},
	    {"/session/1.json", 200, "application/json; charset=utf-8"},
	    {"/session/1.txt", 200, "text/plain; charset=utf-8"},
	    {"/session/1/roofline-gpu.svg", 200, "image/svg+xml; charset=utf-8"},
	    {"/session/9", 404, "text/plain; charset=utf-8"},
	    {"/nowhere", 404, "text/plain; charset=utf-8"},
	};
	for (size_t i = 0; i < sizeof(pages) / sizeof(pages[0]); i++) {
		char *r = get(f, pages[i].path);
		expect_status(r, pages[i].code);
		char want[96];
		snprintf(want, sizeof(want), "\r\nContent-Type: %s\r\n", pages[i].type);
		if (!strstr(r, want) || !strstr(r, "\r\nX-Content-Type-Options: nosniff\r\n"))
			fail_msg("%s: headers %.300s", pages[i].path, r);
		free(r);
	}
	char *r = http_exchange(f, "GET /a b HTTP/1.1\r\n\r\n", 21);
	expect_status(r, 400);
	assert_non_null(strstr(r, "X-Content-Type-Options: nosniff"));
	free(r);
}

/* An agent id that closes a <script> element reaches the JSON pages escaped. */
static void test_http_json_no_raw_script(void **state)
{
	struct fx *f = *state;
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "</script><script>alert(1)</script>";
	h.boot_id = 6;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(f->st, &h, "test", &sid, &max_seq, NULL), 0);
	assert_int_equal(store_commit(f->st), 0);
	char path[64];
	snprintf(path, sizeof(path), "/session/%lld.json", (long long)sid);
	const char *const paths[] = {"/sessions.json", path};
	for (int i = 0; i < 2; i++) {
		char *r = get(f, paths[i]);
		expect_status(r, 200);
		if (strstr(r, "<script") || strstr(r, "</script") || !strstr(r, "\\u003c/script\\u003e"))
			fail_msg("%s: %.400s", paths[i], r);
		free(r);
	}
}

/* A non-loopback --http without a token (or the explicit opt-out) is refused before binding. */
static void test_http_non_loopback_needs_token(void **state)
{
	(void)state;
	struct http_server *h = NULL;
	assert_int_equal(http_open("0.0.0.0:0", "/nonexistent.db", NULL, &h), -EACCES);
	assert_null(h);
	static const struct http_limits lim = {.max_conns = 1};
	assert_int_equal(http_open("0.0.0.0:0", "/nonexistent.db", &lim, &h), -EACCES);
	assert_null(h);
}

static char *get_auth(struct fx *f, const char *path, const char *auth)
{
	char req[1024];
	int n = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: x\r\nAuthorization: %s\r\n\r\n", path, auth);
	return http_exchange(f, req, (size_t)n);
}

/* With the token, every request needs the HTTP key (Bearer, or Basic's password); the
 * key is not the token. */
static void test_http_key_required(void **state)
{
	struct fx *f = *state;
	char key[AUTH_DERIVED_HEX];
	assert_int_equal(auth_derive_hex(&key_token, AUTH_HTTP_LABEL, key), 0);
	assert_null(strstr(key, "0123456789abcdef"));
	char *r = get(f, "/sessions.json");
	expect_status(r, 401);
	assert_non_null(strstr(r, "\r\nWWW-Authenticate: Basic realm="));
	assert_null(strstr(r, "\"sessions\""));
	free(r);
	char auth[256];
	snprintf(auth, sizeof(auth), "Bearer %.63s0", key); /* one digit off */
	r = get_auth(f, "/sessions.json", auth);
	expect_status(r, 401);
	free(r);
	r = get_auth(f, "/sessions.json", "Bearer 0123456789abcdefghij"); /* the token itself */
	expect_status(r, 401);
	free(r);
	snprintf(auth, sizeof(auth), "Bearer %s", key);
	r = get_auth(f, "/sessions.json", auth);
	expect_status(r, 200);
	assert_non_null(strstr(r, "\"sessions\""));
	free(r);
	/* Basic: any user name, the key as password */
	char plain[128];
	int n = snprintf(plain, sizeof(plain), "browser:%s", key);
	char b64[BASE64_ENCODE_RAW_LENGTH(128) + 1];
	base64_encode_raw(b64, (size_t)n, (const uint8_t *)plain);
	b64[BASE64_ENCODE_RAW_LENGTH((size_t)n)] = '\0';
	snprintf(auth, sizeof(auth), "Basic %s", b64);
	r = get_auth(f, "/session/1.txt", auth);
	expect_status(r, 200);
	free(r);
	struct http_stats st;
	http_get_stats(f->http, &st);
	assert_int_equal(st.unauthorized, 3);
}

int main(void)
{
	log_init("test_http", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_http_index_lists_sessions, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_report_pages, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_bad_requests_400, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_sessions_json_escapes, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_half_open_requests_408, setup_short, teardown),
		cmocka_unit_test_setup_teardown(test_http_strict_session_ids, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_content_type_nosniff, setup, teardown),
		cmocka_unit_test_setup_teardown(test_http_json_no_raw_script, setup, teardown),
		cmocka_unit_test(test_http_non_loopback_needs_token),
		cmocka_unit_test_setup_teardown(test_http_key_required, setup_key, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
