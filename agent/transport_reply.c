/* The agent's side of the conversation (transport_priv.h): the Hello (with
 * its proof when the collector challenges), and what each reply of the
 * collector does: Challenge, Ack (the spool drops what is committed), Error
 * (retry later, or give up with the reason). */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "transport_priv.h"
#include "validate.h"
#include "validate_snapshot.h"

void tr_send_hello(struct transport *t, uint64_t now, const uint8_t *frame, size_t len)
{
	t->state = T_HELLO;
	t->deadline_ns = now + TRANSPORT_HELLO_TIMEOUT_NS;
	tr_out_append(t, frame, len);
}

/* The Hello with auth = HMAC(token, nonce || agent_id || boot_id): re-encoded from the stored frame. */
int tr_hello_with_proof(struct transport *t, const Prof__Challenge *ch, uint8_t **frame, size_t *len)
{
	uint32_t body;
	int h = frame_get_varint(t->hello, t->hello_len, &body);
	if (h <= 0 || (size_t)h + body != t->hello_len)
		return -EINVAL;
	Prof__Envelope *env = prof__envelope__unpack(NULL, body, t->hello + h);
	if (!env || env->body_case != PROF__ENVELOPE__BODY_HELLO) {
		if (env)
			prof__envelope__free_unpacked(env, NULL);
		return -EINVAL;
	}
	uint8_t mac[AUTH_MAC_LEN];
	int rc =
	    auth_mac(t->token, ch->nonce.data, ch->nonce.len, env->hello->agent_id, env->hello->boot_id, mac);
	if (rc == 0) {
		ProtobufCBinaryData saved = env->hello->auth;
		env->hello->auth.data = mac;
		env->hello->auth.len = sizeof(mac);
		rc = frame_encode(env, t->max_frame, frame, len);
		env->hello->auth = saved;
	}
	prof__envelope__free_unpacked(env, NULL);
	return rc;
}

/* Connected (and TLS established where configured): the Challenge wait or the Hello. */

static bool contains_ci(const char *s, const char *word)
{
	size_t n = strlen(word);
	for (; s && *s; s++)
		if (strncasecmp(s, word, n) == 0)
			return true;
	return false;
}

void transport_set_snapshots(struct transport *t, transport_pages_fn pages, transport_done_fn done, void *ctx)
{
	t->snap_pages = pages;
	t->snap_done = done;
	t->snap_ctx = ctx;
}

/* A PageRequest: the pages (or ESRCH for each, with no snapshots here) as a live frame. */
static int tr_answer_pages(struct transport *t, const Prof__PageRequest *req, uint64_t now)
{
	Prof__Pages out, none = PROF__PAGES__INIT;
	uint32_t esrch[SNAPSHOT_REQ_PAGES];
	if (!t->snap_pages || t->snap_pages(t->snap_ctx, req, &out) < 0) {
		for (size_t i = 0; i < req->n_addr && i < SNAPSHOT_REQ_PAGES; i++)
			esrch[i] = ESRCH;
		none.snapshot_id = req->snapshot_id;
		none.addr = req->addr;
		none.n_addr = none.n_status = req->n_addr; /* <= SNAPSHOT_REQ_PAGES: validated on decode */
		none.status = esrch;
		out = none;
	}
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_PAGES;
	env.pages = &out;
	uint8_t *f = NULL;
	size_t len = 0;
	int rc = frame_encode(&env, t->max_frame, &f, &len);
	if (rc == 0)
		rc = tr_out_append(t, f, len);
	free(f);
	if (rc < 0) {
		tr_conn_fail(t, now, "cannot answer the collector's page request", -rc);
		return -EPIPE;
	}
	return 0;
}

/* One envelope from the collector. Returns 0, -EPIPE (connection dropped), or
 * -EPROTONOSUPPORT (fatal). */
int tr_on_envelope(struct transport *t, const Prof__Envelope *env, uint64_t now)
{
	if (env->body_case == PROF__ENVELOPE__BODY_CHALLENGE) {
		if (t->state != T_CHALLENGE) {
			/* No token (the collector will refuse the Hello and say why), or a late duplicate. */
			log_debug("collector %s: Challenge ignored (%s)", t->peer,
				  t->token ? "Hello already sent" : "this agent has no --token-file");
			return 0;
		}
		uint8_t *f = NULL;
		size_t len = 0;
		int rc = tr_hello_with_proof(t, env->challenge, &f, &len);
		if (rc < 0) {
			tr_conn_fail(t, now, "cannot answer the collector's Challenge", -rc);
			return -EPIPE;
		}
		tr_send_hello(t, now, f, len);
		free(f);
		log_debug("collector %s: Challenge answered, Hello sent", t->peer);
		return 0;
	}
	if (env->body_case == PROF__ENVELOPE__BODY_ACK) {
		uint64_t a = env->ack->seq;
		uint64_t last = spool_last_seq(t->spool), top = t->created > last ? t->created : last;
		if (a > top) {
			/* An ack of records this agent never made (forged, or a collector that lost track):
			 * trusting it would delete unacked records from the spool. */
			t->st.acks_refused++;
			log_error(
			    "collector %s acked seq %llu, but this agent's highest seq is %llu: refused, "
			    "nothing dropped from the spool; reconnecting (a forged ack, or a collector "
			    "whose store is not the one it acked into)",
			    t->peer, (unsigned long long)a, (unsigned long long)top);
			t->fail_logged = true; /* the line above is this outage's log line */
			tr_conn_fail(t, now, "ack above every record this agent sent", 0);
			return -EPIPE;
		}
		if (t->state == T_HELLO && a < t->st.acked) {
			/* The collector's store holds less than it acked before (restored from a backup, or a
			 * server without synchronous commit that crashed): those records may be lost. */
			t->st.ack_regressions++;
			log_error(
			    "collector %s: ACK REGRESSION: its store says seq %llu is the highest committed, "
			    "but "
			    "it acked up to %llu before: records %llu..%llu acked earlier may be lost there; "
			    "the earlier ack stands for this agent, re-sending from seq %llu what the spool "
			    "still holds (check the collector's --sync and its database's durability)",
			    t->peer, (unsigned long long)a, (unsigned long long)t->st.acked,
			    (unsigned long long)a + 1, (unsigned long long)t->st.acked,
			    (unsigned long long)a + 1);
		}
		if (a > t->st.acked)
			t->st.acked = a;
		if (t->state == T_HELLO)
			snprintf(t->store_id, sizeof(t->store_id), "%s", env->ack->store_id ? env->ack->store_id : "");
		spool_ack(t->spool, a);
		if (t->state == T_STREAMING && a > t->hello_ack) {
			/* A record of this connection is stored: the collector works, stream the rest. */
			t->probing = false;
			t->backoff_ns = TRANSPORT_BACKOFF_MIN_NS;
			t->retry_logged = false; /* the rest follows at this call's flush */
		}
		if (t->state == T_HELLO) {
			t->state = T_STREAMING;
			t->hello_ack = a;
			t->probing = t->probe_next;
			t->probe_next = false;
			uint64_t last = spool_last_seq(t->spool);
			t->sent_seq = a < last ? a : last;
			t->st.connects++;
			/* The backoff is reset when a record is acked, not here: a collector that answers
			 * Hellos but cannot store keeps this agent at its backoff rate. */
			uint64_t pending = last > t->sent_seq ? last - t->sent_seq : 0;
			if (t->fail_logged || t->st.connects == 1)
				log_info("connected to collector %s (committed up to seq %llu; %llu "
					 "record(s) to send)",
					 t->peer, (unsigned long long)a, (unsigned long long)pending);
			t->fail_logged = false;
		}
		return 0;
	}
	if (env->body_case == PROF__ENVELOPE__BODY_ERROR && env->error->snapshot_id) {
		/* One board snapshot refused (issue 36): it goes, the connection stays. */
		log_warn("collector %s: snapshot %u not replayed: %s", t->peer, env->error->snapshot_id,
			 env->error->message ? env->error->message : "");
		if (t->snap_done)
			t->snap_done(t->snap_ctx, env->error->snapshot_id);
		return 0;
	}
	if (env->body_case == PROF__ENVELOPE__BODY_ERROR && env->error->retry_after_ms > 0) {
		/* The collector cannot store now (its database is unavailable): not this agent's fault.
		 * Keep the records, wait at least as long as it says (plus jitter), say so once. */
		uint32_t ms = env->error->retry_after_ms > 600000u ? 600000u : env->error->retry_after_ms;
		const char *m = env->error->message ? env->error->message : "";
		if (!t->retry_logged)
			log_warn("collector %s cannot store now: %s; retrying in %u.%u s (records stay in "
				 "the spool)",
				 t->peer, m, ms / 1000u, (ms % 1000u) / 100u);
		else
			log_debug("collector %s cannot store now: %s", t->peer, m);
		t->retry_logged = true;
		t->fail_logged = true;
		t->probe_next = true; /* the next connection sends one record first */
		t->st.retry_hints++;
		tr_conn_fail(t, now, "collector's store unavailable", 0);
		uint64_t want = (uint64_t)ms * 1000000u;
		want += tr_next_rand(t) % (want / 4 + 1);
		if (t->next_attempt_ns < now + want)
			t->next_attempt_ns = now + want;
		return -EPIPE;
	}
	if (env->body_case == PROF__ENVELOPE__BODY_ERROR) {
		const char *m = env->error->message ? env->error->message : "";
		log_error("collector %s error %u: %s", t->peer, env->error->code, m);
		if (env->error->code == EACCES) {
			snprintf(t->error, sizeof(t->error),
				 "collector %s refused this agent (token authentication): %s", t->peer, m);
			tr_reset_conn(t);
			t->state = T_FATAL;
			t->fatal_rc = -EACCES;
			return -EACCES;
		}
		if (env->error->code == TLS_ERROR_CODE_REQUIRED) {
			snprintf(
			    t->error, sizeof(t->error),
			    "collector %s accepts TLS connections only (it said: %s); start the agent with "
			    "--tls-ca FILE (the CA that signed the collector's certificate)",
			    t->peer, m);
			tr_reset_conn(t);
			t->state = T_FATAL;
			t->fatal_rc = -EPROTO;
			return -EPROTO;
		}
		if (env->error->code == EPROTONOSUPPORT || contains_ci(m, "version")) {
			snprintf(
			    t->error, sizeof(t->error),
			    "collector %s refused this agent (schema version %u): %s; use an agent and a "
			    "collector built from the same proto/profiler.proto",
			    t->peer, PROF_SCHEMA_VERSION, m);
			tr_reset_conn(t);
			t->state = T_FATAL;
			t->fatal_rc = -EPROTONOSUPPORT;
			return -EPROTONOSUPPORT;
		}
		t->fail_logged = true; /* the error line above is the log line of this outage */
		tr_conn_fail(t, now, "collector reported an error", 0);
		return -EPIPE;
	}
	if (env->body_case == PROF__ENVELOPE__BODY_PAGE_REQUEST)
		return tr_answer_pages(t, env->page_request, now);
	if (env->body_case == PROF__ENVELOPE__BODY_SNAPSHOT_DONE) {
		if (t->snap_done)
			t->snap_done(t->snap_ctx, env->snapshot_done->snapshot_id);
		return 0;
	}
	char why[96];
	snprintf(why, sizeof(why), "unexpected '%s' record from the collector", envelope_kind(env));
	tr_conn_fail(t, now, why, 0);
	return -EPIPE;
}
