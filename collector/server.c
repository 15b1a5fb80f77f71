/* The collector's epoll loop: accept, read frames, batch commits, acks. */
#include "server.h"

#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <netinet/tcp.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <unistd.h>

#include "frame.h"
#include "generated/config.h"
#include "ingest.h"
#include "log.h"
#include "net.h"
#include "stream.h"
#include "tls.h"

#define READ_BUDGET (64u * 1024u)	  /* per connection per loop iteration: fairness */
#define DRAIN_BUDGET (4u * 1024u * 1024u) /* per connection when stopping */
#define OUT_CAP 2048u			  /* acks are ~14 bytes, an Error < 300 */
#define BATCH_MAX_RECORDS 4096u
#define BATCH_MAX_NS (50u * 1000u * 1000u)
#define MAX_EVENTS 256
#define ACCEPT_PER_ITERATION 64
#define SWEEP_NS (250u * 1000u * 1000u) /* how often Hello and idle deadlines are checked */

struct conn {
	struct conn *prev, *next;
	struct stream st; /* the socket, plain or TLS */
	uint32_t events;  /* registered with epoll */
	bool tls_checked; /* TLS listener: the first byte was seen to start a handshake */
	bool closing;  /* close at the end of this iteration (after commit and acks) */
	bool want_out; /* output pending: writing wanted */
	bool ack_pending;
	uint64_t ack_seq; /* latest ack not yet in out[]: acks coalesce here */
	size_t out_off, out_len;
	uint8_t out[OUT_CAP];
	struct frame_decoder dec;
	struct ingest_conn ing;
	uint64_t accepted_ns;
	uint64_t last_rx_ns; /* last bytes received: --idle-timeout */
	/* --max-rate: token bucket of records; reading pauses while it is empty */
	double tokens;
	uint64_t refill_ns, resume_ns;
	bool throttled, throttle_logged;
};

struct server {
	struct store *store;
	int epfd, listen_fd, stop_fd, signal_fd;
	int extra_fd; /* server_options.extra_fd, -1 for none */
	void (*extra_ready)(void *arg);
	void *extra_arg;
	uint16_t port;
	char addr[80];
	size_t max_frame;
	unsigned max_conns, nconns;
	struct conn *conns;
	bool stopping, stopped, accept_paused;
	uint64_t batch_start_ns;
	const struct auth_token *token;
	struct tls_ctx *tls; /* NULL: plain TCP listener */
	uint64_t idle_timeout_ns; /* 0: none */
	unsigned max_rate, max_per_agent, nthrottled;
	uint64_t hello_timeout_ns, next_sweep_ns;
	struct server_stats stats;
};

static const char *who(const struct conn *c, char *buf, size_t len)
{
	return ingest_who(&c->ing, buf, len);
}

static int epoll_set(struct server *s, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};
	if (epoll_ctl(s->epfd, op, fd, &ev) < 0)
		return -errno;
	return 0;
}

/* ---------------------------------------------------------------- output */

/* Register what the connection waits for: reading unless throttled, writing
 * when output is pending; over TLS either may need the other direction. */
static void conn_update_events(struct server *s, struct conn *c)
{
	short pe = stream_events(&c->st, !c->throttled, c->want_out);
	uint32_t ev = ((pe & POLLIN) ? EPOLLIN : 0u) | ((pe & POLLOUT) ? EPOLLOUT : 0u);
	if (ev != c->events && epoll_set(s, EPOLL_CTL_MOD, c->st.fd, ev, c) == 0)
		c->events = ev;
}

static void want_output(struct server *s, struct conn *c, bool on)
{
	c->want_out = on;
	conn_update_events(s, c);
}

/* Send what is buffered; the pending ack enters the buffer only once it is
 * empty, so a peer that does not read gets its acks coalesced. */
static int conn_flush(struct server *s, struct conn *c)
{
	if (c->st.handshaking)
		return 0; /* nothing is queued before the TLS handshake ends */
	for (;;) {
		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			if (!c->ack_pending)
				break;
			int n = ingest_pack_ack(c->ack_seq, c->out, OUT_CAP);
			if (n < 0)
				return n;
			c->out_len = (size_t)n;
			c->ack_pending = false;
		}
		ssize_t w = stream_write(&c->st, c->out + c->out_off, c->out_len - c->out_off);
		if (w > 0) {
			c->out_off += (size_t)w;
			continue;
		}
		if (w == -EAGAIN) {
			want_output(s, c, true);
			return 0;
		}
		int err = w < 0 ? (int)-w : EPIPE;
		if (!c->closing) {
			char b[128];
			log_info("%s (%s): cannot send: %s; closing", c->ing.peer, who(c, b, sizeof(b)),
				 stream_error(&c->st, -err));
			c->closing = true;
		}
		return -err;
	}
	want_output(s, c, false);
	return 0;
}

/* ---------------------------------------------------------------- connections */

static void accept_resume(struct server *s)
{
	if (s->accept_paused && s->listen_fd >= 0 &&
	    epoll_set(s, EPOLL_CTL_MOD, s->listen_fd, EPOLLIN, &s->listen_fd) == 0)
		s->accept_paused = false;
}

static void conn_free(struct server *s, struct conn *c)
{
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->st.fd, NULL);
	stream_close(&c->st);
	if (c->prev)
		c->prev->next = c->next;
	else
		s->conns = c->next;
	if (c->next)
		c->next->prev = c->prev;
	frame_decoder_free(&c->dec);
	ingest_free(&c->ing);
	if (c->throttled)
		s->nthrottled--;
	free(c);
	s->nconns--;
	accept_resume(s);
}

/* Final words (pending ack, then the Error if one is due), best effort, then close. */
static void conn_close(struct server *s, struct conn *c)
{
	conn_flush(s, c);
	if (c->ing.failure == INGEST_PROTOCOL && c->ing.send_error) {
		if (c->out_off == c->out_len && c->ack_pending) {
			int n = ingest_pack_ack(c->ack_seq, c->out, OUT_CAP);
			c->out_off = 0;
			c->out_len = n > 0 ? (size_t)n : 0;
		}
		int n =
		    ingest_pack_error(c->ing.err_code, c->ing.err, c->out + c->out_len, OUT_CAP - c->out_len);
		if (n > 0)
			c->out_len += (size_t)n;
		if (c->out_len > c->out_off && c->st.tls && !c->st.handshaking)
			(void)stream_write(&c->st, c->out + c->out_off, c->out_len - c->out_off);
		else if (c->out_len > c->out_off) /* plain, or a plaintext peer on a TLS listener */
			(void)!send(c->st.fd, c->out + c->out_off, c->out_len - c->out_off,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	char b[128];
	if (c->ing.hello_done)
		log_info("%s: %s disconnected: %llu records stored, %llu duplicates", c->ing.peer,
			 who(c, b, sizeof(b)), (unsigned long long)c->ing.stored,
			 (unsigned long long)c->ing.duplicates);
	else
		log_info("%s: disconnected before Hello", c->ing.peer);
	conn_free(s, c);
}

/* Hello admission (after authentication): at most max_per_agent open connections per agent id. */
static int admit_hello(void *arg, struct ingest_conn *ic, const Prof__Hello *h)
{
	struct server *s = arg;
	unsigned n = 0;
	for (struct conn *c = s->conns; c; c = c->next)
		if (&c->ing != ic && c->ing.hello_done && !c->closing && strcmp(c->ing.agent_id, h->agent_id) == 0)
			n++;
	if (n < s->max_per_agent)
		return 0;
	s->stats.over_per_agent++;
	return ingest_fail(ic, INGEST_PROTOCOL, EBUSY, true,
			   "agent id already has %u open connections (limit --max-sessions-per-agent %u): "
			   "do two agents use the same --agent-id? retrying later",
			   n, s->max_per_agent);
}

/* The first frame of an authenticated connection: a fresh nonce to prove the token with. */
static void send_challenge(struct server *s, struct conn *c)
{
	uint8_t nonce[AUTH_NONCE_LEN];
	int rc = auth_random(nonce, sizeof(nonce));
	int n = rc < 0 ? rc : ingest_pack_challenge(nonce, sizeof(nonce), c->out, OUT_CAP);
	if (n < 0) {
		ingest_fail(&c->ing, INGEST_STORE, (uint32_t)-n, false, "cannot make a challenge: %s",
			    strerror(-n));
		log_error("%s: %s; closing the connection", c->ing.peer, c->ing.err);
		c->closing = true;
		return;
	}
	ingest_set_auth(&c->ing, s->token, nonce);
	c->out_off = 0;
	c->out_len = (size_t)n;
	conn_flush(s, c);
}

static void conn_new(struct server *s, int fd, const char *peer)
{
	struct conn *c = calloc(1, sizeof(*c));
	if (!c || frame_decoder_init(&c->dec, s->max_frame) < 0) {
		log_error("%s: out of memory for a new connection; closing it", peer);
		if (c)
			frame_decoder_free(&c->dec);
		free(c);
		close(fd);
		return;
	}
	stream_init(&c->st, fd);
	if (s->tls && stream_start_tls(&c->st, s->tls, NULL) < 0) {
		log_error("%s: cannot start TLS (out of memory); closing the connection", peer);
		frame_decoder_free(&c->dec);
		stream_close(&c->st);
		free(c);
		return;
	}
	ingest_init(&c->ing, s->store, peer);
	c->ing.admit = admit_hello;
	c->ing.admit_arg = s;
	c->accepted_ns = clock_mono_ns();
	c->last_rx_ns = c->accepted_ns;
	c->refill_ns = c->accepted_ns;
	c->tokens = s->max_rate;
	c->events = EPOLLIN;
	int erc = epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, c);
	if (erc < 0) {
		log_error("%s: epoll: %s; closing the connection", peer, strerror(-erc));
		frame_decoder_free(&c->dec);
		ingest_free(&c->ing);
		stream_close(&c->st);
		free(c);
		return;
	}
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	c->next = s->conns;
	if (s->conns)
		s->conns->prev = c;
	s->conns = c;
	s->nconns++;
	s->stats.accepted++;
	log_info("%s: connected (%u connections)%s", peer, s->nconns, s->tls ? ", TLS handshake" : "");
	if (s->token && !s->tls)
		send_challenge(s, c); /* over TLS: once the handshake is done */
}

static void refuse(struct server *s, int fd, const char *peer)
{
	char msg[160];
	uint8_t buf[256];
	snprintf(msg, sizeof(msg),
		 "collector has reached its connection limit (%u): retry later or raise --max-conns",
		 s->max_conns);
	int n = ingest_pack_error(EBUSY, msg, buf, sizeof(buf));
	if (n > 0 && !s->tls) /* a TLS agent would read a plaintext Error as a broken handshake */
		(void)!send(fd, buf, (size_t)n, MSG_NOSIGNAL | MSG_DONTWAIT);
	close(fd);
	s->stats.refused++;
	log_warn("%s: refused: already %u connections (--max-conns %u)", peer, s->nconns, s->max_conns);
}

static void accept_some(struct server *s)
{
	for (int i = 0; i < ACCEPT_PER_ITERATION && s->listen_fd >= 0; i++) {
		struct sockaddr_storage ss;
		socklen_t sl = sizeof(ss);
		int fd = accept4(s->listen_fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED || errno == EPROTO)
				continue;
			if (errno == EAGAIN || errno == EWOULDBLOCK)
				return;
			log_warn(
			    "cannot accept a connection: %s: raise the open-files limit (ulimit -n) or lower "
			    "--max-conns; accepting again when a connection closes",
			    strerror(errno));
			if (epoll_set(s, EPOLL_CTL_MOD, s->listen_fd, 0, &s->listen_fd) == 0)
				s->accept_paused = true;
			return;
		}
		char peer[64];
		net_format_addr((struct sockaddr *)&ss, peer, sizeof(peer));
		if (s->nconns >= s->max_conns)
			refuse(s, fd, peer);
		else
			conn_new(s, fd, peer);
	}
}

/* ---------------------------------------------------------------- batches */

static void batch_abort(struct server *s)
{
	store_rollback(s->store);
	/* Whatever the batch held for a connection is gone: close those so their
	 * agents reconnect and replay from what is really committed. */
	for (struct conn *c = s->conns; c; c = c->next) {
		if (!c->ing.ack_due && c->ing.failure != INGEST_STORE)
			continue;
		c->ing.ack_due = false;
		if (!c->closing) {
			char b[128];
			log_warn("%s (%s): store batch rolled back; closing so that the agent replays",
				 c->ing.peer, who(c, b, sizeof(b)));
			c->closing = true;
		}
	}
}

/* Commit the open batch, then queue and send the acks it allows. */
static void batch_commit(struct server *s)
{
	if (store_in_tx(s->store)) {
		if (store_commit(s->store) < 0)
			batch_abort(s);
		else
			s->stats.commits++;
	}
	for (struct conn *c = s->conns; c; c = c->next) {
		uint64_t seq;
		if (ingest_take_ack(&c->ing, &seq) == 1) {
			c->ack_pending = true;
			c->ack_seq = seq;
			if (!c->closing)
				conn_flush(s, c);
		}
	}
}

static void batch_check(struct server *s)
{
	if (!store_in_tx(s->store))
		return;
	if (store_tx_records(s->store) >= BATCH_MAX_RECORDS ||
	    clock_mono_ns() - s->batch_start_ns >= BATCH_MAX_NS)
		batch_commit(s);
}

/* ---------------------------------------------------------------- input */

static void conn_failed(struct server *s, struct conn *c)
{
	char b[128];
	c->closing = true;
	if (c->ing.failure == INGEST_STORE) {
		log_error("%s (%s): %s; closing the connection", c->ing.peer, who(c, b, sizeof(b)),
			  c->ing.err);
		s->stats.closed_bad++;
		batch_abort(s);
		return;
	}
	s->stats.closed_bad++;
	if (c->ing.err_code == EACCES) {
		s->stats.auth_failed++;
		log_error("%s (%s): %s; closing the connection (%llu authentication failures so far)",
			  c->ing.peer, who(c, b, sizeof(b)), c->ing.err, (unsigned long long)s->stats.auth_failed);
		return;
	}
	log_error("%s (%s): %s; closing the connection", c->ing.peer, who(c, b, sizeof(b)), c->ing.err);
}

static void conn_frames(struct server *s, struct conn *c)
{
	while (!c->closing) {
		const uint8_t *payload;
		size_t len;
		int rc = frame_decoder_next(&c->dec, &payload, &len);
		if (rc == 0)
			return;
		if (rc < 0) {
			ingest_fail(&c->ing, INGEST_PROTOCOL, (uint32_t)-rc, true, "%s", c->dec.err);
			conn_failed(s, c);
			return;
		}
		bool was_hello = c->ing.hello_done, was_tx = store_in_tx(s->store);
		uint64_t stored = c->ing.stored, dups = c->ing.duplicates;
		rc = ingest_frame(&c->ing, payload, len);
		if (!was_tx && store_in_tx(s->store))
			s->batch_start_ns = clock_mono_ns();
		if (rc < 0) {
			conn_failed(s, c);
			return;
		}
		s->stats.records += c->ing.stored - stored;
		s->stats.duplicates += c->ing.duplicates - dups;
		if (was_hello)
			c->tokens -= 1.0;
		if (!was_hello && c->ing.hello_done) {
			char b[128];
			log_info("%s: %s (%s), highest committed seq %llu", c->ing.peer, who(c, b, sizeof(b)),
				 c->ing.session_created ? "new" : "resumed",
				 (unsigned long long)c->ing.seq_hi);
		}
		batch_check(s);
	}
}

static void conn_eof(struct server *s, struct conn *c)
{
	char b[128];
	c->closing =
	    true; /* still gets the acks of this iteration: the peer may only have shut down writing */
	if (frame_decoder_finish(&c->dec) < 0) {
		log_warn("%s (%s): %s; closing the connection", c->ing.peer, who(c, b, sizeof(b)),
			 c->dec.err);
		s->stats.closed_bad++;
	}
}

/* --max-rate: refill the bucket; when it is empty stop reading (the peer's
 * TCP window fills and it slows down) until it has refilled. */
static bool rate_exhausted(struct server *s, struct conn *c)
{
	if (s->max_rate == SERVER_UNLIMITED_RATE)
		return false;
	uint64_t now = clock_mono_ns();
	c->tokens += (double)(now - c->refill_ns) * 1e-9 * s->max_rate;
	if (c->tokens > s->max_rate)
		c->tokens = s->max_rate;
	c->refill_ns = now;
	if (c->tokens >= 0 || s->stopping)
		return false;
	uint64_t wait = (uint64_t)(-c->tokens / s->max_rate * 1e9) + 1000000u;
	c->resume_ns = now + wait;
	if (!c->throttled) {
		c->throttled = true;
		s->nthrottled++;
		s->stats.throttled++;
		conn_update_events(s, c);
		if (!c->throttle_logged) {
			char b[128];
			log_warn("%s (%s): more than --max-rate %u records/s: reading paused (throttled); "
				 "logged once per connection",
				 c->ing.peer, who(c, b, sizeof(b)), s->max_rate);
			c->throttle_logged = true;
		}
	}
	return true;
}

static void conn_read(struct server *s, struct conn *c, size_t budget)
{
	while (budget > 0 && !c->closing) {
		if (rate_exhausted(s, c))
			return;
		size_t avail;
		uint8_t *p = frame_decoder_space(&c->dec, &avail);
		if (!p) {
			ingest_fail(&c->ing, INGEST_PROTOCOL, ENOMEM, true, "out of memory for a frame");
			conn_failed(s, c);
			return;
		}
		if (avail > budget)
			avail = budget;
		ssize_t n = stream_read(&c->st, p, avail);
		if (n > 0) {
			c->last_rx_ns = clock_mono_ns();
			if (!s->tls && c->dec.bytes == 0 && tls_looks_like_client_hello(p, (size_t)n)) {
				s->stats.tls_failed++;
				/* The Error frame is no TLS record: the agent's handshake fails at once
				 * ("wrong version number") instead of retrying. */
				ingest_fail(&c->ing, INGEST_PROTOCOL, EPROTO, true,
					    "TLS handshake on a plaintext listener: the agent has --tls-ca but this "
					    "collector has no --tls-cert/--tls-key (%llu TLS failures so far)",
					    (unsigned long long)s->stats.tls_failed);
				conn_failed(s, c);
				return;
			}
			frame_decoder_commit(&c->dec, (size_t)n);
			budget -= (size_t)n;
			conn_frames(s, c);
			continue;
		}
		if (n == 0) {
			conn_eof(s, c);
			return;
		}
		if (n == -EAGAIN) {
			conn_update_events(s, c); /* a TLS read may wait for writability */
			return;
		}
		char b[128];
		log_info("%s (%s): receive failed: %s; closing", c->ing.peer, who(c, b, sizeof(b)),
			 stream_error(&c->st, (int)n));
		c->closing = true;
		return;
	}
}

/* TLS listener: a plaintext peer gets a plaintext Error; a TLS peer goes through the handshake. */
static void conn_handshake(struct server *s, struct conn *c)
{
	if (!c->tls_checked) {
		uint8_t b[2];
		ssize_t n = recv(c->st.fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n > 0 && !tls_looks_like_client_hello(b, (size_t)n)) {
			s->stats.tls_failed++;
			ingest_fail(&c->ing, INGEST_PROTOCOL, TLS_ERROR_CODE_REQUIRED, true,
				    "plaintext peer on a TLS listener (--tls-cert) (%llu TLS failures so far)",
				    (unsigned long long)s->stats.tls_failed);
			conn_failed(s, c);
			return;
		}
		c->tls_checked = n > 0; /* EOF or an error: the handshake says so below */
	}
	int rc = stream_handshake(&c->st);
	if (rc == -EAGAIN) {
		conn_update_events(s, c);
		return;
	}
	if (rc < 0) {
		s->stats.tls_failed++;
		s->stats.closed_bad++;
		log_error("%s: %s; closing the connection (%llu TLS failures so far)", c->ing.peer,
			  stream_error(&c->st, rc), (unsigned long long)s->stats.tls_failed);
		c->closing = true;
		return;
	}
	char d[96];
	log_info("%s: TLS established (%s)", c->ing.peer, tls_describe(c->st.tls, d, sizeof(d)));
	conn_update_events(s, c);
	if (s->token)
		send_challenge(s, c);
	if (!c->closing)
		conn_read(s, c, READ_BUDGET); /* a Hello may already sit in the library's buffer */
}

/* ---------------------------------------------------------------- loop */

static void read_stop_fd(struct server *s, int fd)
{
	union {
		struct signalfd_siginfo si;
		uint64_t counter;
		uint8_t raw[512];
	} u;
	ssize_t n = read(fd, &u, sizeof(u));
	if (fd == s->signal_fd && n == (ssize_t)sizeof(u.si))
		log_info("received %s: stopping (committing what is buffered)",
			 strsignal((int)u.si.ssi_signo));
	else
		log_info("stop requested: committing what is buffered");
	s->stopping = true;
}

static void stop_listening(struct server *s)
{
	if (s->listen_fd < 0)
		return;
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->listen_fd, NULL);
	close(s->listen_fd);
	s->listen_fd = -1;
}

static void end_iteration(struct server *s)
{
	batch_commit(s);
	struct conn *next;
	for (struct conn *c = s->conns; c; c = next) {
		next = c->next;
		if (c->closing)
			conn_close(s, c);
	}
}

static void drain_and_stop(struct server *s)
{
	stop_listening(s);
	for (struct conn *c = s->conns; c; c = c->next)
		if (!c->closing)
			conn_read(s, c, DRAIN_BUDGET);
	for (struct conn *c = s->conns; c; c = c->next)
		c->closing = true;
	end_iteration(s);
	s->stopped = true;
	log_info("stopped: %llu records stored, %llu duplicates, %llu connections, %llu closed for bad input",
		 (unsigned long long)s->stats.records, (unsigned long long)s->stats.duplicates,
		 (unsigned long long)s->stats.accepted, (unsigned long long)s->stats.closed_bad);
	log_info("stats: %llu authentication failures, %llu Hello timeouts, %llu refused by "
		 "--max-sessions-per-agent, %llu throttled by --max-rate, %llu refused by --max-conns, "
		 "%llu TLS failures, %llu idle timeouts",
		 (unsigned long long)s->stats.auth_failed, (unsigned long long)s->stats.hello_timeouts,
		 (unsigned long long)s->stats.over_per_agent, (unsigned long long)s->stats.throttled,
		 (unsigned long long)s->stats.refused, (unsigned long long)s->stats.tls_failed,
		 (unsigned long long)s->stats.idle_timeouts);
}

/* After the Hello: a peer silent for --idle-timeout (agents send a Heartbeat
 * every 10 s) gets an Error and is closed. Throttled ones are not read, so not idle. */
static void close_idle(struct server *s, struct conn *c, uint64_t now)
{
	if (!s->idle_timeout_ns || c->throttled || now - c->last_rx_ns < s->idle_timeout_ns)
		return;
	s->stats.idle_timeouts++;
	ingest_fail(&c->ing, INGEST_PROTOCOL, ETIMEDOUT, true,
		    "nothing received for %llu s (--idle-timeout; agents send a heartbeat every 10 s)",
		    (unsigned long long)((now - c->last_rx_ns) / 1000000000u));
	char b[128];
	log_warn("%s (%s): idle: %s; closing (%llu idle timeouts so far)", c->ing.peer, who(c, b, sizeof(b)),
		 c->ing.err, (unsigned long long)s->stats.idle_timeouts);
	c->closing = true;
}

/* Peers that sent no Hello in time (silent or byte-at-a-time, or stuck in
 * the TLS handshake) give their slot back; silent agents too (close_idle). */
static void sweep_deadlines(struct server *s, uint64_t now)
{
	if (now < s->next_sweep_ns)
		return;
	s->next_sweep_ns = now + SWEEP_NS;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->closing || c->ing.failure != INGEST_OK)
			continue;
		if (c->ing.hello_done) {
			close_idle(s, c, now);
			continue;
		}
		if (now - c->accepted_ns < s->hello_timeout_ns)
			continue;
		s->stats.hello_timeouts++;
		if (c->st.handshaking) {
			s->stats.tls_failed++;
			c->ing.send_error = false; /* no plaintext Error into a TLS handshake */
			s->stats.closed_bad++;
			c->closing = true;
			log_error("%s: TLS handshake not finished within %llu ms (--hello-timeout); closing the "
				  "connection (%llu TLS failures so far)",
				  c->ing.peer, (unsigned long long)(s->hello_timeout_ns / 1000000u),
				  (unsigned long long)s->stats.tls_failed);
			continue;
		}
		ingest_fail(&c->ing, INGEST_PROTOCOL, ETIMEDOUT, true,
			    "no Hello within %llu ms (%zu bytes received): silent or too slow peer",
			    (unsigned long long)(s->hello_timeout_ns / 1000000u), (size_t)c->dec.bytes);
		conn_failed(s, c);
	}
}

/* Throttled connections whose bucket has refilled read again. */
static void resume_throttled(struct server *s, uint64_t now)
{
	for (struct conn *c = s->conns; c && s->nthrottled > 0; c = c->next) {
		if (!c->throttled || (now < c->resume_ns && !s->stopping))
			continue;
		c->throttled = false;
		s->nthrottled--;
		c->last_rx_ns = now; /* paused by us, not idle */
		conn_update_events(s, c);
		if (!c->closing)
			conn_read(s, c, READ_BUDGET);
	}
}

/* TLS input the library holds decrypted (the read budget stopped before it
 * was taken): epoll does not report it, so it is read here. */
static bool tls_input_pending(const struct server *s)
{
	for (const struct conn *c = s->conns; c && s->tls; c = c->next)
		if (!c->closing && !c->throttled && stream_pending(&c->st))
			return true;
	return false;
}

static void read_tls_pending(struct server *s)
{
	for (struct conn *c = s->conns; c && s->tls; c = c->next)
		if (!c->closing && !c->throttled && stream_pending(&c->st))
			conn_read(s, c, READ_BUDGET);
}

/* The epoll timeout: the caller's, shortened for the next throttle resume,
 * Hello / idle sweep and buffered TLS input. */
static int step_timeout(struct server *s, int timeout_ms, uint64_t now)
{
	if (tls_input_pending(s))
		return 0;
	uint64_t next = UINT64_MAX;
	for (struct conn *c = s->conns; c && s->nthrottled > 0; c = c->next)
		if (c->throttled && c->resume_ns < next)
			next = c->resume_ns;
	for (struct conn *c = s->conns; c; c = c->next)
		if ((!c->ing.hello_done || s->idle_timeout_ns) && !c->closing) {
			if (s->next_sweep_ns < next)
				next = s->next_sweep_ns;
			break;
		}
	if (next == UINT64_MAX)
		return timeout_ms;
	int ms = next <= now ? 0 : (int)((next - now + 999999u) / 1000000u);
	return timeout_ms < 0 || ms < timeout_ms ? ms : timeout_ms;
}

int server_step(struct server *s, int timeout_ms)
{
	if (s->stopped)
		return 1;
	struct epoll_event evs[MAX_EVENTS];
	int n = epoll_wait(s->epfd, evs, MAX_EVENTS,
			   s->stopping ? 0 : step_timeout(s, timeout_ms, clock_mono_ns()));
	if (n < 0) {
		if (errno != EINTR) {
			int err = errno;
			log_error("epoll_wait: %s", strerror(err));
			return -err;
		}
		n = 0;
	}
	for (int i = 0; i < n; i++) {
		void *p = evs[i].data.ptr;
		if (p == &s->listen_fd) {
			if (!s->stopping)
				accept_some(s);
		} else if (p == &s->stop_fd) {
			read_stop_fd(s, s->stop_fd);
		} else if (p == &s->signal_fd) {
			read_stop_fd(s, s->signal_fd);
		} else if (p == &s->extra_fd) {
			s->extra_ready(s->extra_arg);
		} else {
			struct conn *c = p;
			if (c->closing)
				continue;
			if (c->st.handshaking) {
				conn_handshake(s, c);
				continue;
			}
			/* Over TLS a read may wait for EPOLLOUT and a write for EPOLLIN. */
			bool tls = c->st.tls != NULL;
			if ((evs[i].events & EPOLLOUT) || (tls && c->want_out))
				conn_flush(s, c);
			if (((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) || tls) && !c->throttled &&
			    !c->closing)
				conn_read(s, c, READ_BUDGET);
		}
	}
	if (s->stopping) {
		drain_and_stop(s);
		return 1;
	}
	uint64_t now = clock_mono_ns();
	if (s->nthrottled > 0)
		resume_throttled(s, now);
	read_tls_pending(s);
	sweep_deadlines(s, now);
	end_iteration(s);
	return 0;
}

int server_run(struct server *s)
{
	int rc;
	while ((rc = server_step(s, 1000)) == 0)
		;
	return rc < 0 ? rc : 0;
}

void server_request_stop(struct server *s)
{
	uint64_t one = 1;
	(void)!write(s->stop_fd, &one, sizeof(one));
}

void server_get_stats(const struct server *s, struct server_stats *st)
{
	*st = s->stats;
	st->conns = s->nconns;
}

uint16_t server_port(const struct server *s)
{
	return s->port;
}

/* ---------------------------------------------------------------- setup */

static bool is_loopback(const struct sockaddr_storage *ss)
{
	if (ss->ss_family == AF_INET)
		return (ntohl(((const struct sockaddr_in *)ss)->sin_addr.s_addr) >> 24) == 127;
	if (ss->ss_family == AF_INET6)
		return IN6_IS_ADDR_LOOPBACK(&((const struct sockaddr_in6 *)ss)->sin6_addr);
	return false;
}

static int listen_on(struct server *s, const char *spec)
{
	struct sockaddr_storage ss;
	socklen_t sl;
	if (net_parse_hostport(spec, &ss, &sl) < 0) {
		log_error(
		    "invalid listen address '%s': use HOST:PORT with an IP address, e.g. 127.0.0.1:7412",
		    spec ? spec : "(none)");
		return -EINVAL;
	}
	if (!is_loopback(&ss) && !s->token) {
		/* checked before binding: no socket ever listens there without a token */
		log_error("%s is not a loopback address: listening there requires --token-file FILE (agents "
			  "then prove the shared token); or listen on 127.0.0.1",
			  spec);
		return -EACCES;
	}
	int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		int err = errno;
		log_error("cannot create a socket for %s: %s", spec, strerror(err));
		return -err;
	}
	int one = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&ss, sl) < 0 || listen(fd, SOMAXCONN) < 0) {
		int err = errno;
		log_error("cannot listen on %s: %s: %s", spec, strerror(err),
			  err == EADDRINUSE ? "another collector running? pick another port in --listen"
					    : "check the address is one of this host's");
		close(fd);
		return -err;
	}
	sl = sizeof(ss);
	getsockname(fd, (struct sockaddr *)&ss, &sl);
	s->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
						 : ((struct sockaddr_in *)&ss)->sin_port);
	net_format_addr((struct sockaddr *)&ss, s->addr, sizeof(s->addr));
	s->listen_fd = fd;
	return 0;
}

int server_open(struct store *store, const struct server_options *opt, struct server **out)
{
	*out = NULL;
	struct server *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->store = store;
	s->listen_fd = s->stop_fd = s->epfd = -1;
	s->signal_fd = opt->signal_fd;
	s->max_conns = opt->max_conns ? opt->max_conns : SERVER_DEFAULT_MAX_CONNS;
	s->max_frame = opt->max_frame ? opt->max_frame : (size_t)CONFIG_MAX_FRAME_KB * 1024u;
	s->token = opt->token;
	s->max_rate = opt->max_rate ? opt->max_rate : SERVER_DEFAULT_MAX_RATE;
	s->max_per_agent = opt->max_sessions_per_agent ? opt->max_sessions_per_agent : SERVER_DEFAULT_MAX_PER_AGENT;
	s->hello_timeout_ns =
	    (uint64_t)(opt->hello_timeout_ms ? opt->hello_timeout_ms : SERVER_DEFAULT_HELLO_TIMEOUT_MS) * 1000000u;
	unsigned idle = opt->idle_timeout_ms ? opt->idle_timeout_ms : SERVER_DEFAULT_IDLE_TIMEOUT_MS;
	s->idle_timeout_ns = idle == SERVER_NO_IDLE_TIMEOUT ? 0 : (uint64_t)idle * 1000000u;
	int rc = 0;
	if (opt->tls_cert || opt->tls_key) {
		char err[512];
		if (!opt->tls_cert || !opt->tls_key) {
			log_error("TLS needs both --tls-cert FILE and --tls-key FILE");
			rc = -EINVAL;
		} else if ((rc = tls_ctx_server(&s->tls, opt->tls_cert, opt->tls_key, err, sizeof(err))) < 0) {
			log_error("%s", err);
		}
		if (rc < 0) {
			server_close(s);
			return rc;
		}
	}
	s->epfd = epoll_create1(EPOLL_CLOEXEC);
	s->stop_fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	if (s->epfd < 0 || s->stop_fd < 0) {
		rc = -errno;
		log_error("cannot create the event loop: %s", strerror(-rc));
	}
	if (rc == 0)
		rc = listen_on(s, opt->listen);
	if (rc == 0)
		rc = epoll_set(s, EPOLL_CTL_ADD, s->listen_fd, EPOLLIN, &s->listen_fd);
	if (rc == 0)
		rc = epoll_set(s, EPOLL_CTL_ADD, s->stop_fd, EPOLLIN, &s->stop_fd);
	if (rc == 0 && s->signal_fd >= 0)
		rc = epoll_set(s, EPOLL_CTL_ADD, s->signal_fd, EPOLLIN, &s->signal_fd);
	s->extra_fd = opt->extra_ready ? opt->extra_fd : -1;
	s->extra_ready = opt->extra_ready;
	s->extra_arg = opt->extra_arg;
	if (rc == 0 && s->extra_fd >= 0)
		rc = epoll_set(s, EPOLL_CTL_ADD, s->extra_fd, EPOLLIN, &s->extra_fd);
	if (rc < 0) {
		server_close(s);
		return rc;
	}
	char rate[32] = "unlimited";
	if (s->max_rate != SERVER_UNLIMITED_RATE)
		snprintf(rate, sizeof(rate), "%u", s->max_rate);
	char idle_s[32] = "never";
	if (s->idle_timeout_ns)
		snprintf(idle_s, sizeof(idle_s), "after %llu s", (unsigned long long)(s->idle_timeout_ns / 1000000000u));
	log_info("listening on %s (%s, %s; limits: frame %zu KiB, %s records/s and %u connections per agent id, "
		 "Hello within %llu ms, idle close %s)",
		 s->addr, s->tls ? "TLS" : "plain TCP", s->token ? "token required" : "no token", s->max_frame / 1024,
		 rate, s->max_per_agent, (unsigned long long)(s->hello_timeout_ns / 1000000u), idle_s);
	*out = s;
	return 0;
}

void server_close(struct server *s)
{
	if (!s)
		return;
	while (s->conns) {
		struct conn *c = s->conns;
		c->ing.send_error = false;
		conn_close(s, c);
	}
	store_rollback(s->store);
	stop_listening(s);
	if (s->signal_fd >= 0 && s->epfd >= 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, s->signal_fd, NULL);
	if (s->stop_fd >= 0)
		close(s->stop_fd);
	if (s->epfd >= 0)
		close(s->epfd);
	tls_ctx_free(s->tls);
	free(s);
}
