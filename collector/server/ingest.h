/* Per-connection protocol state machine of the collector (no sockets): takes
 * the frames of one agent connection, enforces the conversation of
 * proto/README.md, writes records into the store's open batch and says when
 * an Ack is due (to be sent only after the batch is committed). */
#ifndef COLLECTOR_INGEST_H
#define COLLECTOR_INGEST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "profiler.pb-c.h"
#include "store/store.h"

enum ingest_failure {
	INGEST_OK,
	INGEST_PROTOCOL, /* the peer broke the protocol: send Error{err_code, err} (if send_error), close */
	INGEST_STORE,	 /* the store failed: roll the batch back, tell the agent to retry later, close */
	INGEST_RETRY,	 /* the store is unavailable: Error{EAGAIN, retry_after_ms}, close, nothing stored */
};

struct ingest_conn {
	struct store *store;
	char peer[64];
	char *agent_id;	    /* from Hello (bounded by validate.c), NULL before */
	char hostname[64];  /* from Hello (cut at 63 bytes), "" when it sent none */
	/* The session's row: found by the Hello (resumed), else created by the connection's
	 * first ledger record, so a Hello alone writes nothing (a crowd of Hellos leaves no
	 * rows). 0 until then. */
	int64_t session_id;
	bool hello_done;
	bool session_created; /* the session is new: created by this connection's first record */
	bool session_open;    /* the row is open for this connection (connects counted, peer noted) */
	/* Sent a valid ledger record (stored or a duplicate): an agent, as far as a peer
	 * without a token can show; until then the connection is evictable (server_limits.c). */
	bool proven;
	uint8_t *hello;	      /* the packed Hello until the session is open (its row's columns) */
	size_t hello_len;
	uint64_t boot_id;     /* from Hello, valid once hello_done */
	uint64_t seq_hi;      /* highest seq of the session known stored (after the batch commits) */
	/* A record with a seq more than seq_window above seq_hi is refused (Error{ERANGE}):
	 * acks follow seq_hi, so one forged seq would ack records never sent. 0: no check. */
	uint64_t seq_window;
	uint64_t seq_acked;   /* last seq acked */
	bool ack_due;	      /* an Ack{seq_hi} must follow the next commit */
	uint64_t stored;      /* records stored through this connection */
	uint64_t duplicates;  /* replayed records that were already stored */
	enum ingest_failure failure;
	bool send_error;   /* whether an Error envelope should answer the failure */
	uint32_t err_code; /* errno-style code for the Error envelope */
	char err[256];	   /* one-line reason of the failure */
	/* Authentication (ingest_set_auth): the Hello must carry HMAC(token, nonce ...). */
	const struct auth_token *token; /* NULL: no authentication; not owned */
	uint8_t nonce[AUTH_NONCE_LEN];
	/* Optional admission check of an (authenticated, well-formed) Hello before the
	 * session is opened: return 0, or a negative errno after ingest_fail(). */
	int (*admit)(void *arg, struct ingest_conn *c, const Prof__Hello *h);
	void *admit_arg;
	/* Optional: 0 while the store is available, else the milliseconds after which the
	 * agent may retry: a Hello or a record is then refused (INGEST_RETRY) without
	 * touching the store; a heartbeat (seq 0) is taken without the store. */
	uint32_t (*store_retry_ms)(void *arg);
	uint32_t retry_after_ms; /* for the Error of an INGEST_RETRY / INGEST_STORE failure */
	struct ingest_snaps *snaps; /* board snapshots being replayed (ingest_snap.h); NULL: none yet */
};

void ingest_init(struct ingest_conn *c, struct store *store, const char *peer);
void ingest_free(struct ingest_conn *c);
/* Require Hello.auth = HMAC-SHA256(token, nonce || agent_id || le64(boot_id)); nonce
 * (AUTH_NONCE_LEN bytes) is the one sent in this connection's Challenge. */
void ingest_set_auth(struct ingest_conn *c, const struct auth_token *token, const uint8_t *nonce);

/* Handle one frame payload (as returned by frame_decoder_next): decode,
 * validate, apply. Returns 0, or a negative errno with c->failure and c->err
 * set; after a failure the connection must be closed (further calls fail). */
int ingest_frame(struct ingest_conn *c, const uint8_t *payload, size_t len);
/* Same for an already decoded and validated envelope; frame_bytes is the
 * size on the wire (length prefix included). */
int ingest_envelope(struct ingest_conn *c, const Prof__Envelope *env, size_t frame_bytes);
/* A ledger record made here for the agent (a board snapshot's window, ingest_snap.c): stored
 * as if the agent had sent env (Hello done, seq window, session opened, ack due). 0 or a
 * negative errno with the failure set. */
int ingest_record(struct ingest_conn *c, const Prof__Envelope *env, size_t frame_bytes);
/* Mark a failure detected outside (framing, I/O): sets failure, err and
 * whether to send an Error. Returns -code. */
int ingest_fail(struct ingest_conn *c, enum ingest_failure kind, uint32_t code, bool send_error,
		const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* After the batch is committed: 1 and *seq if an Ack is due (and consider
 * it sent), 0 otherwise. */
int ingest_take_ack(struct ingest_conn *c, uint64_t *seq);

/* "agent X session N" or "no Hello yet", for log lines. */
const char *ingest_who(const struct ingest_conn *c, char *buf, size_t len);

/* Pack an Ack / Error envelope as a whole frame into buf[0..cap); returns the
 * frame length or -ENOBUFS. */
int ingest_pack_ack(uint64_t seq, uint8_t *buf, size_t cap);
/* The same carrying the store's identity (NULL or "": none, as older collectors). */
int ingest_pack_ack_store(uint64_t seq, const char *store_id, uint8_t *buf, size_t cap);
int ingest_pack_error(uint32_t code, const char *message, uint32_t retry_after_ms, uint8_t *buf, size_t cap);
int ingest_pack_challenge(const uint8_t *nonce, size_t len, uint8_t *buf, size_t cap);

#endif
