#include "srvclient.h"

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

int srv_fixture_open(void **state, struct server_options opt)
{
	struct srv_fixture *f = calloc(1, sizeof(*f));
	if (!f || store_open(":memory:", 0, &f->store) < 0)
		return -1;
	if (!opt.listen)
		opt.listen = "127.0.0.1:0";
	opt.signal_fd = -1;
	if (server_open(f->store, &opt, &f->srv) < 0)
		return -1;
	*state = f;
	return 0;
}

int srv_fixture_teardown(void **state)
{
	struct srv_fixture *f = *state;
	server_close(f->srv);
	store_close(f->store);
	free(f);
	return 0;
}

void client_open(struct client *c, struct server *srv)
{
	client_open_from(c, srv, NULL);
}

void client_open_from(struct client *c, struct server *srv, const char *src)
{
	memset(c, 0, sizeof(*c));
	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(c->fd >= 0);
	if (src) {
		struct sockaddr_in me = {.sin_family = AF_INET};
		assert_int_equal(inet_pton(AF_INET, src, &me.sin_addr), 1);
		assert_int_equal(bind(c->fd, (struct sockaddr *)&me, sizeof(me)), 0);
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(server_port(srv))};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	assert_int_equal(connect(c->fd, (struct sockaddr *)&sa, sizeof(sa)), 0); /* the backlog accepts it */
	assert_int_equal(frame_decoder_init(&c->dec, SRVCLIENT_MAX_FRAME), 0);
}

void client_close(struct client *c)
{
	close(c->fd);
	frame_decoder_free(&c->dec);
}

void client_send(struct client *c, const void *buf, size_t len)
{
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t n = send(c->fd, p, len, MSG_NOSIGNAL);
		assert_true(n > 0);
		p += n;
		len -= (size_t)n;
	}
}

/* Append env as a frame to a growing buffer (several frames in one write). */
void frames_add(uint8_t **buf, size_t *len, const Prof__Envelope *env)
{
	uint8_t *f;
	size_t flen;
	assert_int_equal(frame_encode(env, SRVCLIENT_MAX_FRAME, &f, &flen), 0);
	*buf = realloc(*buf, *len + flen);
	assert_non_null(*buf);
	memcpy(*buf + *len, f, flen);
	*len += flen;
	free(f);
}

/* Next envelope from the server, stepping the server loop while waiting.
 * NULL at EOF. Caller frees. */
Prof__Envelope *client_next(struct client *c, struct server *srv)
{
	for (int tries = 0; tries < 400; tries++) {
		const uint8_t *p;
		size_t len;
		if (frame_decoder_next(&c->dec, &p, &len) == 1) {
			char err[160];
			Prof__Envelope *env = envelope_decode(p, len, err, sizeof(err));
			assert_non_null(env);
			return env;
		}
		if (c->eof)
			return NULL;
		size_t avail;
		uint8_t *dst = frame_decoder_space(&c->dec, &avail);
		assert_non_null(dst);
		ssize_t n = recv(c->fd, dst, avail, MSG_DONTWAIT);
		if (n > 0) {
			frame_decoder_commit(&c->dec, (size_t)n);
			continue;
		}
		if (n == 0 || (n < 0 && errno == ECONNRESET)) {
			c->eof = true;
			continue;
		}
		assert_true(errno == EAGAIN || errno == EWOULDBLOCK);
		assert_true(server_step(srv, 5) >= 0);
	}
	fail_msg("no answer from the server");
	return NULL;
}

uint64_t expect_ack(struct client *c, struct server *srv)
{
	Prof__Envelope *env = client_next(c, srv);
	assert_non_null(env);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ACK);
	uint64_t seq = env->ack->seq;
	prof__envelope__free_unpacked(env, NULL);
	return seq;
}

/* Read acks until one says want (acks may coalesce). */
void expect_ack_reaching(struct client *c, struct server *srv, uint64_t want)
{
	for (int i = 0; i < 100; i++) {
		uint64_t seq = expect_ack(c, srv);
		assert_true(seq <= want);
		if (seq == want)
			return;
	}
	fail_msg("ack %llu never came", (unsigned long long)want);
}

/* An Error envelope (checked to contain text), then EOF. */
void expect_error_and_close(struct client *c, struct server *srv, const char *text)
{
	Prof__Envelope *env;
	while ((env = client_next(c, srv)) && env->body_case == PROF__ENVELOPE__BODY_ACK)
		prof__envelope__free_unpacked(env, NULL);
	assert_non_null(env);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_ERROR);
	if (!strstr(env->error->message, text))
		fail_msg("error '%s' does not contain '%s'", env->error->message, text);
	prof__envelope__free_unpacked(env, NULL);
	assert_null(client_next(c, srv));
}

void add_hello_frame(uint8_t **buf, size_t *len, const struct hello_spec *hs)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = hs->schema ? hs->schema : PROF_SCHEMA_VERSION;
	h.agent_id = (char *)hs->agent;
	h.boot_id = hs->boot;
	if (hs->board)
		h.board = (char *)hs->board;
	if (hs->hostname)
		h.hostname = (char *)hs->hostname;
	if (hs->mac) {
		h.auth.data = (uint8_t *)hs->mac;
		h.auth.len = hs->mac_len;
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	frames_add(buf, len, &env);
}

void add_counters(uint8_t **buf, size_t *len, uint64_t seq)
{
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT;
	Prof__EventDesc *evp = &ev;
	ev.id = 1;
	ev.name = "cycles";
	uint32_t id = 1;
	uint64_t t = 1000, v = seq * 100;
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = seq == 1;
	c.new_events = &evp;
	c.n_event_ids = 1;
	c.event_ids = &id;
	c.n_t_ns = 1;
	c.t_ns = &t;
	c.n_values = 1;
	c.values = &v;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	frames_add(buf, len, &env);
}

void send_and_free(struct client *c, uint8_t **buf, size_t *len)
{
	client_send(c, *buf, *len);
	free(*buf);
	*buf = NULL;
	*len = 0;
}
