#include "record.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "frame.h"

void record_builder_init(struct record_builder *rb, uint64_t base_ns, int32_t pid, const struct event_desc *ev,
			 size_t nev, size_t max_frame)
{
	memset(rb, 0, sizeof(*rb));
	rb->base_ns = base_ns;
	rb->pid = pid;
	rb->max_frame = max_frame;
	rb->nevents = nev > EVENTS_MAX ? EVENTS_MAX : nev;
	if (rb->nevents)
		memcpy(rb->events, ev, rb->nevents * sizeof(*ev));
}

void record_builder_redeclare(struct record_builder *rb)
{
	memset(rb->declared, 0, sizeof(rb->declared));
}

int record_counters_frame(struct record_builder *rb, uint64_t seq, const uint64_t *t_ns, size_t nrows,
			  const uint64_t *values, const uint32_t *pct, uint8_t **frame, size_t *len)
{
	size_t nev = rb->nevents;
	if (nrows == 0 || nev == 0 || seq == 0)
		return -EINVAL;
	Prof__EventDesc descs[EVENTS_MAX];
	Prof__EventDesc *newp[EVENTS_MAX];
	uint32_t ids[EVENTS_MAX];
	size_t nnew = 0;
	for (size_t i = 0; i < nev; i++) {
		ids[i] = record_event_id(i);
		if (rb->declared[i])
			continue;
		Prof__EventDesc *d = &descs[nnew];
		prof__event_desc__init(d);
		d->id = ids[i];
		d->name = rb->events[i].name;
		d->type = rb->events[i].type;
		d->config = rb->events[i].config;
		d->unit = (char *)(rb->events[i].unit ? rb->events[i].unit : "");
		newp[nnew++] = d;
	}
	uint64_t *dt = malloc(nrows * sizeof(*dt));
	if (!dt)
		return -ENOMEM;
	uint64_t prev = rb->base_ns;
	for (size_t r = 0; r < nrows; r++) {
		dt[r] = t_ns[r] > prev ? t_ns[r] - prev : 0;
		if (t_ns[r] > prev)
			prev = t_ns[r];
	}
	bool all100 = true;
	if (pct)
		for (size_t i = 0; i < nrows * nev; i++)
			if (pct[i] != 100)
				all100 = false;

	Prof__Counters c;
	prof__counters__init(&c);
	c.n_new_events = nnew;
	c.new_events = newp;
	c.n_event_ids = nev;
	c.event_ids = ids;
	c.n_t_ns = nrows;
	c.t_ns = dt;
	c.n_values = nrows * nev;
	c.values = (uint64_t *)values;
	if (pct && !all100) {
		c.n_running_pct = nrows * nev;
		c.running_pct = (uint32_t *)pct;
	}
	c.pid = rb->pid;
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	int rc = frame_encode(&env, rb->max_frame, frame, len);
	free(dt);
	if (rc == 0)
		for (size_t i = 0; i < nev; i++)
			rb->declared[i] = true;
	return rc;
}

int record_heartbeat_frame(const struct record_builder *rb, uint64_t seq, uint64_t t_ns, uint64_t spool_dropped,
			   uint64_t spool_bytes, uint8_t **frame, size_t *len)
{
	Prof__Heartbeat hb;
	prof__heartbeat__init(&hb);
	hb.t_ns = t_ns > rb->base_ns ? t_ns - rb->base_ns : 0;
	hb.spool_dropped = spool_dropped;
	hb.spool_bytes = spool_bytes;
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	return frame_encode(&env, rb->max_frame, frame, len);
}

int record_hello_frame(const Prof__Hello *hello, size_t max_frame, uint8_t **frame, size_t *len)
{
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.seq = 0;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = (Prof__Hello *)hello;
	return frame_encode(&env, max_frame, frame, len);
}
