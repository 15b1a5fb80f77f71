/* Builds the agent's records as whole frames (varint length + Envelope):
 * Counters with event-name interning and delta-encoded timestamps, Heartbeat,
 * Hello. The builder holds the per-session interning state only. */
#ifndef AGENT_RECORD_H
#define AGENT_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "events.h"
#include "profiler.pb-c.h"

struct record_builder {
	uint64_t base_ns; /* Hello.base_ns */
	int32_t pid;      /* Counters.pid: target pid, -1 system-wide */
	size_t max_frame;
	size_t nevents;
	struct event_desc events[EVENTS_MAX]; /* event id = index + 1 */
	bool declared[EVENTS_MAX];
};

void record_builder_init(struct record_builder *rb, uint64_t base_ns, int32_t pid, const struct event_desc *ev,
			 size_t nev, size_t max_frame);
/* Forget which events were declared: the next Counters record declares them
 * again (call when the spool dropped records, which may have held the only
 * declarations the collector would have seen). */
void record_builder_redeclare(struct record_builder *rb);
/* Session-local id of event index i. */
static inline uint32_t record_event_id(size_t i)
{
	return (uint32_t)i + 1;
}

/* One Counters record of nrows rows over all events of the builder.
 * t_ns[r]: absolute CLOCK_MONOTONIC end of row r; values[r * nevents + c]:
 * increment of event c in row r; pct: same shape, or NULL when all ran 100%.
 * Declares (new_events) the events not declared before in this session.
 * Returns 0 with a malloc'd frame, or -errno (-EMSGSIZE: over max_frame). */
int record_counters_frame(struct record_builder *rb, uint64_t seq, const uint64_t *t_ns, size_t nrows,
			  const uint64_t *values, const uint32_t *pct, uint8_t **frame, size_t *len);

int record_heartbeat_frame(const struct record_builder *rb, uint64_t seq, uint64_t t_ns, uint64_t spool_dropped,
			   uint64_t spool_bytes, uint8_t **frame, size_t *len);

/* Hello frame (seq 0). */
int record_hello_frame(const Prof__Hello *hello, size_t max_frame, uint8_t **frame, size_t *len);

#endif
