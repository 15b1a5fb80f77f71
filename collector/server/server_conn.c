/* Accepting connections and their state machine: read frames into ingest.c,
 * batch commits, acks after the COMMIT, final Error and close. */
#include "server_priv.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ingest_snap.h"
#include "log.h"
#include "net.h"
#include "tls.h"

const char *srv_who(const struct conn *c, char *buf, size_t len)
{
	return ingest_who(&c->ing, buf, len);
}

int srv_epoll_set(struct server *s, int op, int fd, uint32_t events, void *ptr)
{
	struct epoll_event ev = {.events = events, .data.ptr = ptr};
	if (epoll_ctl(s->epfd, op, fd, &ev) < 0)
		return -errno;
	return 0;
}

/* Register what the connection waits for: reading unless throttled, writing
 * when output is pending; over TLS either may need the other direction. */
void srv_conn_update_events(struct server *s, struct conn *c)
{
	short pe = stream_events(&c->st, !c->throttled, c->want_out);
	uint32_t ev = ((pe & POLLIN) ? EPOLLIN : 0u) | ((pe & POLLOUT) ? EPOLLOUT : 0u);
	if (ev != c->events && srv_epoll_set(s, EPOLL_CTL_MOD, c->st.fd, ev, c) == 0)
		c->events = ev;
}

static void want_output(struct server *s, struct conn *c, bool on)
{
	c->want_out = on;
	srv_conn_update_events(s, c);
}

/* Send what is buffered; the pending ack enters the buffer only once it is
 * empty, so a peer that does not read gets its acks coalesced. */
int srv_conn_flush(struct server *s, struct conn *c)
{
	if (c->st.handshaking)
		return 0; /* nothing is queued before the TLS handshake ends */
	for (;;) {
		if (c->out_off == c->out_len) {
			c->out_off = c->out_len = 0;
			if (c->ack_pending) {
				int n = ingest_pack_ack_store(c->ack_seq, s->store_id, c->out, OUT_CAP);
				if (n < 0)
					return n;
				c->out_len = (size_t)n;
				c->ack_pending = false;
			}
			/* then board snapshots' PageRequests / SnapshotDone / Errors (ingest_snap.c) */
			c->out_len += ingest_snap_take_out(&c->ing, c->out + c->out_len, OUT_CAP - c->out_len);
			if (c->out_len == 0)
				break;
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
			log_info("%s (%s): cannot send: %s; closing", c->ing.peer, srv_who(c, b, sizeof(b)),
				 stream_error(&c->st, -err));
			srv_conn_closing(s, c);
		}
		return -err;
	}
	want_output(s, c, false);
	return 0;
}

static void accept_resume(struct server *s)
{
	if (s->accept_paused && s->listen_fd >= 0 &&
	    srv_epoll_set(s, EPOLL_CTL_MOD, s->listen_fd, EPOLLIN, &s->listen_fd) == 0)
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
	srv_conn_leave(s, c);
	frame_decoder_free(&c->dec);
	ingest_free(&c->ing);
	if (c->throttled)
		s->nthrottled--;
	free(c);
	s->nconns--;
	accept_resume(s);
}

/* Final words (pending ack, then the Error if one is due), best effort, then close. */
void srv_conn_close(struct server *s, struct conn *c)
{
	srv_conn_flush(s, c);
	if (c->ing.failure != INGEST_OK && c->ing.send_error) {
		if (c->out_off == c->out_len && c->ack_pending) {
			int n = ingest_pack_ack_store(c->ack_seq, s->store_id, c->out, OUT_CAP);
			c->out_off = 0;
			c->out_len = n > 0 ? (size_t)n : 0;
		}
		int n = ingest_pack_error(c->ing.err_code, c->ing.err, c->ing.retry_after_ms, c->out + c->out_len,
					  OUT_CAP - c->out_len);
		if (n > 0)
			c->out_len += (size_t)n;
		if (c->out_len > c->out_off && c->st.tls && !c->st.handshaking)
			(void)stream_write(&c->st, c->out + c->out_off, c->out_len - c->out_off);
		else if (c->out_len > c->out_off) /* plain, or a plaintext peer on a TLS listener */
			(void)!send(c->st.fd, c->out + c->out_off, c->out_len - c->out_off,
				    MSG_NOSIGNAL | MSG_DONTWAIT);
	}
	char b[128];
	if (c->ing.failure == INGEST_RETRY || c->ing.failure == INGEST_STORE)
		log_debug("%s: %s disconnected (told to retry): %llu records stored, %llu duplicates", c->ing.peer,
			  srv_who(c, b, sizeof(b)), (unsigned long long)c->ing.stored,
			  (unsigned long long)c->ing.duplicates);
	else if (c->ing.hello_done)
		log_info("%s: %s disconnected: %llu records stored, %llu duplicates", c->ing.peer,
			 srv_who(c, b, sizeof(b)), (unsigned long long)c->ing.stored,
			 (unsigned long long)c->ing.duplicates);
	else
		log_info("%s: disconnected before Hello", c->ing.peer);
	conn_free(s, c);
}

/* The first frame of an authenticated connection: a fresh nonce to prove the token with. */
void srv_send_challenge(struct server *s, struct conn *c)
{
	uint8_t nonce[AUTH_NONCE_LEN];
	int rc = auth_random(nonce, sizeof(nonce));
	int n = rc < 0 ? rc : ingest_pack_challenge(nonce, sizeof(nonce), c->out, OUT_CAP);
	if (n < 0) {
		ingest_fail(&c->ing, INGEST_STORE, (uint32_t)-n, false, "cannot make a challenge: %s",
			    strerror(-n));
		log_error("%s: %s; closing the connection", c->ing.peer, c->ing.err);
		srv_conn_closing(s, c);
		return;
	}
	ingest_set_auth(&c->ing, s->token, nonce);
	c->out_off = 0;
	c->out_len = (size_t)n;
	srv_conn_flush(s, c);
}

/* The address without the port: the key of the per-address budget. */
static void format_host(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	const void *a = ss->ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)ss)->sin6_addr
						  : (const void *)&((const struct sockaddr_in *)ss)->sin_addr;
	if (!inet_ntop(ss->ss_family == AF_INET6 ? AF_INET6 : AF_INET, a, buf, (socklen_t)len))
		snprintf(buf, len, "?");
}

static void conn_new(struct server *s, int fd, const char *peer, const char *addr)
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
	c->ing.seq_window = s->seq_window;
	c->ing.admit = srv_admit_hello;
	c->ing.admit_arg = s;
	c->ing.store_retry_ms = srv_store_retry_ms;
	c->accepted_ns = clock_mono_ns();
	c->last_rx_ns = c->accepted_ns;
	c->refill_ns = c->accepted_ns;
	c->tokens = s->max_rate;
	c->events = EPOLLIN;
	int erc = srv_epoll_set(s, EPOLL_CTL_ADD, fd, EPOLLIN, c);
	if (erc == 0 && (erc = srv_conn_enter(s, c, addr)) < 0)
		epoll_ctl(s->epfd, EPOLL_CTL_DEL, fd, NULL);
	if (erc < 0) {
		log_error("%s: %s: %s; closing the connection", peer, erc == -ENOMEM ? "accounting" : "epoll",
			  strerror(-erc));
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
		srv_send_challenge(s, c); /* over TLS: once the handshake is done */
}

void srv_accept_some(struct server *s)
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
			if (srv_epoll_set(s, EPOLL_CTL_MOD, s->listen_fd, 0, &s->listen_fd) == 0)
				s->accept_paused = true;
			return;
		}
		char peer[64], addr[48];
		net_format_addr((struct sockaddr *)&ss, peer, sizeof(peer));
		format_host(&ss, addr, sizeof(addr));
		const char *why = srv_admit_conn(s, addr);
		if (why)
			srv_refuse(s, fd, peer, why);
		else
			conn_new(s, fd, peer, addr);
	}
}

/* The store reported damage (corrupt pages, an I/O error): nothing more is
 * written or acked, not even the acks of earlier commits still queued (the
 * agents replay those records to the recovered store, which keeps each once).
 * Every agent gets an Error and keeps its unacked records in its spool; the
 * loop stops (server_step returns -EUCLEAN) and the collector exits non-zero. */
static void stop_on_damage(struct server *s)
{
	if (s->store_damaged)
		return;
	s->store_damaged = true;
	log_error("the store reported damage while running (the store error above): stopped storing and acking; "
		  "the %u connected agent(s) keep their unacknowledged records in their spools and send them to "
		  "the next collector; copy what the store holds into a new one (`collector recover --store STORE "
		  "--out NEW`) and restart the collector with --store NEW",
		  s->nconns);
	for (struct conn *c = s->conns; c; c = c->next) {
		c->ing.ack_due = false;
		c->ack_pending = false;
		if (c->closing && c->ing.failure == INGEST_OK)
			continue;
		ingest_fail(&c->ing, INGEST_PROTOCOL, EIO, !c->st.handshaking,
			    "the collector's store is damaged: nothing more is stored; keep the records and retry "
			    "later");
		c->closing = true;
	}
}

/* Whatever the batch held for a connection is gone: its agents are told to retry
 * later and replay from what is really committed (server_store.c). */
static void batch_abort(struct server *s, int rc)
{
	store_rollback(s->store);
	if (store_damaged(s->store)) {
		stop_on_damage(s);
		return;
	}
	srv_store_failed(s, rc);
}

/* Records sent ahead were counted stored when sent (store_put_record_ahead returns 1); those a
 * redo then found already stored move to the duplicates (#40): the stop line's counts and their
 * connection's (its disconnect line), by the session the redo found them in. */
static void count_redone_duplicates(struct server *s)
{
	uint64_t redos, dups;
	store_ahead_redos(s->store, &redos, &dups);
	uint64_t d = dups - s->redo_dups_seen;
	s->redo_dups_seen = dups;
	d = d < s->stats.records ? d : s->stats.records;
	s->stats.records -= d;
	s->stats.duplicates += d;
	if (d == 0)
		return;
	for (struct conn *c = s->conns; c; c = c->next) {
		uint64_t cd = c->ing.session_id ? store_ahead_take_dups(s->store, c->ing.session_id) : 0;
		cd = cd < c->ing.stored ? cd : c->ing.stored;
		c->ing.stored -= cd;
		c->ing.duplicates += cd;
	}
	store_ahead_forget_dups(s->store);
}

/* Commit the open batch, then queue and send the acks it allows. */
void srv_batch_commit(struct server *s)
{
	if (store_in_tx(s->store)) {
		int rc = store_commit(s->store);
		count_redone_duplicates(s);
		if (rc < 0) {
			batch_abort(s, rc);
		} else {
			s->stats.commits++;
			srv_store_ok(s);
		}
	}
	for (struct conn *c = s->conns; c; c = c->next) {
		uint64_t seq;
		if (ingest_take_ack(&c->ing, &seq) == 1) {
			c->ack_pending = true;
			c->ack_seq = seq;
			if (!c->closing)
				srv_conn_flush(s, c);
		}
	}
}

static void batch_check(struct server *s)
{
	if (!store_in_tx(s->store))
		return;
	if (store_tx_records(s->store) >= BATCH_MAX_RECORDS ||
	    clock_mono_ns() - s->batch_start_ns >= BATCH_MAX_NS)
		srv_batch_commit(s);
}

void srv_conn_failed(struct server *s, struct conn *c)
{
	char b[128];
	srv_conn_closing(s, c);
	if (c->ing.failure == INGEST_RETRY) { /* the store is away: counted, told, not logged each time */
		s->stats.store_retry_told++;
		s->store_told++;
		log_debug("%s (%s): %s", c->ing.peer, srv_who(c, b, sizeof(b)), c->ing.err);
		return;
	}
	if (c->ing.failure == INGEST_STORE) { /* not the agent's fault: the outage is logged once */
		log_debug("%s (%s): %s", c->ing.peer, srv_who(c, b, sizeof(b)), c->ing.err);
		batch_abort(s, -(int)c->ing.err_code);
		return;
	}
	s->stats.closed_bad++;
	if (c->ing.err_code == ERANGE)
		s->stats.seq_refused++;
	if (c->ing.err_code == EACCES) {
		s->stats.auth_failed++;
		log_error("%s (%s): %s; closing the connection (%llu authentication failures so far)",
			  c->ing.peer, srv_who(c, b, sizeof(b)), c->ing.err, (unsigned long long)s->stats.auth_failed);
		return;
	}
	log_error("%s (%s): %s; closing the connection", c->ing.peer, srv_who(c, b, sizeof(b)), c->ing.err);
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
			srv_conn_failed(s, c);
			return;
		}
		bool was_hello = c->ing.hello_done, was_tx = store_in_tx(s->store);
		uint64_t stored = c->ing.stored, dups = c->ing.duplicates;
		rc = ingest_frame(&c->ing, payload, len);
		if (!was_tx && store_in_tx(s->store))
			s->batch_start_ns = clock_mono_ns();
		if (rc < 0) {
			srv_conn_failed(s, c);
			return;
		}
		s->stats.records += c->ing.stored - stored;
		s->stats.duplicates += c->ing.duplicates - dups;
		count_redone_duplicates(s);
		srv_conn_check_proven(s, c);
		if (was_hello)
			c->tokens -= 1.0;
		if (!was_hello && c->ing.hello_done) {
			char b[128];
			log_info("%s: %s (%s), highest committed seq %llu", c->ing.peer, srv_who(c, b, sizeof(b)),
				 c->ing.session_id ? "resumed" : "new",
				 (unsigned long long)c->ing.seq_hi);
		}
		batch_check(s);
	}
}

static void conn_eof(struct server *s, struct conn *c)
{
	char b[128];
	/* still gets the acks of this iteration: the peer may only have shut down writing */
	srv_conn_closing(s, c);
	if (frame_decoder_finish(&c->dec) < 0) {
		log_warn("%s (%s): %s; closing the connection", c->ing.peer, srv_who(c, b, sizeof(b)),
			 c->dec.err);
		s->stats.closed_bad++;
	}
}

void srv_conn_read(struct server *s, struct conn *c, size_t budget)
{
	while (budget > 0 && !c->closing) {
		if (srv_rate_exhausted(s, c))
			return;
		size_t want = frame_decoder_want(&c->dec);
		if (want > c->dec.cap && !srv_frame_room(s, c, want))
			return; /* paused until memory is free */
		size_t avail;
		uint8_t *p = frame_decoder_space(&c->dec, &avail);
		srv_frame_update(s, c);
		if (!p) {
			ingest_fail(&c->ing, INGEST_PROTOCOL, ENOMEM, true, "out of memory for a frame");
			srv_conn_failed(s, c);
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
				srv_conn_failed(s, c);
				return;
			}
			frame_decoder_commit(&c->dec, (size_t)n);
			budget -= (size_t)n;
			conn_frames(s, c);
			srv_frame_update(s, c); /* a kept Hello, or one given back */
			continue;
		}
		if (n == 0) {
			conn_eof(s, c);
			return;
		}
		if (n == -EAGAIN) {
			srv_conn_update_events(s, c); /* a TLS read may wait for writability */
			return;
		}
		char b[128];
		log_info("%s (%s): receive failed: %s; closing", c->ing.peer, srv_who(c, b, sizeof(b)),
			 stream_error(&c->st, (int)n));
		srv_conn_closing(s, c);
		return;
	}
}
