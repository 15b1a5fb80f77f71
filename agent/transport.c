#include "transport.h"

#include <ctype.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "transport_priv.h"
#include "validate.h"

int transport_create(struct transport **out, const char *hostport, struct spool *spool, const uint8_t *hello,
		     size_t hello_len, size_t max_frame, char *err, size_t errlen)
{
	*out = NULL;
	struct transport *t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	if (net_parse_hostport(hostport, &t->addr, &t->addrlen) < 0) {
		snprintf(err, errlen, "bad collector address '%s': expected HOST:PORT with an IPv4 address, "
				      "localhost or [IPv6] (e.g. 127.0.0.1:7412)", hostport);
		free(t);
		return -EINVAL;
	}
	net_format_addr((struct sockaddr *)&t->addr, t->peer, sizeof(t->peer));
	const char *h = hostport[0] == '[' ? hostport + 1 : hostport;
	const char *end = hostport[0] == '[' ? strchr(h, ']') : strrchr(h, ':');
	size_t hl = end ? (size_t)(end - h) : strlen(h);
	snprintf(t->host, sizeof(t->host), "%.*s", (int)(hl < sizeof(t->host) ? hl : sizeof(t->host) - 1), h);
	t->hello = malloc(hello_len);
	if (!t->hello || frame_decoder_init(&t->dec, max_frame) < 0) {
		free(t->hello);
		free(t);
		return -ENOMEM;
	}
	memcpy(t->hello, hello, hello_len);
	t->hello_len = hello_len;
	t->spool = spool;
	t->max_frame = max_frame;
	stream_init(&t->sock, -1);
	t->state = T_IDLE;
	t->next_attempt_ns = clock_mono_ns(); /* first attempt right away */
	t->backoff_ns = TRANSPORT_BACKOFF_MIN_NS;
	t->rng = clock_mono_ns() ^ ((uint64_t)getpid() << 32) ^ 0x9e3779b97f4a7c15ull;
	*out = t;
	return 0;
}

void transport_destroy(struct transport *t)
{
	if (!t)
		return;
	stream_close(&t->sock);
	tls_ctx_free(t->tls);
	frame_decoder_free(&t->dec);
	free(t->out);
	free(t->hello);
	if (t->token) {
		auth_token_wipe(t->token);
		free(t->token);
	}
	free(t);
}

void transport_set_token(struct transport *t, const struct auth_token *token)
{
	if (!t->token)
		t->token = malloc(sizeof(*t->token));
	if (t->token)
		*t->token = *token;
}

int transport_set_tls_ca(struct transport *t, const char *ca_file, char *err, size_t errlen)
{
	tls_ctx_free(t->tls);
	t->tls = NULL;
	return tls_ctx_client(&t->tls, ca_file, err, errlen);
}

int transport_secure(struct transport *t, const char *ca_file, const char *token_file, char *err, size_t errlen)
{
	int rc = ca_file ? transport_set_tls_ca(t, ca_file, err, errlen) : 0;
	if (rc < 0 || !token_file)
		return rc;
	struct auth_token *tok = malloc(sizeof(*tok));
	rc = tok ? auth_token_load(token_file, tok, err, errlen) : -ENOMEM;
	if (rc == 0)
		transport_set_token(t, tok);
	if (tok)
		auth_token_wipe(tok);
	free(tok);
	return rc;
}

bool transport_streaming(const struct transport *t) { return t->state == T_STREAMING; }
const struct transport_stats *transport_get_stats(const struct transport *t) { return &t->st; }
const char *transport_error(const struct transport *t) { return t->error; }
const char *transport_peer(const struct transport *t) { return t->peer; }
const char *transport_store_id(const struct transport *t) { return t->store_id; }

uint64_t tr_next_rand(struct transport *t)
{
	/* xorshift64*: jitter only. */
	t->rng ^= t->rng >> 12;
	t->rng ^= t->rng << 25;
	t->rng ^= t->rng >> 27;
	return t->rng * 2685821657736338717ull;
}

void tr_reset_conn(struct transport *t)
{
	stream_close(&t->sock);
	frame_decoder_free(&t->dec);
	frame_decoder_init(&t->dec, t->max_frame);
	t->out_len = t->out_off = 0;
	t->out_frames = t->out_replayed = t->out_resent = t->out_max_seq = 0;
}

/* The connection failed: log once per outage, schedule the next attempt. */
void tr_conn_fail(struct transport *t, uint64_t now, const char *what, int err)
{
	t->st.failures++;
	char msg[256];
	snprintf(msg, sizeof(msg), "%s%s%s", what, err ? ": " : "", err ? strerror(err) : "");
	if (!t->fail_logged) {
		log_warn("collector %s: %s; records stay in the spool, reconnecting with backoff (up to %llu s)",
			 t->peer, msg, TRANSPORT_BACKOFF_MAX_NS / 1000000000ull);
		t->fail_logged = true;
	} else {
		log_debug("collector %s: %s", t->peer, msg);
	}
	tr_reset_conn(t);
	t->state = T_IDLE;
	/* Jitter: 75..125 % of the current backoff, capped. */
	uint64_t delay = t->backoff_ns * 3 / 4 + tr_next_rand(t) % (t->backoff_ns / 2 + 1);
	if (delay > TRANSPORT_BACKOFF_MAX_NS)
		delay = TRANSPORT_BACKOFF_MAX_NS;
	t->next_attempt_ns = now + delay;
	t->backoff_ns *= 2;
	if (t->backoff_ns > TRANSPORT_BACKOFF_MAX_NS)
		t->backoff_ns = TRANSPORT_BACKOFF_MAX_NS;
}

static int out_reserve(struct transport *t, size_t more)
{
	if (t->out_off > 0 && t->out_off == t->out_len)
		t->out_off = t->out_len = 0;
	if (t->out_len + more <= t->out_cap)
		return 0;
	if (t->out_off > 0) {
		memmove(t->out, t->out + t->out_off, t->out_len - t->out_off);
		t->out_len -= t->out_off;
		t->out_off = 0;
		if (t->out_len + more <= t->out_cap)
			return 0;
	}
	size_t nc = t->out_cap ? t->out_cap : 64 * 1024;
	while (nc < t->out_len + more)
		nc *= 2;
	uint8_t *nb = realloc(t->out, nc);
	if (!nb)
		return -ENOMEM;
	t->out = nb;
	t->out_cap = nc;
	return 0;
}

int tr_out_append(struct transport *t, const uint8_t *data, size_t len)
{
	int rc = out_reserve(t, len);
	if (rc < 0)
		return rc;
	memcpy(t->out + t->out_len, data, len);
	t->out_len += len;
	return 0;
}

/* Queue spooled records above sent_seq (replay, or catching up). */
static int refill(struct transport *t)
{
	if (spool_last_seq(t->spool) <= t->sent_seq)
		return 0;
	if (t->probing && t->sent_seq > t->hello_ack)
		return 0; /* one record in flight until it is acked */
	struct spool_iter it;
	spool_iter_init(&it, t->spool, t->sent_seq);
	const uint8_t *f;
	size_t len;
	uint64_t seq;
	int rc;
	size_t queued = 0;
	while (queued < REFILL_BYTES && (rc = spool_iter_next(&it, &f, &len, &seq)) > 0) {
		if (tr_out_append(t, f, len) < 0) {
			rc = -ENOMEM;
			break;
		}
		queued += len;
		t->sent_seq = seq;
		t->out_frames++;
		t->out_replayed++;
		if (seq <= t->written_seq)
			t->out_resent++; /* written on an earlier connection and not acked there */
		if (seq > t->out_max_seq)
			t->out_max_seq = seq;
		if (t->probing)
			break;
	}
	spool_iter_free(&it);
	if (rc < 0) {
		log_warn("spool: replay read failed: %s", strerror(-rc));
		return rc;
	}
	if (rc == 0 && t->sent_seq < spool_last_seq(t->spool))
		t->sent_seq = spool_last_seq(t->spool); /* nothing left to read up to there */
	return 0;
}

/* Write what is pending; refill from the spool when streaming. */
static int flush(struct transport *t, uint64_t now)
{
	for (;;) {
		if (t->out_off == t->out_len) {
			t->st.records_sent += t->out_frames;
			t->st.records_replayed += t->out_replayed;
			t->st.records_resent += t->out_resent;
			if (t->out_max_seq > t->written_seq)
				t->written_seq = t->out_max_seq;
			t->out_frames = t->out_replayed = t->out_resent = t->out_max_seq = 0;
			t->out_off = t->out_len = 0;
			if (t->state != T_STREAMING)
				return 0;
			refill(t);
			if (t->out_len == 0)
				return 0;
		}
		ssize_t n = stream_write(&t->sock, t->out + t->out_off, t->out_len - t->out_off);
		if (n == -EAGAIN)
			return 0;
		if (n < 0) {
			char why[360];
			snprintf(why, sizeof(why), "send failed: %s", stream_error(&t->sock, (int)n));
			tr_conn_fail(t, now, why, 0);
			return -EPIPE;
		}
		t->out_off += (size_t)n;
		t->st.bytes_sent += (uint64_t)n;
	}
}

static void on_ready(struct transport *t, uint64_t now)
{
	t->out_len = t->out_off = 0;
	t->out_frames = t->out_replayed = t->out_resent = t->out_max_seq = 0;
	if (t->token) {
		t->state = T_CHALLENGE;
		t->deadline_ns = now + TRANSPORT_CHALLENGE_WAIT_NS;
		log_debug("collector %s: connected, waiting for its Challenge", t->peer);
		return;
	}
	t->state = T_HELLO;
	t->deadline_ns = now + TRANSPORT_HELLO_TIMEOUT_NS;
	t->out_len = t->out_off = 0;
	t->out_frames = t->out_replayed = t->out_resent = t->out_max_seq = 0;
	tr_out_append(t, t->hello, t->hello_len);
	log_debug("collector %s: connected, Hello sent", t->peer);
}

static void on_connected(struct transport *t, uint64_t now)
{
	int one = 1;
	setsockopt(t->sock.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (!t->tls) {
		on_ready(t, now);
		return;
	}
	int rc = stream_start_tls(&t->sock, t->tls, t->host);
	if (rc < 0) {
		tr_conn_fail(t, now, "cannot start TLS", -rc);
		return;
	}
	t->state = T_TLS;
	t->deadline_ns = now + TRANSPORT_HELLO_TIMEOUT_NS;
}

/* A configuration mismatch no retry can fix: stop with a clear error. */
static int fatal(struct transport *t, int rc, const char *fmt, const char *why)
{
	snprintf(t->error, sizeof(t->error), fmt, t->peer, why);
	tr_reset_conn(t);
	t->state = T_FATAL;
	t->fatal_rc = rc;
	return rc;
}

/* T_TLS: drive the handshake. Returns 0 or a fatal -errno. */
static int tls_progress(struct transport *t, uint64_t now)
{
	int rc = stream_handshake(&t->sock);
	if (rc == -EAGAIN) {
		if (now >= t->deadline_ns)
			tr_conn_fail(t, now, "TLS handshake timed out", 0);
		return 0;
	}
	if (rc == -EKEYREJECTED)
		return fatal(t, -EKEYREJECTED,
			     "collector %s: %s: refusing to send records; check that --tls-ca names the CA that "
			     "signed the collector's --tls-cert and that the certificate covers the address in "
			     "--collector",
			     stream_error(&t->sock, rc));
	if (rc == -EPROTO)
		return fatal(t, -EPROTO,
			     "collector %s: %s: the collector does not speak TLS here; start it with --tls-cert "
			     "and --tls-key, or run the agent without --tls-ca",
			     stream_error(&t->sock, rc));
	if (rc < 0) {
		char why[360];
		snprintf(why, sizeof(why), "%s", stream_error(&t->sock, rc));
		tr_conn_fail(t, now, why, 0);
		return 0;
	}
	char d[96];
	log_debug("collector %s: TLS established (%s), certificate verified for %s", t->peer,
		  tls_describe(t->sock.tls, d, sizeof(d)), t->host);
	on_ready(t, now);
	return 0;
}

static void start_connect(struct transport *t, uint64_t now)
{
	int fd = socket(t->addr.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		tr_conn_fail(t, now, "socket", errno);
		return;
	}
	stream_init(&t->sock, fd);
	if (connect(fd, (struct sockaddr *)&t->addr, t->addrlen) == 0) {
		on_connected(t, now);
		return;
	}
	if (errno != EINPROGRESS) {
		tr_conn_fail(t, now, "connect", errno);
		return;
	}
	t->state = T_CONNECTING;
	t->deadline_ns = now + TRANSPORT_CONNECT_TIMEOUT_NS;
}

static int do_read(struct transport *t, uint64_t now)
{
	for (;;) {
		size_t avail;
		uint8_t *dst = frame_decoder_space(&t->dec, &avail);
		if (!dst) {
			tr_conn_fail(t, now, "out of memory", ENOMEM);
			return -EPIPE;
		}
		ssize_t n = stream_read(&t->sock, dst, avail);
		if (n == -EAGAIN)
			break;
		if (n < 0) {
			char why[360];
			snprintf(why, sizeof(why), "receive failed: %s", stream_error(&t->sock, (int)n));
			tr_conn_fail(t, now, why, 0);
			return -EPIPE;
		}
		if (n == 0) {
			tr_conn_fail(t, now,
				     t->state != T_STREAMING ? "connection closed before the Hello was acked"
							     : "connection closed by the collector",
				     0);
			return -EPIPE;
		}
		frame_decoder_commit(&t->dec, (size_t)n);
		t->st.bytes_received += (uint64_t)n;
		const uint8_t *payload;
		size_t plen;
		int r;
		while ((r = frame_decoder_next(&t->dec, &payload, &plen)) > 0) {
			char err[200];
			Prof__Envelope *env = envelope_decode(payload, plen, err, sizeof(err));
			if (!env) {
				tr_conn_fail(t, now, err, 0);
				return -EPIPE;
			}
			int rc = tr_on_envelope(t, env, now);
			prof__envelope__free_unpacked(env, NULL);
			if (rc < 0)
				return rc;
		}
		if (r < 0) {
			char why[200];
			snprintf(why, sizeof(why), "bad frame from the collector: %s", t->dec.err);
			tr_conn_fail(t, now, why, 0);
			return -EPIPE;
		}
	}
	return 0;
}

int transport_submit(struct transport *t, uint64_t seq, const uint8_t *frame, size_t len)
{
	int rc = spool_append(t->spool, seq, frame, len);
	if (seq > t->created)
		t->created = seq;
	if (t->state == T_STREAMING && seq == t->sent_seq + 1 && t->out_len - t->out_off < DIRECT_MAX_PENDING &&
	    !(t->probing && t->sent_seq > t->hello_ack)) {
		if (tr_out_append(t, frame, len) == 0) {
			t->sent_seq = seq;
			t->out_frames++;
			t->out_max_seq = seq;
			flush(t, clock_mono_ns());
		}
	}
	return rc;
}

int transport_send_snapshot(struct transport *t, uint64_t window_seq, const uint8_t *frame, size_t len)
{
	if (t->state != T_STREAMING)
		return -ENOTCONN;
	int rc = tr_out_append(t, frame, len);
	if (rc < 0)
		return rc;
	if (window_seq > t->created) /* the collector's ack of the window is one of ours */
		t->created = window_seq;
	if (window_seq == t->sent_seq + 1 && spool_last_seq(t->spool) <= t->sent_seq)
		t->sent_seq = window_seq; /* caught up: the next record goes out directly */
	flush(t, clock_mono_ns());
	return 0;
}

int transport_poll_prepare(struct transport *t, struct pollfd *pfd, uint64_t now_ns)
{
	pfd->fd = -1;
	pfd->events = 0;
	pfd->revents = 0;
	uint64_t deadline = 0;
	switch (t->state) {
	case T_IDLE:
		deadline = t->next_attempt_ns;
		break;
	case T_CONNECTING:
		pfd->fd = t->sock.fd;
		pfd->events = POLLOUT;
		deadline = t->deadline_ns;
		break;
	case T_TLS:
		pfd->fd = t->sock.fd;
		pfd->events = stream_events(&t->sock, true, false);
		deadline = t->deadline_ns;
		break;
	case T_CHALLENGE:
	case T_HELLO:
		deadline = t->deadline_ns;
		/* fallthrough */
	case T_STREAMING:
		pfd->fd = t->sock.fd;
		pfd->events = stream_events(&t->sock, true,
					    t->out_off < t->out_len ||
						(t->state == T_STREAMING && spool_last_seq(t->spool) > t->sent_seq));
		break;
	case T_FATAL:
		return -1;
	}
	if (!deadline)
		return -1;
	if (deadline <= now_ns)
		return 0;
	uint64_t ms = (deadline - now_ns + 999999) / 1000000;
	return ms > 60000 ? 60000 : (int)ms;
}

int transport_process(struct transport *t, short revents, uint64_t now)
{
	switch (t->state) {
	case T_FATAL:
		return t->fatal_rc;
	case T_IDLE:
		if (now >= t->next_attempt_ns)
			start_connect(t, now);
		if (t->state == T_TLS)
			return tls_progress(t, now);
		if (t->state != T_HELLO && t->state != T_CHALLENGE)
			return 0;
		break;
	case T_TLS: {
		int rc = tls_progress(t, now);
		if (rc < 0 || t->state == T_TLS || t->state == T_IDLE)
			return rc;
		break;
	}
	case T_CONNECTING:
		if (revents & (POLLOUT | POLLERR | POLLHUP)) {
			int soerr = 0;
			socklen_t sl = sizeof(soerr);
			if (getsockopt(t->sock.fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) < 0)
				soerr = errno;
			if (soerr) {
				tr_conn_fail(t, now, "connect", soerr);
				return 0;
			}
			on_connected(t, now);
			if (t->state == T_TLS)
				return tls_progress(t, now);
			if (t->state == T_IDLE)
				return 0;
		} else if (now >= t->deadline_ns) {
			tr_conn_fail(t, now, "connect timed out", 0);
			return 0;
		} else {
			return 0;
		}
		break;
	default:
		break;
	}
	/* Connected (T_CHALLENGE, T_HELLO or T_STREAMING). Over TLS a read may
	 * wait for POLLOUT: any event can let it go on. */
	if (revents & (POLLIN | POLLERR | POLLHUP) || (t->sock.tls && revents)) {
		int rc = do_read(t, now);
		if (rc < 0 && t->state == T_FATAL)
			return rc;
		if (rc < 0)
			return 0;
	}
	if (t->state == T_CHALLENGE && now >= t->deadline_ns) {
		/* A collector without --token-file sends no Challenge: it takes a Hello without proof. */
		log_debug("collector %s: no Challenge within %llu ms: sending the Hello without a token proof",
			  t->peer, TRANSPORT_CHALLENGE_WAIT_NS / 1000000ull);
		tr_send_hello(t, now, t->hello, t->hello_len);
	}
	if (t->state == T_HELLO && now >= t->deadline_ns) {
		tr_conn_fail(t, now, "no answer to Hello", 0);
		return 0;
	}
	if (t->state == T_HELLO || t->state == T_STREAMING)
		flush(t, now);
	return 0;
}
