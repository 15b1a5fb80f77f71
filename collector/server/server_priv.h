/* Internals of the collector's network loop, shared by its parts:
 *   server.c         setup, the epoll loop, drain and stop
 *   server_conn.c    accept, per-connection state machine (read, frames, acks), batches
 *   server_addr.c    connections counted by class (unproven, proven) and source address
 *   server_admit.c   admission: connection budgets, fair eviction, session ownership at the Hello
 *   server_memory.c  the frame memory budget shared by all connections
 *   server_limits.c  --max-rate, Hello / idle deadlines
 *   server_tls.c     TLS handshakes and TLS-buffered input
 *   server_store.c   store outages: retry hints to agents, reconnects, one line lost / one back
 *   server_snap.c    board snapshots: their replays a slice a turn, PageRequests / SnapshotDone sent
 * Nothing here is used outside collector/server*.c. */
#ifndef COLLECTOR_SERVER_PRIV_H
#define COLLECTOR_SERVER_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "frame.h"
#include "ingest.h"
#include "server.h"
#include "stream.h"

#define READ_BUDGET (64u * 1024u)	  /* per connection per loop iteration: fairness */
#define DRAIN_BUDGET (4u * 1024u * 1024u) /* per connection when stopping */
#define OUT_CAP 2048u			  /* acks are ~14 bytes, an Error < 300 */
#define BATCH_MAX_RECORDS 4096u
#define BATCH_MAX_NS (50u * 1000u * 1000u)
#define MAX_EVENTS 256
#define ACCEPT_PER_ITERATION 64
#define SWEEP_NS (250u * 1000u * 1000u)		/* how often Hello and idle deadlines are checked */
/* Younger unproven connections are evicted only by a newcomer from an address holding
 * fewer of them (server_admit.c). */
#define EVICT_MIN_AGE_NS (250u * 1000u * 1000u)
/* A connection holding frame memory is closed for another's frame only after this long. */
#define FRAME_HOLD_MIN_NS (1000u * 1000u * 1000u)

struct conn;

/* Connections of one source address (server_addr.c). */
struct srv_addr {
	struct srv_addr *next;		/* hash chain */
	struct srv_addr *uprev, *unext; /* in server.unproven_addrs while unproven > 0 */
	struct conn *uhead, *utail;	/* its unproven connections, oldest first */
	char addr[48];			/* without the port */
	unsigned refs;			/* connections in the list from here */
	unsigned open;			/* of which not closing */
	unsigned unproven;		/* of which without a valid record yet */
};

struct conn {
	struct conn *prev, *next;
	struct stream st; /* the socket, plain or TLS */
	uint32_t events;  /* registered with epoll */
	bool tls_checked; /* TLS listener: the first byte was seen to start a handshake */
	bool closing;	  /* close at the end of this iteration (after commit and acks) */
	bool want_out;	  /* output pending: writing wanted */
	bool ack_pending;
	uint64_t ack_seq; /* latest ack not yet in out[]: acks coalesce here */
	size_t out_off, out_len;
	uint8_t out[OUT_CAP];
	struct frame_decoder dec;
	struct ingest_conn ing;
	struct srv_addr *from;	 /* source address: the per-address budget */
	struct conn *uprev, *unext; /* in from's unproven list while counted unproven */
	bool counted_proven;	 /* counted as proven (server_addr.c) */
	bool uncounted;		 /* no longer counted: marked closing through srv_conn_closing */
	size_t held;		 /* frame memory counted against --max-frame-memory */
	uint64_t held_since_ns;	 /* when it began holding it */
	uint64_t accepted_ns;	 /* also the age that picks who is evicted first */
	uint64_t last_rx_ns;  /* last bytes received: --idle-timeout */
	/* --max-rate: token bucket of records; reading pauses while it is empty */
	double tokens;
	uint64_t refill_ns, resume_ns;
	bool throttled, throttle_logged;
};

struct server {
	struct store *store;
	char store_id[64]; /* the store's identity, in every Ack ("" if unknown) */
	int epfd, listen_fd, stop_fd, signal_fd;
	int extra_fd; /* server_options.extra_fd, -1 for none */
	void (*extra_ready)(void *arg);
	void *extra_arg;
	uint16_t port;
	char addr[80];
	size_t max_frame;
	unsigned max_conns, nconns;		      /* nconns: in the list, closing ones too */
	unsigned nopen, nunproven;		      /* not closing; of which unproven (server_addr.c) */
	unsigned max_prehello, max_prehello_per_addr; /* budgets of unproven connections */
	struct srv_addr **addr_buckets;
	unsigned addr_nbuckets;
	struct srv_addr *unproven_addrs; /* the addresses holding unproven connections */
	size_t frame_mem, frame_budget; /* server_memory.c */
	uint64_t seq_window;			      /* 0: no check */
	struct conn *conns;			      /* newest first */
	bool stopping, stopped, accept_paused;
	bool store_damaged; /* the store reported damage: nothing more is acked, the loop stops */
	uint64_t batch_start_ns;
	const struct auth_token *token;
	struct tls_ctx *tls;	  /* NULL: plain TCP listener */
	uint64_t idle_timeout_ns; /* 0: none */
	unsigned max_rate, max_per_agent, nthrottled;
	uint64_t hello_timeout_ns, next_sweep_ns;
	uint64_t retain_ns, next_retain_ns; /* --retain (0: off); the next pass (monotonic) */
	struct server_stats stats;
	uint64_t redo_dups_seen; /* store_ahead_redos' duplicates already moved in stats */
	/* Store outages (server_store.c) */
	bool store_lost;	   /* an outage was reported ("unavailable"); "back" at the next good commit */
	bool store_away;	   /* Hellos and records are refused with a retry hint until store_retry_ns */
	uint64_t store_lost_ns, store_retry_ns;
	unsigned store_retry_ms;   /* the current retry interval (doubles while the store keeps failing) */
	uint64_t store_told;	   /* connections told to retry during this outage */
	/* Board snapshots (server_snap.c) */
	bool snap_busy;	    /* a replay can run on: the next turn does not wait */
	unsigned snap_live; /* snapshots being replayed: their deadlines are checked every SNAP_TICK_MS */
};

#define STORE_RETRY_MIN_MS 1000u
#define STORE_RETRY_MAX_MS 16000u
#define STORE_RECONNECT_TICK_MS 20
/* server_retain.c: a --retain pass when it is due (after the batch's commit). */
void srv_retain(struct server *s, uint64_t now);

/* server_conn.c */
const char *srv_who(const struct conn *c, char *buf, size_t len);
int srv_epoll_set(struct server *s, int op, int fd, uint32_t events, void *ptr);
void srv_conn_update_events(struct server *s, struct conn *c);
int srv_conn_flush(struct server *s, struct conn *c);
void srv_conn_close(struct server *s, struct conn *c);
void srv_conn_failed(struct server *s, struct conn *c);
void srv_conn_read(struct server *s, struct conn *c, size_t budget);
void srv_send_challenge(struct server *s, struct conn *c);
void srv_accept_some(struct server *s);
void srv_batch_commit(struct server *s);

/* server_addr.c */
int srv_addrs_init(struct server *s);
void srv_addrs_free(struct server *s);
struct srv_addr *srv_addr_find(const struct server *s, const char *addr);
/* A new connection from addr: counted as open and unproven. */
int srv_conn_enter(struct server *s, struct conn *c, const char *addr);
/* Mark c closing (closed at the end of the iteration); it no longer counts. */
void srv_conn_closing(struct server *s, struct conn *c);
/* After a frame: c has just become proven (ing.proven)? count it so. */
void srv_conn_check_proven(struct server *s, struct conn *c);
/* c is being freed. */
void srv_conn_leave(struct server *s, struct conn *c);

/* server_admit.c */
int srv_admit_hello(void *arg, struct ingest_conn *ic, const Prof__Hello *h);
/* Before accepting a connection from addr: evict unproven connections as the budgets
 * require; NULL, or why it must be refused (for srv_refuse). */
const char *srv_admit_conn(struct server *s, const char *addr);
void srv_refuse(struct server *s, int fd, const char *peer, const char *why);

/* server_memory.c */
/* Before frame_decoder_space(): may c's buffer become want_cap bytes? true, or false
 * (older holders closed or none closable yet): c is paused and read again later. */
bool srv_frame_room(struct server *s, struct conn *c, size_t want_cap);
/* After c's buffer or kept Hello changed: recount what it holds. */
void srv_frame_update(struct server *s, struct conn *c);
void srv_frame_release(struct server *s, struct conn *c);

/* server_limits.c */
bool srv_rate_exhausted(struct server *s, struct conn *c);
void srv_sweep_deadlines(struct server *s, uint64_t now);
void srv_resume_throttled(struct server *s, uint64_t now);

/* server_store.c */
/* ingest's store_retry_ms hook: 0, or how long agents should wait. */
uint32_t srv_store_retry_ms(void *arg);
/* A store failure (rc) that was not damage: report the outage once, tell the agents of
 * the failed batch to retry later, stop using the store until the retry time. */
void srv_store_failed(struct server *s, int rc);
/* After a successful commit: "back" once after an outage. */
void srv_store_ok(struct server *s);
/* Each iteration: reconnect or end the pause when it is time. */
void srv_store_tick(struct server *s, uint64_t now);
/* The epoll timeout while the store is away. */
int srv_store_timeout(const struct server *s, int timeout_ms, uint64_t now);

/* server_snap.c: one slice of every connection's snapshot replays, their frames sent */
#define SNAP_TICK_MS 100
void srv_snap_run(struct server *s, uint64_t now);
int srv_snap_timeout(const struct server *s, int timeout_ms);

/* server_tls.c */
void srv_conn_handshake(struct server *s, struct conn *c);
bool srv_tls_input_pending(const struct server *s);
void srv_read_tls_pending(struct server *s);

#endif
