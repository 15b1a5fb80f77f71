#include "session.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "frame.h"
#include "generated/config.h"
#include "log.h"
#include "net.h"
#include "record.h"
#include "spool.h"
#include "spool_orphans.h"
#include "sysinfo.h"
#include "transport.h"

#define HEARTBEAT_NS 10000000000ull

struct session {
	struct session_opts o;
	unsigned (*snap_live)(void *ctx); /* board snapshots still served (session_set_snapshots) */
	void *snap_ctx;
	Prof__Hello *hello;
	struct spool *spool;
	struct transport *tr;
	struct orphans *orphans; /* what earlier runs left in the spool, sent beside this run's records */
	size_t max_frame;
	uint64_t base_ns;
	uint64_t seq;
	uint64_t not_spooled;
	uint64_t drop_gen;
	uint64_t dropped_seen;
	bool fatal;
	struct loop_timer heartbeat;
};

int session_open(struct session **out, const struct session_opts *o, char *err, size_t errlen)
{
	struct session *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	s->o = *o;
	s->max_frame = (size_t)CONFIG_MAX_FRAME_KB * 1024u;
	uint64_t boot_id = sysinfo_boot_id();
	s->base_ns = clock_mono_ns();
	struct sysinfo_opts so = {
		.agent_id = o->agent_id,
		.target = o->target,
		.boot_id = boot_id,
		.base_ns = s->base_ns,
		.realtime_ns = clock_real_ns(),
		.opencl = o->opencl_probe,
	};
	uint8_t *hello_frame = NULL;
	size_t hello_len = 0;
	int rc = sysinfo_hello_build(&so, &s->hello);
	if (rc < 0) {
		snprintf(err, errlen, "collecting system information: %s", strerror(-rc));
		goto fail;
	}
	rc = record_hello_frame(s->hello, s->max_frame, &hello_frame, &hello_len);
	if (rc < 0) {
		snprintf(err, errlen, "encoding Hello: %s", strerror(-rc));
		goto fail;
	}
	rc = spool_open(&s->spool, o->spool_dir, s->hello->agent_id, boot_id, (uint64_t)o->spool_mb << 20, 0, err,
			errlen);
	if (rc < 0)
		goto fail;
	rc = transport_create(&s->tr, o->collector, s->spool, hello_frame, hello_len, s->max_frame, err, errlen);
	if (rc < 0)
		goto fail;
	if ((rc = transport_secure(s->tr, o->tls_ca, o->token_file, err, errlen)) < 0)
		goto fail;
	/* If this run ends with records unacked, a later one sends them in this session. */
	spool_set_meta(s->spool, hello_frame, hello_len, o->collector);
	struct orphan_opts oo = {.spool_dir = o->spool_dir, .collector = o->collector, .agent_id = s->hello->agent_id,
				 .tls_ca = o->tls_ca, .token_file = o->token_file, .max_frame = s->max_frame};
	char oerr[256];
	if (orphans_open(&s->orphans, &oo, oerr, sizeof(oerr)) < 0)
		log_warn("spool: %s: records earlier runs left there are not sent by this run", oerr);
	free(hello_frame);
	*out = s;
	return 0;
fail:
	free(hello_frame);
	session_close(s);
	return rc;
}

const char *session_agent_id(const struct session *s)
{
	return s->hello->agent_id;
}

const char *session_store_id(const struct session *s)
{
	return s->tr ? transport_store_id(s->tr) : "";
}

uint64_t session_base_ns(const struct session *s)
{
	return s->base_ns;
}

size_t session_max_frame(const struct session *s)
{
	return s->max_frame;
}

void session_set_snapshots(struct session *s,
			   int (*pages)(void *ctx, const Prof__PageRequest *req, Prof__Pages *out),
			   void (*done)(void *ctx, uint32_t snapshot_id), unsigned (*live)(void *ctx), void *ctx)
{
	transport_set_snapshots(s->tr, pages, done, ctx);
	s->snap_live = live;
	s->snap_ctx = ctx;
}

bool session_streaming(const struct session *s)
{
	return transport_streaming(s->tr);
}

bool session_connect_pending(const struct session *s)
{
	const struct transport_stats *st = transport_get_stats(s->tr);
	return !transport_streaming(s->tr) && st->connects == 0 && st->failures == 0;
}

int session_send_snapshot(struct session *s, Prof__TraceSnapshot *msg)
{
	if (!transport_streaming(s->tr))
		return -ENOTCONN;
	msg->window_seq = session_next_seq(s); /* never submitted: the collector stores the window under it */
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_SNAPSHOT;
	env.trace_snapshot = msg;
	uint8_t *f = NULL;
	size_t len = 0;
	int rc = frame_encode(&env, s->max_frame, &f, &len);
	if (rc == 0)
		rc = transport_send_snapshot(s->tr, msg->window_seq, f, len);
	free(f);
	return rc;
}

uint64_t session_next_seq(struct session *s)
{
	return ++s->seq;
}

int session_submit_frame(struct session *s, uint64_t seq, uint8_t *frame, size_t len)
{
	int rc = transport_submit(s->tr, seq, frame, len);
	free(frame);
	if (rc < 0 && s->not_spooled++ == 0)
		log_warn("spool: cannot keep record %llu: %s (records that cannot be spooled are lost if the "
			 "connection drops)",
			 (unsigned long long)seq, strerror(-rc));
	if (spool_dropped(s->spool) != s->dropped_seen) {
		s->dropped_seen = spool_dropped(s->spool);
		s->drop_gen++; /* the dropped records may have held the only declarations */
	}
	return rc;
}

int session_send(struct session *s, Prof__Envelope *env)
{
	uint8_t *frame;
	size_t len;
	env->seq = s->seq + 1;
	int rc = frame_encode(env, s->max_frame, &frame, &len);
	if (rc < 0)
		return rc;
	return session_submit_frame(s, session_next_seq(s), frame, len);
}

bool session_would_drop(const struct session *s, size_t len)
{
	return spool_would_drop(s->spool, len);
}

uint64_t session_drop_generation(const struct session *s)
{
	return s->drop_gen;
}

int session_emit_sampled(void *session, Prof__Envelope *env)
{
	struct session *s = session;
	size_t len = prof__envelope__get_packed_size(env) + FRAME_VARINT_MAX + 10;
	if (session_would_drop(s, len))
		return -ESTALE;
	return session_send(s, env);
}

uint64_t session_generation_cb(void *session)
{
	return session_drop_generation(session);
}

bool session_fatal(const struct session *s)
{
	return s->fatal;
}

static void send_heartbeat(struct session *s, uint64_t now)
{
	Prof__Heartbeat hb = PROF__HEARTBEAT__INIT;
	hb.t_ns = now > s->base_ns ? now - s->base_ns : 0;
	hb.spool_dropped = spool_dropped(s->spool) + s->not_spooled;
	hb.spool_bytes = spool_bytes(s->spool);
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	session_send(s, &env);
}

static int session_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct session *s = ctx;
	if (max < 1)
		return 0;
	int t = transport_poll_prepare(s->tr, &pfd[0], now);
	if (t >= 0 && (*timeout_ms < 0 || t < *timeout_ms))
		*timeout_ms = t;
	loop_timer_timeout(&s->heartbeat, now, timeout_ms);
	return 1;
}

static int session_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct session *s = ctx;
	if (loop_timer_expired(&s->heartbeat, now))
		send_heartbeat(s, now);
	int rc = transport_process(s->tr, n > 0 ? pfd[0].revents : 0, now);
	if (rc < 0) {
		log_error("%s", transport_error(s->tr));
		s->fatal = true;
		return rc;
	}
	return 0;
}

int session_attach(struct session *s, struct loop *l)
{
	struct loop_source src = {.name = "collector", .prepare = session_prepare, .dispatch = session_dispatch, .ctx = s};
	loop_timer_start(&s->heartbeat, HEARTBEAT_NS, clock_mono_ns());
	int rc = loop_add(l, &src);
	if (rc == 0 && s->orphans)
		rc = orphans_attach(s->orphans, l);
	return rc;
}

uint64_t session_flush(struct session *s)
{
	if (s->fatal)
		return spool_records(s->spool);
	struct loop *l;
	if (loop_create(&l) < 0)
		return spool_records(s->spool);
	struct loop_source src = {.name = "flush", .prepare = session_prepare, .dispatch = session_dispatch, .ctx = s};
	loop_add(l, &src);
	if (s->orphans)
		orphans_attach(s->orphans, l);
	s->heartbeat.next_ns = 0; /* no heartbeats while flushing */
	uint64_t end = clock_mono_ns() + (uint64_t)(s->o.flush_timeout_s * 1e9);
	while ((spool_records(s->spool) > 0 || orphans_pending(s->orphans) ||
		(s->snap_live && transport_streaming(s->tr) && s->snap_live(s->snap_ctx) > 0)) &&
	       !s->fatal) {
		uint64_t now = clock_mono_ns();
		if (now >= end)
			break;
		if (loop_step(l, (int)((end - now + 999999) / 1000000)) < 0)
			break;
	}
	loop_destroy(l);
	return session_left(s);
}

uint64_t session_left(const struct session *s)
{
	return spool_records(s->spool);
}

/* " NAME VALUE", VALUE single-quoted for a shell when it needs it; nothing for a NULL value. */
static void print_opt(FILE *out, const char *name, const char *v)
{
	if (!v)
		return;
	if (v[0] && !v[strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789/._-+:@,=%")]) {
		fprintf(out, " %s %s", name, v);
		return;
	}
	fprintf(out, " %s '", name);
	for (; *v; v++)
		fputs(*v == '\'' ? "'\\''" : (char[2]){*v, 0}, out);
	fputc('\'', out);
}

void session_print_summary(const struct session *s, FILE *out)
{
	const struct transport_stats *st = transport_get_stats(s->tr);
	uint64_t acked = st->acked < s->seq ? st->acked : s->seq;
	/* Records read back from the spool because they were written there before the connection was
	 * up (or faster than the socket took them) are a healthy run's normal path: only records sent
	 * again after a lost connection are counted apart. */
	fprintf(out,
		" records: %llu created, %llu sent (%llu of them again after a lost connection), %llu acked, %llu "
		"spooled (unacked), %llu dropped; %llu bytes on the wire\n",
		(unsigned long long)s->seq, (unsigned long long)st->records_sent,
		(unsigned long long)st->records_resent, (unsigned long long)acked,
		(unsigned long long)spool_records(s->spool),
		(unsigned long long)(spool_dropped(s->spool) + s->not_spooled), (unsigned long long)st->bytes_sent);
	fprintf(out, " connections: %llu acked Hellos, %llu failed or refused attempts, %llu retry hints obeyed\n",
		(unsigned long long)st->connects, (unsigned long long)st->failures, (unsigned long long)st->retry_hints);
	if (st->ack_regressions)
		fprintf(out,
			" %llu ACK REGRESSION(S): the collector's store answered a Hello below a seq it had acked "
			"(acked records may be lost there); what the spool still held was re-sent\n",
			(unsigned long long)st->ack_regressions);
	if (st->records_resent)
		fprintf(out,
			" (sent again: this run's own records, written before a connection was lost and not yet "
			"acknowledged, re-read from its spool %s; the collector keeps each once)\n",
			spool_path(s->spool));
	if (st->acks_refused)
		fprintf(out,
			" %llu ack(s) from the collector above this run's highest seq were refused (forged or "
			"confused): nothing was dropped for them\n",
			(unsigned long long)st->acks_refused);
	const struct orphans_stats *os = s->orphans ? orphans_get_stats(s->orphans) : NULL;
	unsigned waiting = os ? os->found - os->delivered : 0;
	if (os && os->found)
		fprintf(out, " earlier runs: %llu record(s) they left in the spool delivered (%u of %u session(s))%s\n",
			(unsigned long long)os->records, os->delivered, os->found,
			waiting ? "; the rest waits there for the next run (or `agent spool send`)" : "");
	uint64_t left = session_left(s);
	if (left) {
		fprintf(out,
			" NOT DELIVERED: %llu record(s) of this run are not acknowledged by collector %s; they stay "
			"in %s; the next run of agent id %s with this collector sends them (or `agent spool send "
			"--collector %s",
			(unsigned long long)left, s->o.collector, spool_path(s->spool), s->hello->agent_id,
			s->o.collector);
		/* the spool, token and CA this run used: the command works as printed */
		print_opt(out, "--spool", s->o.spool_dir);
		print_opt(out, "--agent-id", s->hello->agent_id);
		print_opt(out, "--token-file", s->o.token_file);
		print_opt(out, "--tls-ca", s->o.tls_ca);
		fprintf(out, "`); exit status 1\n");
	}
}

void session_close(struct session *s)
{
	if (!s)
		return;
	orphans_close(s->orphans);
	transport_destroy(s->tr);
	if (s->spool)
		spool_close(s->spool, true);
	sysinfo_hello_free(s->hello);
	free(s);
}
