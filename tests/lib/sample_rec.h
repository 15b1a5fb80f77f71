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

struct store;

/* The session of agent (boot 1, board "host", a wall clock at 2023-11-14) opened on s, not committed:
 * 0 with its id in *sid, or the store's -errno. */
int sample_rec_session(struct store *s, const char *agent, int64_t *sid);

void sample_rec_init(Prof__Samples *sm, Prof__Envelope *env, uint64_t seq, const struct sample_rec_keys *k);

#endif
