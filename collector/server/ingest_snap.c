/* Board snapshots on a live agent connection (ingest_snap.h). */
#include "ingest_snap.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "frame.h"
#include "ingest.h"
#include "log.h"
#include "net.h"
#include "trace/window_codec.h"
#include "validate.h"
#include "trace_replay/snap_session.h"

struct snap {
	struct snap_session *ss;
	uint32_t id, page_size;
	uint64_t seq, t_ns, stop_ns;
	uint64_t bytes;	/* page bytes budgeted to it */
	uint64_t started_ns, deadline_ns, limit_ms, cpu_ns;
	uint32_t requests, pages;
	bool waiting; /* a PageRequest is out */
	bool ready;   /* the window is done: stored once the records before its seq are */
};

struct ingest_snaps {
	struct snap s[INGEST_SNAP_MAX];
	unsigned n;
	uint64_t bytes;
	uint8_t *out;
	size_t out_off, out_len, out_cap; /* unsent bytes: out[out_off, out_len) */
	uint64_t gone[INGEST_SNAP_GONE];  /* window seqs of snapshots refused: no record will hold them */
	unsigned ngone;
	struct ingest_snap_stats st;
};

/* Page bytes budgeted to the snapshots of every connection of this process. */
static _Atomic uint64_t all_bytes;

static uint64_t cpu_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static struct ingest_snaps *snaps(struct ingest_conn *c)
{
	if (!c->snaps)
		c->snaps = calloc(1, sizeof(*c->snaps));
	return c->snaps;
}

static int queue(struct ingest_conn *c, const Prof__Envelope *env)
{
	struct ingest_snaps *q = c->snaps;
	uint8_t *f = NULL;
	size_t len = 0;
	int rc = frame_encode(env, 1u << 20, &f, &len);
	if (rc < 0)
		return rc;
	if (q->out_off) { /* what was sent leaves the buffer once, here, not on every take */
		memmove(q->out, q->out + q->out_off, q->out_len - q->out_off);
		q->out_len -= q->out_off;
		q->out_off = 0;
	}
	if (q->out_len + len > INGEST_SNAP_OUT_MAX) { /* the agent does not read what it is sent */
		free(f);
		return -ENOBUFS;
	}
	if (q->out_len + len > q->out_cap) {
		size_t cap = q->out_cap ? q->out_cap : 1024;
		while (cap < q->out_len + len)
			cap *= 2;
		uint8_t *n = realloc(q->out, cap);
		if (!n) {
			free(f);
			return -ENOMEM;
		}
		q->out = n;
		q->out_cap = cap;
	}
	memcpy(q->out + q->out_len, f, len);
	q->out_len += len;
	free(f);
	return 0;
}

static int oom(struct ingest_conn *c)
{
	return ingest_fail(c, INGEST_STORE, ENOMEM, false, "out of memory for a board snapshot");
}

/* Queue env for the agent: 0, or the connection's failure (out of memory; or the agent
 * leaves INGEST_SNAP_OUT_MAX bytes unread: that connection alone is closed). */
static int send_env(struct ingest_conn *c, const Prof__Envelope *env)
{
	int rc = queue(c, env);
	if (rc == -ENOBUFS)
		return ingest_fail(c, INGEST_PROTOCOL, ENOBUFS, true,
				   "the agent leaves %zu bytes of page requests, errors and SnapshotDones unread "
				   "(INGEST_SNAP_OUT_MAX %u)",
				   c->snaps->out_len - c->snaps->out_off, INGEST_SNAP_OUT_MAX);
	return rc < 0 ? oom(c) : 0;
}

/* A refused snapshot's window seq: no record will hold it, so a later window need not wait for it. */
static void seq_gone(struct ingest_snaps *q, uint64_t seq)
{
	if (seq)
		q->gone[q->ngone++ % INGEST_SNAP_GONE] = seq;
}

static bool is_gone(const struct ingest_snaps *q, uint64_t seq)
{
	unsigned n = q->ngone < INGEST_SNAP_GONE ? q->ngone : INGEST_SNAP_GONE;
	for (unsigned i = 0; i < n; i++)
		if (q->gone[i] == seq)
			return true;
	return false;
}

/* Error{code, why, snapshot_id}: that snapshot is refused, the connection goes on. */
static int vrefuse(struct ingest_conn *c, uint32_t id, uint32_t code, const char *fmt, va_list ap)
{
	char msg[400], who[128];
	vsnprintf(msg, sizeof(msg), fmt, ap);
	log_warn("%s (%s): %s", c->peer, ingest_who(c, who, sizeof(who)), msg);
	Prof__Error err = PROF__ERROR__INIT;
	err.code = code;
	err.message = msg;
	err.snapshot_id = id;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_ERROR;
	env.error = &err;
	c->snaps->st.refused++;
	return send_env(c, &env);
}

static int refuse(struct ingest_conn *c, uint32_t id, uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse(struct ingest_conn *c, uint32_t id, uint32_t code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int rc = vrefuse(c, id, code, fmt, ap);
	va_end(ap);
	return rc;
}

/* refuse() a snapshot not yet replayed: its window seq will hold no record (seq_gone). */
static int refuse_new(struct ingest_conn *c, const Prof__TraceSnapshot *ts, uint32_t code, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static int refuse_new(struct ingest_conn *c, const Prof__TraceSnapshot *ts, uint32_t code, const char *fmt, ...)
{
	seq_gone(c->snaps, ts->window_seq);
	va_list ap;
	va_start(ap, fmt);
	int rc = vrefuse(c, ts->snapshot_id, code, fmt, ap);
	va_end(ap);
	return rc;
}

static struct snap *find(struct ingest_snaps *q, uint32_t id)
{
	for (unsigned i = 0; i < q->n; i++)
		if (q->s[i].id == id)
			return &q->s[i];
	return NULL;
}

/* s ends: its window stored (stored) or refused (its seq then no record's). */
static void drop(struct ingest_snaps *q, struct snap *s, bool stored)
{
	if (!stored)
		seq_gone(q, s->seq);
	snap_session_free(s->ss);
	q->bytes -= s->bytes;
	atomic_fetch_sub(&all_bytes, s->bytes);
	*s = q->s[--q->n];
}

int ingest_snap_begin(struct ingest_conn *c, const Prof__TraceSnapshot *ts, uint64_t now_ns)
{
	if (!c->hello_done)
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true, "TraceSnapshot before Hello");
	struct ingest_snaps *q = snaps(c);
	if (!q)
		return oom(c);
	uint32_t id = ts->snapshot_id;
	if (find(q, id))
		return refuse(c, id, EEXIST, "snapshot %u refused: a snapshot with that id is being replayed", id);
	if (ts->window_seq == 0)
		return refuse(c, id, EINVAL,
			      "snapshot %u refused: no window_seq (the record seq its window is stored under; "
			      "an agent reserves one per snapshot)",
			      id);
	if (c->seq_window && ts->window_seq > c->seq_hi && ts->window_seq - c->seq_hi > c->seq_window)
		return refuse_new(c, ts, ERANGE,
			      "snapshot %u refused: window_seq %llu is more than the seq window %llu above the "
			      "session's highest stored seq %llu",
			      id, (unsigned long long)ts->window_seq, (unsigned long long)c->seq_window,
			      (unsigned long long)c->seq_hi);
	if (q->n >= INGEST_SNAP_MAX)
		return refuse_new(c, ts, EBUSY,
			      "snapshot %u refused: %u snapshots of this connection are being replayed (limit "
			      "INGEST_SNAP_MAX %u); send the next one after a SnapshotDone",
			      id, q->n, INGEST_SNAP_MAX);
	if (ts->warmup_insns > INGEST_SNAP_WARMUP_MAX || ts->record_insns > INGEST_SNAP_RECORD_MAX)
		return refuse_new(c, ts, E2BIG,
			      "snapshot %u refused: %llu warm-up + %llu recorded instructions asked for (limits "
			      "INGEST_SNAP_WARMUP_MAX %u, INGEST_SNAP_RECORD_MAX %u)",
			      id, (unsigned long long)ts->warmup_insns, (unsigned long long)ts->record_insns,
			      INGEST_SNAP_WARMUP_MAX, INGEST_SNAP_RECORD_MAX);
	uint64_t max_pages = ts->max_pages;
	if (max_pages * ts->page_size > INGEST_SNAP_BYTES)
		max_pages = INGEST_SNAP_BYTES / ts->page_size;
	uint64_t bytes = max_pages * ts->page_size;
	if (q->bytes + bytes > INGEST_SNAP_CONN_BYTES)
		return refuse_new(c, ts, EDQUOT,
			      "snapshot %u refused: its %llu KiB of pages and the %llu KiB of this connection's "
			      "other snapshots exceed INGEST_SNAP_CONN_BYTES (%u KiB)",
			      id, (unsigned long long)(bytes >> 10), (unsigned long long)(q->bytes >> 10),
			      INGEST_SNAP_CONN_BYTES >> 10);
	uint64_t all = atomic_fetch_add(&all_bytes, bytes);
	if (all + bytes > INGEST_SNAP_SERVER_BYTES) {
		atomic_fetch_sub(&all_bytes, bytes);
		return refuse_new(c, ts, EDQUOT,
			      "snapshot %u refused: its %llu KiB of pages and the %llu KiB of every connection's "
			      "other snapshots exceed INGEST_SNAP_SERVER_BYTES (%u KiB); send it again later",
			      id, (unsigned long long)(bytes >> 10), (unsigned long long)(all >> 10),
			      INGEST_SNAP_SERVER_BYTES >> 10);
	}
	struct trace_replay_config cfg = {
	    .warmup = ts->warmup_insns ? ts->warmup_insns : INGEST_SNAP_WARMUP_DEFAULT,
	    .record = ts->record_insns ? ts->record_insns : INGEST_SNAP_RECORD_DEFAULT,
	    .max_pages = (uint32_t)max_pages,
	    .slice = INGEST_SNAP_SLICE,
	};
	struct snap *s = &q->s[q->n];
	memset(s, 0, sizeof(*s));
	char why[200] = "";
	int rc = snap_session_new(ts, &cfg, &s->ss, why, sizeof(why));
	if (rc < 0)
		atomic_fetch_sub(&all_bytes, bytes);
	if (rc == -ENOMEM)
		return oom(c);
	if (rc < 0)
		return refuse_new(c, ts, (uint32_t)-rc, "snapshot %u refused: the replay cannot start: %s", id, why);
	q->n++;
	q->bytes += bytes;
	s->id = id;
	s->page_size = ts->page_size;
	s->seq = ts->window_seq;
	s->t_ns = ts->t_ns;
	s->stop_ns = ts->stop_ns;
	s->bytes = bytes;
	s->started_ns = now_ns;
	s->limit_ms = ts->expires_ms < INGEST_SNAP_TIME_MS ? ts->expires_ms : INGEST_SNAP_TIME_MS;
	s->deadline_ns = now_ns + s->limit_ms * 1000000u;
	char who[128];
	log_debug("%s (%s): snapshot %u (pid %d tid %d window %u, seq %llu): replaying %llu + %llu instructions",
		  c->peer, ingest_who(c, who, sizeof(who)), id, ts->pid, ts->tid, ts->window_index,
		  (unsigned long long)s->seq, (unsigned long long)cfg.warmup, (unsigned long long)cfg.record);
	return 0;
}

int ingest_snap_pages(struct ingest_conn *c, const Prof__Pages *p)
{
	if (!c->hello_done)
		return ingest_fail(c, INGEST_PROTOCOL, EPROTO, true, "Pages before Hello");
	struct snap *s = c->snaps ? find(c->snaps, p->snapshot_id) : NULL;
	if (!s) {
		char who[128];
		log_debug("%s (%s): Pages for snapshot %u, which is not being replayed: dropped", c->peer,
			  ingest_who(c, who, sizeof(who)), p->snapshot_id);
		return 0;
	}
	if (p->data.len % s->page_size) {
		uint32_t id = s->id, ps = s->page_size;
		drop(c->snaps, s, false);
		return refuse(c, id, EINVAL, "snapshot %u refused: Pages data of %zu bytes, not whole %u-byte pages",
			      id, p->data.len, ps);
	}
	char why[200] = "";
	int rc = snap_session_pages(s->ss, p, why, sizeof(why));
	if (rc == -ENOMEM)
		return oom(c);
	if (rc < 0) {
		uint32_t id = s->id;
		drop(c->snaps, s, false);
		return refuse(c, id, (uint32_t)-rc, "snapshot %u refused: a bad Pages answer: %s", id, why);
	}
	s->waiting = false;
	s->pages += (uint32_t)p->n_addr;
	c->snaps->st.pages += p->n_addr;
	return 0;
}

/* The window is done: stored under its seq once every record before it is (an ack of seq
 * would drop from the agent's spool the records below it not yet here), then SnapshotDone. */
static int finish(struct ingest_conn *c, struct snap *s, bool *gone)
{
	*gone = false;
	uint64_t hi = c->seq_hi;
	while (is_gone(c->snaps, hi + 1)) /* a refused snapshot's seq holds no record */
		hi++;
	if (s->seq > hi + 1)
		return 0; /* the records before it are still on their way */
	Prof__TraceWindow tw;
	int rc = snap_session_window(s->ss, &tw);
	if (rc < 0)
		return oom(c);
	tw.t_ns = s->t_ns;
	tw.stop_ns = s->stop_ns;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = s->seq;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
	env.trace_window = &tw;
	char why[200];
	if (envelope_validate(&env, why, sizeof(why)) < 0) { /* held to an agent-sent window's rules */
		edag_window_encode_free(&tw);
		uint32_t id = s->id;
		drop(c->snaps, s, false);
		*gone = true;
		return refuse(c, id, EINVAL, "snapshot %u refused: its replayed window is no valid TraceWindow: %s",
			      id, why);
	}
	size_t body = prof__envelope__get_packed_size(&env);
	uint64_t stored = c->stored;
	rc = ingest_record(c, &env, body + FRAME_VARINT_MAX);
	edag_window_encode_free(&tw);
	if (rc < 0)
		return rc;
	const struct trace_replay_result *r = snap_session_result(s->ss);
	char who[128];
	log_info("%s (%s): snapshot %u: window seq %llu %s: %zu instructions after %llu warm-up (%s: %s), "
		 "%u pages in %u requests, replay %.1f ms CPU, %.1f ms wall",
		 c->peer, ingest_who(c, who, sizeof(who)), s->id, (unsigned long long)s->seq,
		 c->stored > stored ? "stored" : "already stored", r->n, (unsigned long long)r->warm_done,
		 trace_replay_end_name(r->end), r->why, s->pages, s->requests, (double)s->cpu_ns / 1e6,
		 (double)(clock_mono_ns() - s->started_ns) / 1e6);
	c->snaps->st.windows++;
	Prof__SnapshotDone done = PROF__SNAPSHOT_DONE__INIT;
	done.snapshot_id = s->id;
	Prof__Envelope de = PROF__ENVELOPE__INIT;
	de.body_case = PROF__ENVELOPE__BODY_SNAPSHOT_DONE;
	de.snapshot_done = &done;
	drop(c->snaps, s, true);
	*gone = true;
	return send_env(c, &de);
}

/* One slice of s's replay; *gone when s was dropped (its slot now holds another). */
static int run_one(struct ingest_conn *c, struct snap *s, uint64_t now_ns, bool *busy, bool *gone)
{
	*gone = false;
	if (now_ns >= s->deadline_ns) {
		uint32_t id = s->id, pages = s->pages, req = s->requests;
		uint64_t ms = s->limit_ms;
		bool ready = s->ready;
		drop(c->snaps, s, false);
		*gone = true;
		return refuse(c, id, ETIMEDOUT,
			      "snapshot %u refused: %s within %llu ms (the lesser of its expires_ms and "
			      "INGEST_SNAP_TIME_MS %u): %u pages in %u requests",
			      id, ready ? "the records before its window's seq did not arrive" : "replay not done",
			      (unsigned long long)ms, INGEST_SNAP_TIME_MS, pages, req);
	}
	if (s->waiting)
		return 0;
	if (s->ready)
		return finish(c, s, gone);
	uint64_t addr[SNAP_SESSION_PREFETCH];
	size_t n = 0;
	uint64_t t0 = cpu_ns();
	int rc = snap_session_step(s->ss, addr, &n);
	s->cpu_ns += cpu_ns() - t0;
	if (rc == 2) {
		*busy = true;
		return 0;
	}
	if (rc == 1) {
		Prof__PageRequest req = PROF__PAGE_REQUEST__INIT;
		req.snapshot_id = s->id;
		req.n_addr = n;
		req.addr = addr;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.body_case = PROF__ENVELOPE__BODY_PAGE_REQUEST;
		env.page_request = &req;
		rc = send_env(c, &env);
		if (rc < 0)
			return rc;
		s->waiting = true;
		s->requests++;
		c->snaps->st.requests++;
		return 0;
	}
	if (rc < 0) {
		uint32_t id = s->id;
		drop(c->snaps, s, false);
		*gone = true;
		if (rc == -ENOMEM)
			return oom(c);
		return refuse(c, id, (uint32_t)-rc, "snapshot %u refused: the replay failed: %s", id, strerror(-rc));
	}
	s->ready = true;
	return finish(c, s, gone);
}

int ingest_snap_run(struct ingest_conn *c, uint64_t now_ns)
{
	struct ingest_snaps *q = c->snaps;
	if (!q || c->failure != INGEST_OK)
		return 0;
	bool busy = false;
	for (unsigned i = 0; i < q->n && c->failure == INGEST_OK;) {
		bool gone;
		int rc = run_one(c, &q->s[i], now_ns, &busy, &gone);
		if (rc < 0)
			return rc;
		if (!gone)
			i++;
	}
	return busy ? 1 : 0;
}

unsigned ingest_snap_live(const struct ingest_conn *c)
{
	return c->snaps ? c->snaps->n : 0;
}

size_t ingest_snap_take_out(struct ingest_conn *c, uint8_t *buf, size_t cap)
{
	struct ingest_snaps *q = c->snaps;
	if (!q || q->out_off == q->out_len)
		return 0;
	size_t left = q->out_len - q->out_off;
	size_t n = left < cap ? left : cap;
	memcpy(buf, q->out + q->out_off, n);
	q->out_off += n;
	if (q->out_off == q->out_len)
		q->out_off = q->out_len = 0;
	return n;
}

void ingest_snap_get_stats(const struct ingest_conn *c, struct ingest_snap_stats *st)
{
	if (c->snaps)
		*st = c->snaps->st;
	else
		memset(st, 0, sizeof(*st));
}

void ingest_snap_free(struct ingest_conn *c)
{
	struct ingest_snaps *q = c->snaps;
	if (!q)
		return;
	while (q->n)
		drop(q, &q->s[0], false);
	free(q->out);
	free(q);
	c->snaps = NULL;
}
