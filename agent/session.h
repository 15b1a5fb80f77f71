/* One streaming session with the collector: the Hello, the on-disk spool,
 * the reconnecting transport, the record sequence numbers, heartbeats and the
 * final flush. Every agent subcommand (stat, record, run, calibrate, trace)
 * opens one session and sends its records through it. */
#ifndef AGENT_SESSION_H
#define AGENT_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loop.h"
#include "profiler.pb-c.h"

struct session_opts {
	const char *collector; /* HOST:PORT */
	const char *spool_dir;
	unsigned spool_mb;
	const char *agent_id;  /* NULL: hostname */
	const char *target;    /* what is profiled, for Hello ("pid 12", "system-wide", "cmd ...") */
	double flush_timeout_s;
	bool opencl_probe;     /* list OpenCL devices in Hello */
	const char *token_file; /* NULL: no token; else prove it when the collector challenges */
	const char *tls_ca;	/* NULL: plain TCP; else TLS, the collector's certificate checked against it */
};

struct session;

/* Builds the Hello (system information), opens the spool and the transport
 * (which connects lazily, from the loop). err gets a user-facing reason. */
int session_open(struct session **out, const struct session_opts *o, char *err, size_t errlen);
/* Register the collector connection and the heartbeat timer with the loop. */
int session_attach(struct session *s, struct loop *l);

uint64_t session_base_ns(const struct session *s); /* Hello.base_ns (CLOCK_MONOTONIC) */
const char *session_agent_id(const struct session *s); /* Hello.agent_id */
/* The collector's store identity from the ack of the connection's Hello ("" before it, or an older collector). */
const char *session_store_id(const struct session *s);
size_t session_max_frame(const struct session *s);

/* Give env the next seq, encode it and hand it to the spool and transport.
 * Returns 0 or -errno (-EMSGSIZE: larger than a frame may be). */
int session_send(struct session *s, Prof__Envelope *env);
/* Board snapshots (issue 36): the collector's PageRequests go to pages(), its SnapshotDone
 * (and an Error naming a snapshot) to done() (transport_set_snapshots); session_flush also
 * waits (within its timeout) while live() says snapshots are still served. */
void session_set_snapshots(struct session *s,
			   int (*pages)(void *ctx, const Prof__PageRequest *req, Prof__Pages *out),
			   void (*done)(void *ctx, uint32_t snapshot_id), unsigned (*live)(void *ctx), void *ctx);
bool session_streaming(const struct session *s); /* connected, the Hello acked */
/* Not connected, and no attempt has ended yet: the first connection is still being made. */
bool session_connect_pending(const struct session *s);
/* Send msg live with a seq reserved for its window (msg->window_seq set): 0, -ENOTCONN when
 * the collector is not connected (no window then), or -errno. */
int session_send_snapshot(struct session *s, Prof__TraceSnapshot *msg);
/* For builders that encode whole frames themselves: reserve the next seq,
 * then submit the frame (ownership passes to the session; it is freed). */
uint64_t session_next_seq(struct session *s);
int session_submit_frame(struct session *s, uint64_t seq, uint8_t *frame, size_t len);
/* Would a record of len bytes make the spool drop old records? Builders that
 * intern names (event names, kernel names, mappings) declare everything again
 * in such a record, and whenever session_drop_generation() changed. */
bool session_would_drop(const struct session *s, size_t len);
uint64_t session_drop_generation(const struct session *s);
/* Callbacks of a sampler streaming into session ctx (struct sampler_opts .emit,
 * .generation, .ctx = the session): a record that would be dropped returns -ESTALE
 * (the sampler then declares everything again in its next record). */
int session_emit_sampled(void *session, Prof__Envelope *env);
uint64_t session_generation_cb(void *session);

/* The collector refused this agent for good (schema version, token); the loop
 * was stopped with -EPROTONOSUPPORT or -EACCES. */
bool session_fatal(const struct session *s);
/* At the end: wait up to flush_timeout_s for every record to be acked (and
 * for the records earlier runs left in the spool to be sent), running only
 * the session's own sources. Returns the records of this run left unacked. */
uint64_t session_flush(struct session *s);
/* Records of this run not acknowledged (they stay in the spool for a later run). */
uint64_t session_left(const struct session *s);
/* " records: N created, N sent (N of them again after a lost connection), N acked, N spooled, N dropped; N bytes on the wire",
 * refused acks, what earlier runs left and was delivered, and, when records of
 * this run are left, a NOT DELIVERED line saying where and how they will be sent. */
void session_print_summary(const struct session *s, FILE *out);
void session_close(struct session *s);

#endif
