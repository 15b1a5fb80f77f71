/* Non-blocking TCP client of the collector. Never blocks the caller's poll
 * loop: connect with a timeout, send Hello, wait for the Ack that answers it
 * (the replay point), replay the spooled records above it (after a retry
 * hint, one record first: the rest follow once it is acked), then stream new ones; read Acks and delete
 * acked spool segments. On any error: log once, reconnect with exponential
 * backoff (100 ms doubling to 5 s, jittered), reset only when a record is
 * acked (not by the Hello's ack); an Error with retry_after_ms delays the next
 * attempt at least that long. A Hello answered below a seq acked before (ack
 * regression) is logged loudly and the spool re-sent from there.
 * Optionally over TLS (common/stream.h), handshake first.
 * Every record goes into the spool before it is sent (transport_submit). */
#ifndef AGENT_TRANSPORT_H
#define AGENT_TRANSPORT_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

#include "auth.h"
#include "spool.h"

#define TRANSPORT_BACKOFF_MIN_NS 100000000ull  /* 100 ms */
#define TRANSPORT_BACKOFF_MAX_NS 5000000000ull /* 5 s */
#define TRANSPORT_CONNECT_TIMEOUT_NS 3000000000ull
#define TRANSPORT_HELLO_TIMEOUT_NS 10000000000ull
/* With a token: how long to wait for the collector's Challenge before sending
 * the Hello without a proof (a collector without --token-file sends none). */
#define TRANSPORT_CHALLENGE_WAIT_NS 1000000000ull

struct transport_stats {
	uint64_t bytes_sent;
	uint64_t bytes_received;
	uint64_t records_sent;     /* frames written whole to a socket (replays count again) */
	uint64_t records_replayed; /* of which re-read from the spool (written there while no connection
				    * was up, or faster than the socket took them) */
	uint64_t records_resent;   /* of which written whole on an earlier connection that was lost
				    * before they were acked (sent again after a reconnect) */
	uint64_t connects;         /* Hellos acked */
	uint64_t failures;         /* connection attempts or connections that failed */
	uint64_t acked;            /* highest seq the collector committed */
	uint64_t acks_refused;     /* acks above every seq this transport was given: connection closed */
	uint64_t ack_regressions;  /* Hellos answered below a seq acked before (logged, re-sent from the spool) */
	uint64_t retry_hints;      /* Errors with retry_after_ms (collector's store unavailable) obeyed */
};

struct transport;

/* hostport: "HOST:PORT". hello: a whole frame (copied). Starts disconnected;
 * the first attempt happens at the first transport_process(). */
int transport_create(struct transport **out, const char *hostport, struct spool *spool, const uint8_t *hello,
		     size_t hello_len, size_t max_frame, char *err, size_t errlen);
void transport_destroy(struct transport *t);
/* Prove this token when the collector challenges (copied). Call before the
 * first transport_process(). */
void transport_set_token(struct transport *t, const struct auth_token *token);
/* Speak TLS and accept only a collector certificate that chains to a CA in
 * ca_file and names the HOST of HOST:PORT. -ENOTSUP without CONFIG_TLS; err
 * gets a user-facing reason. Call before the first transport_process(). */
int transport_set_tls_ca(struct transport *t, const char *ca_file, char *err, size_t errlen);
/* Both of the above from the agent's options: TLS when ca_file, the token of
 * token_file when set (NULL: neither). 0 or -errno with err set. */
int transport_secure(struct transport *t, const char *ca_file, const char *token_file, char *err, size_t errlen);

/* Append the record to the spool, then send it if the connection is caught
 * up (otherwise the replay picks it up from the spool). Returns 0 or the
 * spool's -errno (the record could not be kept). An Ack above every seq given
 * here (and in the spool) is refused: logged, the connection closed, the spool
 * untouched, a reconnect scheduled. */
int transport_submit(struct transport *t, uint64_t seq, const uint8_t *frame, size_t len);

/* Before poll(): the socket (fd -1 if none) and events to wait for; returns
 * the milliseconds until the transport's next deadline, or -1 for none. */
int transport_poll_prepare(struct transport *t, struct pollfd *pfd, uint64_t now_ns);
/* After poll() (revents 0 when only a timer fired): connect, read, write,
 * time out. Returns 0, or a negative errno when retrying cannot help
 * (transport_error() says why): -EPROTONOSUPPORT schema version mismatch,
 * -EACCES missing or wrong token, -EKEYREJECTED the collector's certificate
 * failed verification, -EPROTO TLS on one side only. */
int transport_process(struct transport *t, short revents, uint64_t now_ns);

/* Board snapshots (issue 36, proto/snapshot.proto): the collector's PageRequest is answered
 * by pages() (0 with *out filled, pointing into ctx's memory until the next call; <0: every
 * page ESRCH) as a live Pages frame (seq 0, never spooled), its SnapshotDone goes to done().
 * Without them every page is answered ESRCH (no such snapshot) and SnapshotDone ignored. */
typedef int (*transport_pages_fn)(void *ctx, const Prof__PageRequest *req, Prof__Pages *out);
typedef void (*transport_done_fn)(void *ctx, uint32_t snapshot_id);
void transport_set_snapshots(struct transport *t, transport_pages_fn pages, transport_done_fn done, void *ctx);

/* Send a TraceSnapshot frame live on the current connection (never spooled: the snapshot dies
 * with it). The collector stores its window as the record window_seq, a seq reserved for it and
 * never submitted (session_next_seq): counted as given here, so that its ack is believed.
 * 0, -ENOTCONN when not streaming (take no window), or -ENOMEM. */
int transport_send_snapshot(struct transport *t, uint64_t window_seq, const uint8_t *frame, size_t len);

bool transport_streaming(const struct transport *t); /* Hello acked on the current connection */
const struct transport_stats *transport_get_stats(const struct transport *t);
const char *transport_error(const struct transport *t);
const char *transport_peer(const struct transport *t);
/* The identity of the collector's store, as the ack of the last Hello said ("" before it, or from a
 * collector older than issue 39). */
const char *transport_store_id(const struct transport *t);

#endif
