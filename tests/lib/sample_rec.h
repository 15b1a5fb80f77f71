/* A Samples record as the store tests write it: the keys' arrays (the
 * caller's), the record's time 1 ms x seq over a 1 ms interval at 99 Hz, in
 * an Envelope of that seq. Fields beyond these (declarations, events) the
 * caller sets on *sm after. */
#ifndef TESTS_LIB_SAMPLE_REC_H
#define TESTS_LIB_SAMPLE_REC_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

struct sample_rec_keys {
	size_t n;
	int32_t *pid, *tid;
	uint64_t *ip;
	uint32_t *stack_id;
	uint64_t *count;
};

/* The key-id tests' record of n <= SAMPLE_REC_PATTERN_MAX keys: pid and tid 300 + i % 3, ip base + 16 i,
 * count 1 + (i + seq) % 5, stack i % 7; k points into the arrays. */
#define SAMPLE_REC_PATTERN_MAX 64
struct sample_rec_pattern {
	int32_t pid[SAMPLE_REC_PATTERN_MAX], tid[SAMPLE_REC_PATTERN_MAX];
	uint64_t ip[SAMPLE_REC_PATTERN_MAX], count[SAMPLE_REC_PATTERN_MAX];
	uint32_t stack[SAMPLE_REC_PATTERN_MAX];
	struct sample_rec_keys k;
};

/* Fills *p (n capped at SAMPLE_REC_PATTERN_MAX); the counts' sum. */
uint64_t sample_rec_pattern(struct sample_rec_pattern *p, uint64_t seq, size_t n, uint64_t base);
/* The counts' sum of that pattern, without filling one (any n). */
uint64_t sample_rec_pattern_sum(uint64_t seq, size_t n);

struct store;

/* The session of agent (boot 1, board "host", a wall clock at 2023-11-14) opened on s, not committed:
 * 0 with its id in *sid, or the store's -errno. */
int sample_rec_session(struct store *s, const char *agent, int64_t *sid);

void sample_rec_init(Prof__Samples *sm, Prof__Envelope *env, uint64_t seq, const struct sample_rec_keys *k);

#endif
