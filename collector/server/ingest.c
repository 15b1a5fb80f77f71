/* Per-connection protocol state machine: Hello first, then records. */
#include "ingest.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"
#include "ingest_snap.h"
#include "net.h"
#include "validate.h"
#include "report/text_safe.h"
#include "store/store_kinds.h"

/* Copy s into out replacing control characters, so that wire strings cannot
 * split or forge log lines. */
void ingest_init(struct ingest_conn *c, struct store *store, const char *peer)
{
	memset(c, 0, sizeof(*c));
	c->store = store;
	snprintf(c->peer, sizeof(c->peer), "%s", peer ? peer : "?");
}

void ingest_set_auth(struct ingest_conn *c, const struct auth_token *token, const uint8_t *nonce)
{
	c->token = token;
	memcpy(c->nonce, nonce, sizeof(c->nonce));
}

/* The Hello proves the token (or none is required). */
static int check_auth(struct ingest_conn *c, const Prof__Hello *h)
{
	if (!c->token)
		return 0;
	char id[96];
	text_safe_copy(id, sizeof(id), h->agent_id);
	if (h->auth.len == 0)
		return ingest_fail(c, INGEST_PROTOCOL, EACCES, true,
				   "authentication required: agent %s sent no token proof; this collector runs "
				   "with --token-file: start the agent with --token-file FILE holding the same token",
				   id);
	int rc = auth_verify(c->token, c->nonce, sizeof(c->nonce), h->agent_id, h->boot_id, h->auth.data,
			     h->auth.len);
	if (rc == -EACCES)
		return ingest_fail(c, INGEST_PROTOCOL, EACCES, true,
				   "authentication failed: agent %s proved a different token (HMAC mismatch): "
				   "give the agent the collector's --token-file",
				   id);
	if (rc < 0)
		return ingest_fail(c, INGEST_STORE, (uint32_t)-rc, false, "cannot check the token: %s",
				   strerror(-rc));
	return 0;
}

void ingest_free(struct ingest_conn *c)
{
	ingest_snap_free(c);
	free(c->agent_id);
	c->agent_id = NULL;
	free(c->hello);
	c->hello = NULL;
	c->hello_len = 0;
}

int ingest_fail(struct ingest_conn *c, enum ingest_failure kind, uint32_t code, bool send_error,
		const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->err, sizeof(c->err), fmt, ap);
	va_end(ap);
	c->failure = kind;
	c->err_code = code;
	c->send_error = send_error;
	return -(int)code;
}

const char *ingest_who(const struct ingest_conn *c, char *buf, size_t len)
{
	char id[96];
	text_safe_copy(id, sizeof(id), c->agent_id);
	if (c->hello_done && c->session_id)
		snprintf(buf, len, "agent %s session %lld", id, (long long)c->session_id);
	else if (c->hello_done)
		snprintf(buf, len, "agent %s, session row at its first record", id);
	else if (c->agent_id && c->failure == INGEST_PROTOCOL)
		snprintf(buf, len, "agent %s, Hello refused", id);
	else if (c->agent_id)
		snprintf(buf, len, "agent %s, Hello not answered", id);
	else
		snprintf(buf, len, "no Hello yet");
	return buf;
}

/* The store is unavailable: refuse what needs it, with the time to retry after. */
static int ingest_retry(struct ingest_conn *c, uint32_t wait_ms, const char *what)
{
	c->retry_after_ms = wait_ms;
	return ingest_fail(c, INGEST_RETRY, EAGAIN, true,
			   "store unavailable: %s refused, nothing stored; keep the records and retry after %u.%u s",
			   what, wait_ms / 1000u, (wait_ms % 1000u) / 100u);
}

static int on_hello(struct ingest_conn *c, const Prof__Hello *h)
{
	if (c->hello_done)
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true, "second Hello on the same connection");
	if (h->schema_version != PROF_SCHEMA_VERSION) {
		free(c->agent_id);
		c->agent_id = strdup(h->agent_id); /* for the log line; NULL on ENOMEM is fine */
		return ingest_fail(
		    c, INGEST_PROTOCOL, EPROTONOSUPPORT, true,
		    "schema version %u not supported (collector speaks %u): upgrade the collector or "
		    "the agent",
		    h->schema_version, PROF_SCHEMA_VERSION);
	}
	int rc = check_auth(c, h);
	if (rc == 0 && c->admit)
		rc = c->admit(c->admit_arg, c, h);
	if (rc < 0) {
		free(c->agent_id);
		c->agent_id = strdup(h->agent_id); /* for the log line */
		return rc;
	}
	char *id = strdup(h->agent_id); /* non-empty and bounded: validate.c */
	size_t hlen = prof__hello__get_packed_size(h); /* bounded by the frame it came in */
	uint8_t *blob = malloc(hlen ? hlen : 1);
	if (!id || !blob) {
		free(id);
		free(blob);
		return ingest_fail(c, INGEST_STORE, ENOMEM, false, "out of memory");
	}
	prof__hello__pack(h, blob);
	free(c->agent_id);
	c->agent_id = id; /* the Hello arrived: log lines name the agent from here on */
	snprintf(c->hostname, sizeof(c->hostname), "%s", h->hostname ? h->hostname : "");
	uint32_t wait_ms = c->store_retry_ms ? c->store_retry_ms(c->admit_arg) : 0;
	if (wait_ms) {
		free(blob);
		return ingest_retry(c, wait_ms, "Hello");
	}
	uint64_t max_seq = 0;
	int64_t sid = 0;
	rc = store_session_find(c->store, h->agent_id, h->boot_id, &sid, &max_seq);
	if (rc < 0) {
		free(blob);
		return ingest_fail(c, INGEST_STORE, (uint32_t)-rc, false, "cannot look the session up: %s",
				   store_strerror(rc));
	}
	c->hello = blob;
	c->hello_len = hlen;
	c->boot_id = h->boot_id;
	c->session_id = sid;
	c->session_created = rc == 0;
	c->hello_done = true;
	c->seq_hi = max_seq;
	c->ack_due = true; /* the Hello is always answered */
	return 0;
}

/* The first ledger record: the session's row is created (or its connect counted). */
static int open_session(struct ingest_conn *c)
{
	Prof__Hello *h = prof__hello__unpack(NULL, c->hello_len, c->hello);
	if (!h)
		return ingest_fail(c, INGEST_STORE, ENOMEM, false, "cannot unpack the kept Hello");
	uint64_t max_seq = 0;
	int64_t sid = 0;
	bool created = false;
	int rc = store_session_open(c->store, h, c->peer, &sid, &max_seq, &created);
	prof__hello__free_unpacked(h, NULL);
	if (rc < 0)
		return ingest_fail(c, INGEST_STORE, (uint32_t)-rc, false, "cannot open the session: %s",
				   store_strerror(rc));
	c->session_id = sid;
	c->session_created = created;
	c->session_open = true;
	if (max_seq > c->seq_hi) /* another collector of a shared database stored more meanwhile */
		c->seq_hi = max_seq;
	free(c->hello);
	c->hello = NULL;
	c->hello_len = 0;
	return 0;
}

int ingest_record(struct ingest_conn *c, const Prof__Envelope *env, size_t frame_bytes)
{
	const char *kind = envelope_kind(env);
	if (!c->hello_done)
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true, "%s record (seq %llu) before Hello",
				   kind, (unsigned long long)env->seq);
	if (c->seq_window && env->seq > c->seq_hi && env->seq - c->seq_hi > c->seq_window)
		return ingest_fail(c, INGEST_PROTOCOL, ERANGE, true,
				   "%s record seq %llu is more than %llu above the session's highest stored seq "
				   "%llu: refused, nothing stored (agents number records 1, 2, 3, ...; if the "
				   "agent's spool dropped more records than that, raise --seq-window)",
				   kind, (unsigned long long)env->seq, (unsigned long long)c->seq_window,
				   (unsigned long long)c->seq_hi);
	uint32_t wait_ms = c->store_retry_ms ? c->store_retry_ms(c->admit_arg) : 0;
	if (wait_ms) {
		if (env->seq == 0)
			return 0; /* a heartbeat: the connection lives on, nothing to store */
		return ingest_retry(c, wait_ms, "record");
	}
	if (!c->session_open) {
		if (env->seq == 0 && !c->session_id)
			return 0; /* a heartbeat before any record of a new session: no row to update */
		if (env->seq != 0) {
			int orc = open_session(c);
			if (orc < 0)
				return orc;
		}
	}
	/* Above every seq known stored for the session (the store's at Hello and this connection's):
	 * sent ahead, no round trip per record on PostgreSQL; a replay's seqs go the exact way. */
	int rc = env->seq > c->seq_hi ? store_put_record_ahead(c->store, c->session_id, env, frame_bytes)
				      : store_put_record(c->store, c->session_id, env, frame_bytes);
	if (rc == -ERANGE)
		return ingest_fail(c, INGEST_PROTOCOL, EINVAL, true,
				   "%s record seq %llu: seq or timestamps beyond 2^63 (after delta decoding)",
				   kind, (unsigned long long)env->seq);
	if (rc < 0)
		return ingest_fail(c, INGEST_STORE, (uint32_t)-rc, false, "cannot store %s record seq %llu: %s",
				   kind, (unsigned long long)env->seq, store_strerror(rc));
	if (env->seq == 0)
		return 0; /* heartbeat outside the ledger: nothing to ack */
	if (rc == 1)
		c->stored++;
	else
		c->duplicates++;
	c->proven = true;
	if (env->seq > c->seq_hi)
		c->seq_hi = env->seq;
	c->ack_due = true; /* duplicates too: a replaying agent can drop them */
	return 0;
}

int ingest_envelope(struct ingest_conn *c, const Prof__Envelope *env, size_t frame_bytes)
{
	if (c->failure != INGEST_OK)
		return -EPIPE;
	switch (env->body_case) {
	case PROF__ENVELOPE__BODY_HELLO:
		return on_hello(c, env->hello);
	case PROF__ENVELOPE__BODY_ACK:
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true,
				   "agent sent an Ack (seq %llu): only the collector acks",
				   (unsigned long long)env->ack->seq);
	case PROF__ENVELOPE__BODY_CHALLENGE:
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true,
				   "agent sent a Challenge: only the collector challenges");
	case PROF__ENVELOPE__BODY_PAGE_REQUEST:
	case PROF__ENVELOPE__BODY_SNAPSHOT_DONE:
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true, "agent sent a %s: only the collector asks for pages",
				   envelope_kind(env));
	case PROF__ENVELOPE__BODY_TRACE_SNAPSHOT: /* issue 36: a board window replayed here */
		return ingest_snap_begin(c, env->trace_snapshot, clock_mono_ns());
	case PROF__ENVELOPE__BODY_PAGES:
		return ingest_snap_pages(c, env->pages);
	case PROF__ENVELOPE__BODY_ERROR: {
		char msg[200];
		text_safe_copy(msg, sizeof(msg), env->error->message);
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, false, "agent sent Error %u: %s",
				   env->error->code, msg);
	}
	default:
		if (store_kind_find(env->body_case))
			return ingest_record(c, env, frame_bytes);
		return ingest_fail(c, INGEST_PROTOCOL, EINVAL, true, "envelope without a body");
	}
}

static size_t varint_size(size_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

int ingest_frame(struct ingest_conn *c, const uint8_t *payload, size_t len)
{
	if (c->failure != INGEST_OK)
		return -EPIPE;
	char why[200];
	Prof__Envelope *env = envelope_decode(payload, len, why, sizeof(why));
	if (!env)
		return ingest_fail(c, INGEST_PROTOCOL, EINVAL, true, "invalid envelope: %s", why);
	int rc = ingest_envelope(c, env, len + varint_size(len));
	prof__envelope__free_unpacked(env, NULL);
	return rc;
}

int ingest_take_ack(struct ingest_conn *c, uint64_t *seq)
{
	if (!c->ack_due)
		return 0;
	c->ack_due = false;
	c->seq_acked = c->seq_hi;
	*seq = c->seq_hi;
	return 1;
}

static int pack_frame(const Prof__Envelope *env, uint8_t *buf, size_t cap)
{
	size_t body = prof__envelope__get_packed_size(env);
	uint8_t hdr[FRAME_VARINT_MAX];
	size_t h = frame_put_varint(hdr, (uint32_t)body);
	if (body > UINT32_MAX || h + body > cap)
		return -ENOBUFS;
	memcpy(buf, hdr, h);
	prof__envelope__pack(env, buf + h);
	return (int)(h + body);
}

int ingest_pack_ack(uint64_t seq, uint8_t *buf, size_t cap)
{
	return ingest_pack_ack_store(seq, NULL, buf, cap);
}

int ingest_pack_ack_store(uint64_t seq, const char *store_id, uint8_t *buf, size_t cap)
{
	Prof__Ack ack = PROF__ACK__INIT;
	ack.seq = seq;
	if (store_id && store_id[0])
		ack.store_id = (char *)store_id;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ACK;
	env.ack = &ack;
	return pack_frame(&env, buf, cap);
}

int ingest_pack_error(uint32_t code, const char *message, uint32_t retry_after_ms, uint8_t *buf, size_t cap)
{
	Prof__Error err = PROF__ERROR__INIT;
	err.code = code;
	err.retry_after_ms = retry_after_ms;
	err.message = (char *)message;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ERROR;
	env.error = &err;
	return pack_frame(&env, buf, cap);
}

int ingest_pack_challenge(const uint8_t *nonce, size_t len, uint8_t *buf, size_t cap)
{
	Prof__Challenge ch = PROF__CHALLENGE__INIT;
	ch.nonce.data = (uint8_t *)nonce;
	ch.nonce.len = len;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_CHALLENGE;
	env.challenge = &ch;
	return pack_frame(&env, buf, cap);
}
