/* What the ingest benchmarks share (ingest_store.c, ingest_cl.c; header only: each bench is one
 * program): CPU and wall clocks, the xorshift generator of their synthetic data, frames encoded
 * as the agent encodes them (frame_encode of an Envelope) starting with the same Hello, and the
 * ingest itself: the frames through the collector's own path (ingest_frame: decode, validate,
 * store_put_record) into a fresh SQLite store opened as `collector --listen` opens it
 * (synchronous=FULL), committed every BENCH_WINDOW frames as the server's ack window does. */
#ifndef BENCH_INGEST_FRAMES_H
#define BENCH_INGEST_FRAMES_H

#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "frame.h"
#include "server/ingest.h"
#include "store/store.h"

#define BENCH_WINDOW 64u /* records per commit: the agent's unacked window */

static inline double bench_cpu_s(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
	       ru.ru_stime.tv_usec / 1e6;
}

static inline double bench_now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t bench_rng = 0x9e3779b97f4a7c15ull;
static inline uint64_t bench_rand(void)
{
	bench_rng ^= bench_rng << 13;
	bench_rng ^= bench_rng >> 7;
	bench_rng ^= bench_rng << 17;
	return bench_rng;
}

static inline uint8_t *bench_encode(const Prof__Envelope *env, size_t *len)
{
	uint8_t *b = NULL;
	if (frame_encode(env, 1 << 20, &b, len) < 0) {
		fprintf(stderr, "frame_encode failed\n");
		exit(1);
	}
	return b;
}

/* The first frame of a session: the synthetic board's Hello. */
static inline uint8_t *bench_hello_frame(size_t *len)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "bench-board";
	h.boot_id = 42;
	h.board = "bench";
	h.realtime_ns = 1700000000000000000ull;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	return bench_encode(&env, len);
}

/* The payload of a frame (past its varint length prefix). */
static inline const uint8_t *bench_payload(const uint8_t *f, size_t len, size_t *plen)
{
	size_t i = 0;
	uint64_t v = 0;
	for (int shift = 0; i < len && i < 10; shift += 7) {
		v |= (uint64_t)(f[i] & 0x7f) << shift;
		if (!(f[i++] & 0x80))
			break;
	}
	*plen = (size_t)v;
	return f + i;
}

/* Frames buf[0..n) into a fresh store at path (any old one and its WAL removed first); the
 * wall and CPU seconds from the first decode to the last commit's fsync. 0, or -1 on an error
 * (said on stderr). */
static inline int bench_ingest(uint8_t *const *buf, const size_t *len, size_t n, const char *path,
			       double *wall, double *cpu)
{
	char wal[700];
	snprintf(wal, sizeof(wal), "%s-wal", path);
	unlink(path);
	unlink(wal);
	struct store *s;
	if (store_open(path, STORE_SYNC_FULL, &s) < 0)
		return -1;
	struct ingest_conn c;
	ingest_init(&c, s, "bench");
	double t0 = bench_now_s(), c0 = bench_cpu_s();
	for (size_t i = 0; i < n; i++) {
		size_t plen;
		const uint8_t *p = bench_payload(buf[i], len[i], &plen);
		if (ingest_frame(&c, p, plen) < 0) {
			fprintf(stderr, "ingest: %s\n", c.err);
			return -1;
		}
		if ((i % BENCH_WINDOW == 0 || i + 1 == n) && store_commit(s) < 0)
			return -1;
	}
	*wall = bench_now_s() - t0;
	*cpu = bench_cpu_s() - c0;
	ingest_free(&c);
	store_close(s);
	return 0;
}

#endif
