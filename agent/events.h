/* Event names of the counting mode: the table of names the agent knows
 * (software, generic hardware, raw rNNNN) and the -e list parser. Pure: no
 * system calls, so the parser is unit-tested on any machine. */
#ifndef AGENT_EVENTS_H
#define AGENT_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EVENTS_MAX 32u       /* events in one -e list */
#define EVENT_NAME_MAX 40u

struct event_desc {
	char name[EVENT_NAME_MAX]; /* canonical name ("page-faults" for "faults"), raw as given ("r1a") */
	uint32_t type;             /* perf_event_attr.type */
	uint64_t config;           /* perf_event_attr.config */
	const char *unit;          /* "ns" for time events, "" for counts */
};

/* Look up one name (canonical, alias or rNNNN). Returns 0 or -ENOENT. */
int events_lookup(const char *name, struct event_desc *out);

/* Parse a comma list ("cycles,cs,r11"). Returns 0 and fills out[0..*n), or
 * -EINVAL with a user-facing reason in err (unknown name: the message lists
 * the valid names; empty item; duplicate; more than max events). */
int events_parse(const char *list, struct event_desc *out, size_t max, size_t *n, char *err, size_t errlen);

/* True for events that need a hardware PMU (generic hardware, raw, cache). */
bool events_is_hardware(const struct event_desc *e);

/* True for time events counted in ns (task-clock, cpu-clock). */
bool events_is_time(const struct event_desc *e);

/* Comma-separated list of every valid name, aliases in parentheses. */
void events_valid_names(char *buf, size_t buflen);

/* The default lists: hardware (used when the PMU works) and software. */
size_t events_default_hw(struct event_desc *out, size_t max);
size_t events_default_sw(struct event_desc *out, size_t max);
/* "task-clock, page-faults, context-switches, cpu-migrations" */
const char *events_default_sw_names(void);

#endif
