/* The collector's network loop: one thread, epoll, non-blocking sockets
 * (server_priv.h lists its parts).
 * Frames of every connection feed ingest.c; all records handled in one loop
 * iteration go into one store batch (at most ~50 ms / 4096 records), and the
 * acks follow the COMMIT. Bad input closes only the connection it came on. */
#ifndef COLLECTOR_SERVER_H
#define COLLECTOR_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "auth.h"
#include "store/store.h"

struct server_options {
	const char *listen; /* "HOST:PORT", port 0 picks a free one */
	unsigned max_conns; /* 0: SERVER_DEFAULT_MAX_CONNS */
	size_t max_frame;   /* 0: CONFIG_MAX_FRAME_KB KiB */
	int signal_fd;	    /* readable means stop (a signalfd), -1 for none; not owned */
	/* Optional: another descriptor in the same loop (the HTTP front end's epoll fd, http.h);
	 * extra_ready(extra_arg) runs when it is readable. Used only when extra_ready is set; not owned. */
	int extra_fd;
	void (*extra_ready)(void *arg);
	void *extra_arg;
	/* Limits and authentication (issue #10). Binding to a non-loopback address needs a token. */
	const struct auth_token *token; /* NULL: no Challenge, agents need no token; not owned */
	unsigned max_rate;		/* records/s per connection (reading pauses above), 0: SERVER_DEFAULT_MAX_RATE */
	unsigned max_sessions_per_agent; /* open connections per agent id, 0: SERVER_DEFAULT_MAX_PER_AGENT */
	unsigned hello_timeout_ms;	 /* close peers without a Hello by then, 0: SERVER_DEFAULT_HELLO_TIMEOUT_MS */
	/* After the Hello, close peers silent this long; 0: SERVER_DEFAULT_IDLE_TIMEOUT_MS,
	 * SERVER_NO_IDLE_TIMEOUT: never. */
	unsigned idle_timeout_ms;
	/* TLS (common/tls.h): both set: every connection of the listener is TLS, the
	 * handshake bounded by hello_timeout_ms. NULL: plain TCP. */
	const char *tls_cert, *tls_key;
	/* Budgets of unproven connections, those that have not sent a valid record yet
	 * (before their Hello and after it until their first record; issues #18, #25): at
	 * most max_prehello in all and max_prehello_per_addr from one source address; a new
	 * connection over either (or over max_conns) evicts one of them, fairly across
	 * addresses (server_admit.c). 0: SERVER_DEFAULT_PREHELLO_SHARE / _PER_ADDR_SHARE of
	 * max_conns. */
	unsigned max_prehello, max_prehello_per_addr;
	/* Frame memory of all connections together beyond their 4 KiB buffers (large frames
	 * being received, kept Hellos): 0: SERVER_DEFAULT_FRAME_MEMORY; at least 2 frames. */
	size_t max_frame_memory;
	/* A record whose seq is more than this above the session's highest stored seq is a
	 * protocol error (Error{ERANGE}, connection closed, nothing stored): a peer cannot push
	 * the session's ack past records the agent has not sent. 0: SERVER_DEFAULT_SEQ_WINDOW,
	 * SERVER_NO_SEQ_WINDOW: no check. */
	uint64_t seq_window;
	/* --retain: every SERVER_RETAIN_EVERY_MS (a tenth of a shorter retain_ns, at least 1 s;
	 * between batches) delete samples older than
	 * this and sessions last seen before it (store_prune.h); sessions with a connection,
	 * or seen in the last SERVER_RETAIN_LIVE_GRACE_S, only lose old rows. 0: keep all. */
	uint64_t retain_ns;
};

#define SERVER_DEFAULT_MAX_CONNS 1024u
#define SERVER_DEFAULT_MAX_RATE 5000u
#define SERVER_DEFAULT_MAX_PER_AGENT 4u
#define SERVER_DEFAULT_HELLO_TIMEOUT_MS 10000u
#define SERVER_DEFAULT_IDLE_TIMEOUT_MS 60000u /* 6 agent heartbeat intervals */
#define SERVER_NO_IDLE_TIMEOUT 0xffffffffu
#define SERVER_UNLIMITED_RATE 0xffffffffu /* max_rate: no rate limit */
#define SERVER_DEFAULT_PREHELLO_SHARE 4u	 /* max_prehello = max_conns / 4 (at least 1) */
#define SERVER_DEFAULT_PER_ADDR_SHARE 8u	 /* max_prehello_per_addr = max_conns / 8 (at least 1) */
#define SERVER_DEFAULT_SEQ_WINDOW 65536u
#define SERVER_DEFAULT_FRAME_MEMORY (64u << 20)
#define SERVER_NO_SEQ_WINDOW UINT64_MAX
#define SERVER_RETAIN_EVERY_MS 60000u
#define SERVER_RETAIN_LIVE_GRACE_S 120

struct server_stats {
	uint64_t accepted, refused, closed_bad, records, duplicates, commits;
	uint64_t auth_failed;	 /* Hellos without or with a wrong token proof */
	uint64_t throttled;	 /* times a connection's reading paused for --max-rate */
	uint64_t hello_timeouts; /* peers closed for sending no Hello in time */
	uint64_t over_per_agent; /* Hellos refused by --max-sessions-per-agent */
	uint64_t tls_failed;	 /* failed or unfinished TLS handshakes, TLS/plaintext mismatches */
	uint64_t idle_timeouts;	 /* peers closed for --idle-timeout */
	uint64_t session_busy;	 /* Hellos refused: their session has a live connection */
	uint64_t id_in_use;	 /* Hellos refused: their agent id streams from another host */
	uint64_t evicted;	 /* unproven connections closed to make room (budgets) */
	uint64_t evicted_fair;	 /* of which young ones, from an address holding more than the newcomer's */
	uint64_t squatters_evicted; /* unproven connections that held a session or agent id a Hello wanted */
	uint64_t frame_evicted;	 /* connections closed for holding frame memory another needed */
	uint64_t frame_waits;	 /* times a connection waited for frame memory */
	uint64_t frame_mem_peak; /* most frame memory counted at once (bytes) */
	uint64_t seq_refused;	 /* connections closed for a seq beyond the window */
	uint64_t store_failures; /* store calls that failed (not counted as bad input) */
	uint64_t store_outages;	 /* times the store became unavailable */
	uint64_t store_retry_told; /* Hellos and records refused with a retry hint */
	unsigned conns;
};

struct server;

/* Bind and listen (logs "listening on ADDR"), load the TLS certificate; errors are logged with what to do. */
int server_open(struct store *store, const struct server_options *opt, struct server **out);
/* The bound port (useful with port 0). */
uint16_t server_port(const struct server *s);
/* Run until a stop is requested; then drain, commit, ack, close. Returns 0
 * or a negative errno on a fatal error (epoll failure; -EUCLEAN: the store
 * reported damage, every agent was told and nothing more was acked). */
int server_run(struct server *s);
/* One loop iteration waiting at most timeout_ms; returns 1 once stopped
 * (after the drain), 0 otherwise, negative on fatal errors. For tests. */
int server_step(struct server *s, int timeout_ms);
/* Ask the loop to stop (async-signal-safe and thread-safe). */
void server_request_stop(struct server *s);
void server_get_stats(const struct server *s, struct server_stats *st);
/* Closes every connection (without draining) and frees. NULL is fine. */
void server_close(struct server *s);

#endif
