/* The collector's epoll loop: accept, read frames, batch commits, acks. */
#include "server.h"

#include <errno.h>
#include <netinet/in.h>
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

#define READ_BUDGET (64u * 1024u)	  /* per connection per loop iteration: fairness */
#define DRAIN_BUDGET (4u * 1024u * 1024u) /* per connection when stopping */
#define OUT_CAP 2048u			  /* acks are ~14 bytes, an Error < 300 */
#define BATCH_MAX_RECORDS 4096u
#define BATCH_MAX_NS (50u * 1000u * 1000u)
#define MAX_EVENTS 256
#define ACCEPT_PER_ITERATION 64
#define SWEEP_NS (250u * 1000u * 1000u) /* how often Hello deadlines are checked */

struct conn {
	struct conn *prev, *next;
	int fd;
	bool closing;  /* close at the end of this iteration (after commit and acks) */
	bool want_out; /* EPOLLOUT registered */
	bool ack_pending;
	uint64_t ack_seq; /* latest ack not yet in out[]: acks coalesce here */
	size_t out_off, out_len;
	uint8_t out[OUT_CAP];
	struct frame_decoder dec;
	struct ingest_conn ing;
	uint64_t accepted_ns;
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

static void want_output(struct server *s, struct conn *c, bool on)
{
	if (c->want_out == on)
		return;
	if (epoll_set(s, EPOLL_CTL_MOD, c->fd, (c->throttled ? 0 : EPOLLIN) | (on ? EPOLLOUT : 0), c) == 0)
		c->want_out = on;
}

/* Send what is buffered; the pending ack enters the buffer only once it is
 * empty, so a peer that does not read gets its acks coalesced. */
static int conn_flush(struct server *s, struct conn *c)
{
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
		ssize_t w =
		    send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w > 0) {
			c->out_off += (size_t)w;
			continue;
		}
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			want_output(s, c, true);
			return 0;
		}
		int err = w < 0 ? errno : EPIPE;
		if (!c->closing) {
			char b[128];
			log_info("%s (%s): cannot send: %s; closing", c->ing.peer, who(c, b, sizeof(b)),
				 strerror(err));
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
	epoll_ctl(s->epfd, EPOLL_CTL_DEL, c->fd, NULL);
	close(c->fd);
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
		if (c->out_len > c->out_off)
			(void)!send(c->fd, c->out + c->out_off, c->out_len - c->out_off,
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
	c->fd = fd;
	ingest_init(&c->ing, s->store, peer);
	c->ing.admit = admit_hello;
	c->ing.admit_arg = s;
	c->accepted_ns = clock_mono_ns();
	c->refill_ns = c->accepted_ns;
	c->tokens = s->max_rate;
	if (epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, c) < 0) {
		log_error("%s: epoll: %s; closing the connection", peer, strerror(errno));
		frame_decoder_free(&c->dec);
		free(c);
		close(fd);
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
	log_info("%s: connected (%u connections)", peer, s->nconns);
	if (s->token)
		send_challenge(s, c);
}

static void refuse(struct server *s, int fd, const char *peer)
{
	char msg[160];
	uint8_t buf[256];
	snprintf(msg, sizeof(msg),
		 "collector has reached its connection limit (%u): retry later or raise --max-conns",
		 s->max_conns);
	int n = ingest_pack_error(EBUSY, msg, buf, sizeof(buf));
	if (n > 0)
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
		epoll_set(s, EPOLL_CTL_MOD, c->fd, c->want_out ? EPOLLOUT : 0, c);
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
		ssize_t n = read(c->fd, p, avail);
		if (n > 0) {
			frame_decoder_commit(&c->dec, (size_t)n);
			budget -= (size_t)n;
			conn_frames(s, c);
			continue;
		}
		if (n == 0) {
			conn_eof(s, c);
			return;
		}
		if (errno == EINTR)
			continue;
		if (errno == EAGAIN || errno == EWOULDBLOCK)
			return;
		char b[128];
		log_info("%s (%s): receive failed: %s; closing", c->ing.peer, who(c, b, sizeof(b)),
			 strerror(errno));
		c->closing = true;
		return;
	}
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
		 "--max-sessions-per-agent, %llu throttled by --max-rate, %llu refused by --max-conns",
		 (unsigned long long)s->stats.auth_failed, (unsigned long long)s->stats.hello_timeouts,
		 (unsigned long long)s->stats.over_per_agent, (unsigned long long)s->stats.throttled,
		 (unsigned long long)s->stats.refused);
}

/* Peers that sent no Hello in time (silent or byte-at-a-time) give their slot back. */
static void sweep_hello_deadlines(struct server *s, uint64_t now)
{
	if (now < s->next_sweep_ns)
		return;
	s->next_sweep_ns = now + SWEEP_NS;
	for (struct conn *c = s->conns; c; c = c->next) {
		if (c->closing || c->ing.hello_done || c->ing.failure != INGEST_OK ||
		    now - c->accepted_ns < s->hello_timeout_ns)
			continue;
		s->stats.hello_timeouts++;
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
		epoll_set(s, EPOLL_CTL_MOD, c->fd, EPOLLIN | (c->want_out ? EPOLLOUT : 0), c);
		if (!c->closing)
			conn_read(s, c, READ_BUDGET);
	}
}

/* The epoll timeout: the caller's, shortened for the next throttle resume and Hello sweep. */
static int step_timeout(struct server *s, int timeout_ms, uint64_t now)
{
	uint64_t next = UINT64_MAX;
	for (struct conn *c = s->conns; c && s->nthrottled > 0; c = c->next)
		if (c->throttled && c->resume_ns < next)
			next = c->resume_ns;
	for (struct conn *c = s->conns; c; c = c->next)
		if (!c->ing.hello_done && !c->closing) {
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
			if (evs[i].events & EPOLLOUT)
				conn_flush(s, c);
			if ((evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !c->throttled)
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
	sweep_hello_deadlines(s, now);
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
	int rc = 0;
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
	log_info("listening on %s (%s; limits: frame %zu KiB, %s records/s and %u connections per agent id, "
		 "Hello within %llu ms)",
		 s->addr, s->token ? "token required" : "no token", s->max_frame / 1024, rate, s->max_per_agent,
		 (unsigned long long)(s->hello_timeout_ns / 1000000u));
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
	free(s);
}
