/* Internals of the agent's transport (transport.h): the connection state
 * (transport.c: connect, TLS, send, read) and what the collector's replies do
 * to it (transport_reply.c: Hello and its proof, Challenge, Ack, Error). Not
 * an API: include transport.h. */
#ifndef AGENT_TRANSPORT_PRIV_H
#define AGENT_TRANSPORT_PRIV_H

#include <stdbool.h>
#include <stdint.h>
#include <sys/socket.h>

#include "auth.h"
#include "frame.h"
#include "stream.h"
#include "tls.h"
#include "transport.h"

#define REFILL_BYTES (256u * 1024u)
#define DIRECT_MAX_PENDING (1024u * 1024u)

enum tstate { T_IDLE, T_CONNECTING, T_TLS, T_CHALLENGE, T_HELLO, T_STREAMING, T_FATAL };

struct transport {
	struct sockaddr_storage addr;
	socklen_t addrlen;
	char peer[80];
	char host[80]; /* HOST of HOST:PORT: what the TLS certificate must name */
	struct spool *spool;
	uint8_t *hello;
	size_t hello_len;
	size_t max_frame;

	enum tstate state;
	struct stream sock;
	struct tls_ctx *tls; /* NULL: plain TCP */
	uint64_t next_attempt_ns;
	uint64_t deadline_ns; /* connect, TLS handshake or Hello-ack timeout */
	uint64_t backoff_ns;
	uint64_t rng;
	bool fail_logged;
	bool retry_logged; /* a "cannot store now" line was logged for this outage */

	struct frame_decoder dec;
	uint8_t *out;
	size_t out_cap, out_len, out_off;
	uint64_t out_frames, out_replayed, out_resent;
	uint64_t out_max_seq; /* highest seq in out */
	uint64_t written_seq; /* highest seq whose frame a socket took whole, on any connection */
	uint64_t sent_seq; /* highest seq put into out on this connection */
	/* After a retry hint (the collector's store failing), until a record of the new
	 * connection is acked only one record is in flight: a collector whose store fails
	 * after acking the Hello costs one frame, not the whole backlog, per attempt
	 * (issue 31). */
	bool probing;
	bool probe_next;    /* a retry hint came: probe on the next connection */
	uint64_t hello_ack; /* the seq the Hello was answered with on this connection */
	char store_id[64];  /* the collector's store, from its acks ("" before one, or an older collector) */
	uint64_t created;   /* highest seq given to transport_submit (sent or not, spooled or not) */

	struct transport_stats st;
	char error[512];
	struct auth_token *token; /* NULL: send the Hello at once */
	int fatal_rc;
	transport_pages_fn snap_pages; /* board snapshots' pages (transport_set_snapshots) */
	transport_done_fn snap_done;
	void *snap_ctx;
};

/* transport.c */
uint64_t tr_next_rand(struct transport *t);
void tr_reset_conn(struct transport *t);
void tr_conn_fail(struct transport *t, uint64_t now, const char *what, int err);
int tr_out_append(struct transport *t, const uint8_t *data, size_t len);
/* transport_reply.c */
void tr_send_hello(struct transport *t, uint64_t now, const uint8_t *frame, size_t len);
int tr_hello_with_proof(struct transport *t, const Prof__Challenge *ch, uint8_t **frame, size_t *len);
int tr_on_envelope(struct transport *t, const Prof__Envelope *env, uint64_t now);

#endif
