/* Counting perf events of a target as a loop source: one Counters record
 * per interval through the session, the running totals, the end-of-run
 * summary (perf stat's layout) and, on request, one line per event and
 * interval as the rows are taken (perf stat -I). Used by `agent stat` and
 * `agent profile`. */
#ifndef AGENT_COUNTER_SOURCE_H
#define AGENT_COUNTER_SOURCE_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "loop.h"
#include "session.h"
#include "target.h"

struct counter_source;

struct counter_source_opts {
	const char *events;    /* -e list, NULL: the defaults (software ones without a PMU) */
	unsigned interval_ms;  /* between Counters rows */
	FILE *interval_out;    /* non-NULL: print every row there as it is taken (perf stat -I) */
	bool roofline_events;  /* with the defaults: add the floating-point and last-level refill
				  events this CPU's PMU table knows (for the roofline's CPU dot) */
	const struct event_desc *share_pmu; /* non-NULL: a sampler will hold this hardware event
				  at the same time (agent profile): keep the counting events to what
				  fits next to it, so nothing is multiplexed (ARMv7: 4-6 counters) */
};

/* Parse the event list (no system calls yet). -EINVAL with a reason in err. */
int counter_source_new(struct counter_source **out, const struct counter_source_opts *o, char *err, size_t errlen);
/* Choose the events the kernel supports on t and open them (before target_release). */
int counter_source_open(struct counter_source *c, struct target *t, struct session *s, char *err, size_t errlen);
/* After target_release: start the interval timer and register with the loop. */
int counter_source_start(struct counter_source *c, struct loop *l, uint64_t start_ns);
/* The final row and stop counting (after the loop ended). */
void counter_source_finish(struct counter_source *c, uint64_t end_ns);
/* perf stat's summary of the totals. */
void counter_source_print_summary(const struct counter_source *c, uint64_t end_ns, const char *target, FILE *out);
size_t counter_source_nevents(const struct counter_source *c);
void counter_source_close(struct counter_source *c);

#endif
