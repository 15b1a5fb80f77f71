/* Many simulated agents in one process (one socket each, one epoll loop),
 * speaking the real protocol to a collector on loopback: Hello (answering a
 * Challenge when given a token), counters records at a fixed rate per agent,
 * replay from the last Ack after a reconnect. Records are a pure function of
 * (agent, seq), so replays resend exactly what was sent before. Bounded in
 * time: generation stops after `seconds`, the drain after `drain_s` more. */
#ifndef TESTS_LIB_LOADGEN_H
#define TESTS_LIB_LOADGEN_H

#include <stdint.h>

#include "auth.h"

struct loadgen_opts {
	int port;		       /* collector on 127.0.0.1:port */
	const int *ports;	       /* or several collectors: agent k uses ports[k % nports] */
	unsigned nports;
	unsigned agents;	       /* simulated agents (sockets) */
	unsigned rate;		       /* records per second per agent */
	double seconds;		       /* how long records are generated */
	double drain_s;		       /* then wait up to this long for the last acks */
	const char *prefix;	       /* agent ids are PREFIX-<n> */
	const struct auth_token *token; /* NULL: send Hello at once */
	int quiet;
};

struct loadgen_result {
	uint64_t generated;  /* distinct records (seqs) created, all agents */
	uint64_t acked;	     /* sum over agents of the highest seq acked */
	uint64_t frames_out; /* frames written (replays count again) */
	uint64_t connects, disconnects, errors;
	double elapsed_s;    /* from start to the end of the drain */
	double gen_s;	     /* generation phase */
	double p50_ms, p99_ms, max_ms; /* ack latency: first send of a record to the Ack covering it */
	unsigned agents_connected; /* agents whose Hello was acked at least once */
};

/* Returns 0 (the result says how it went) or a negative errno (setup failed). */
int loadgen_run(const struct loadgen_opts *o, struct loadgen_result *r);

/* Raise RLIMIT_NOFILE to at least n (as far as the hard limit allows); returns the new soft limit. */
long loadgen_raise_nofile(long n);

#endif
