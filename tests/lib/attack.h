/* The attacks of issue #25 on a collector on loopback, for the integration
 * tests and bench/attacks.c: each bounded in count and time, from source
 * addresses 127.0.0.x (all loopback). Failures are returned, not asserted. */
#ifndef TESTS_LIB_ATTACK_H
#define TESTS_LIB_ATTACK_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A TCP connection to 127.0.0.1:port from source address src (NULL: any), blocking
 * with 5 s send/receive timeouts; -errno on failure. */
int atk_connect(const char *src, int port);

/* A new agent's Hello: connect from src, send a Hello for (agent_id, boot), wait for
 * its Ack up to timeout_ms. Returns the milliseconds from connect to Ack, or -1 if
 * the collector answered with an Error or closed (why: its message), -2 on a timeout
 * or a connection failure. keep_fd: the connection stays open there (else closed). */
double atk_hello_ack(const char *src, int port, const char *agent_id, uint64_t boot, int timeout_ms,
		     char *why, size_t whylen, int *keep_fd);
/* After atk_hello_ack kept fd: send Counters records seq from..to, wait for the Ack of
 * to (timeout_ms); 0, or -1 (Error or closed), -2 (timeout). */
int atk_send_records(int fd, uint64_t from, uint64_t to, int timeout_ms);
/* Send a frame header announcing a record of frame_bytes and all but keep bytes of
 * it (as a valid Counters record would start), non-blocking: what the socket takes.
 * Returns the bytes sent. */
size_t atk_partial_frame(int fd, uint64_t seq, size_t frame_bytes, size_t keep);

/* HTTP clients: nclients threads GET path on 127.0.0.1:port in a loop until stopped. */
struct atk_http_load {
	pthread_t t[16];
	unsigned n;
	int port;
	char path[128];
	_Atomic bool stop;
	pthread_mutex_t mu;
	unsigned long long requests, ok;
	double *ms; /* latency of each answered request */
	size_t nms, capms;
};
int atk_http_load_start(struct atk_http_load *l, int port, const char *path, unsigned nclients);
void atk_http_load_stop(struct atk_http_load *l);
void atk_http_load_free(struct atk_http_load *l);
/* One GET: the status (0: no answer within timeout_ms); headers and body into buf (may be NULL). */
int atk_http_get(int port, const char *path, int timeout_ms, char *buf, size_t len);

/* A sustained pre-Hello flood: one thread per source address opening silent
 * connections as fast as it can (closing the ones the collector closed, and its
 * own after hold_ms, at most max_open per thread) until stopped. */
struct atk_flood {
	pthread_t t[8];
	unsigned n;
	int port;
	const char *src[8];
	int hold_ms;
	unsigned max_open;
	_Atomic bool stop;
	unsigned long long opened[8];
};
int atk_flood_start(struct atk_flood *f, int port, const char *const *src, unsigned nsrc, int hold_ms,
		    unsigned max_open);
/* Stop; returns the connections opened in all. */
unsigned long long atk_flood_stop(struct atk_flood *f);

/* Sorting helpers for the figures: p in [0,1] of v[0..n) (sorted in place), 0 if n == 0. */
double atk_quantile(double *v, size_t n, double p);

#endif
