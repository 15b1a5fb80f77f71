#include "events.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <string.h>

struct event_name {
	const char *name;
	const char *alias; /* NULL if none */
	uint32_t type;
	uint64_t config;
};

static const struct event_name event_table[] = {
	{"task-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK},
	{"cpu-clock", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK},
	{"page-faults", "faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS},
	{"context-switches", "cs", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CONTEXT_SWITCHES},
	{"cpu-migrations", "migrations", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_MIGRATIONS},
	{"minor-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MIN},
	{"major-faults", NULL, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS_MAJ},
	{"cycles", "cpu-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES},
	{"instructions", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
	{"cache-references", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES},
	{"cache-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES},
	{"branches", "branch-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS},
	{"branch-misses", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES},
	{"bus-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES},
	{"ref-cycles", NULL, PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES},
	{"stalled-cycles-frontend", "idle-cycles-frontend", PERF_TYPE_HARDWARE,
	 PERF_COUNT_HW_STALLED_CYCLES_FRONTEND},
	{"stalled-cycles-backend", "idle-cycles-backend", PERF_TYPE_HARDWARE, PERF_COUNT_HW_STALLED_CYCLES_BACKEND},
};

#define NTABLE (sizeof(event_table) / sizeof(event_table[0]))

static const char *const default_hw[] = {"cycles",	 "instructions",     "cache-misses",  "branch-misses",
					 "task-clock", "page-faults", "context-switches", "cpu-migrations"};
static const char *const default_sw[] = {"task-clock", "page-faults", "context-switches", "cpu-migrations"};

static int parse_raw(const char *name, struct event_desc *out)
{
	/* rNNNN: 1..16 hex digits after 'r'. */
	if (name[0] != 'r' || name[1] == 0)
		return -ENOENT;
	size_t len = strlen(name + 1);
	if (len > 16)
		return -ENOENT;
	uint64_t v = 0;
	for (const char *p = name + 1; *p; p++) {
		int d;
		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else if (*p >= 'A' && *p <= 'F')
			d = *p - 'A' + 10;
		else
			return -ENOENT;
		v = (v << 4) | (uint64_t)d;
	}
	memset(out, 0, sizeof(*out));
	snprintf(out->name, sizeof(out->name), "r%llx", (unsigned long long)v);
	out->type = PERF_TYPE_RAW;
	out->config = v;
	out->unit = "";
	return 0;
}

int events_lookup(const char *name, struct event_desc *out)
{
	for (size_t i = 0; i < NTABLE; i++) {
		const struct event_name *e = &event_table[i];
		if (strcmp(name, e->name) == 0 || (e->alias && strcmp(name, e->alias) == 0)) {
			memset(out, 0, sizeof(*out));
			snprintf(out->name, sizeof(out->name), "%s", e->name);
			out->type = e->type;
			out->config = e->config;
			out->unit = events_is_time(out) ? "ns" : "";
			return 0;
		}
	}
	return parse_raw(name, out);
}

bool events_is_hardware(const struct event_desc *e)
{
	return e->type == PERF_TYPE_HARDWARE || e->type == PERF_TYPE_RAW || e->type == PERF_TYPE_HW_CACHE;
}

bool events_is_time(const struct event_desc *e)
{
	return e->type == PERF_TYPE_SOFTWARE &&
	       (e->config == PERF_COUNT_SW_TASK_CLOCK || e->config == PERF_COUNT_SW_CPU_CLOCK);
}

void events_valid_names(char *buf, size_t buflen)
{
	size_t off = 0;
	if (buflen == 0)
		return;
	buf[0] = 0;
	for (size_t i = 0; i < NTABLE && off < buflen; i++) {
		const struct event_name *e = &event_table[i];
		int n = e->alias ? snprintf(buf + off, buflen - off, "%s (%s), ", e->name, e->alias)
				 : snprintf(buf + off, buflen - off, "%s, ", e->name);
		if (n < 0)
			return;
		off += (size_t)n;
	}
	if (off < buflen)
		snprintf(buf + off, buflen - off, "rNNNN (raw PMU event, hex)");
}

int events_parse(const char *list, struct event_desc *out, size_t max, size_t *n, char *err, size_t errlen)
{
	*n = 0;
	if (!list || !*list) {
		snprintf(err, errlen, "empty event list (-e): give a comma-separated list such as task-clock,page-faults");
		return -EINVAL;
	}
	const char *p = list;
	for (;;) {
		const char *comma = strchr(p, ',');
		size_t len = comma ? (size_t)(comma - p) : strlen(p);
		char name[64];
		if (len == 0) {
			snprintf(err, errlen, "empty name in event list '%s'", list);
			return -EINVAL;
		}
		if (len >= sizeof(name)) {
			snprintf(err, errlen, "event name too long in '%s'", list);
			return -EINVAL;
		}
		memcpy(name, p, len);
		name[len] = 0;
		struct event_desc d;
		if (events_lookup(name, &d) < 0) {
			char valid[1024];
			events_valid_names(valid, sizeof(valid));
			snprintf(err, errlen, "unknown event '%s'; valid events: %s", name, valid);
			return -EINVAL;
		}
		for (size_t i = 0; i < *n; i++) {
			if (out[i].type == d.type && out[i].config == d.config) {
				snprintf(err, errlen, "event '%s' given twice (as '%s')", name, out[i].name);
				return -EINVAL;
			}
		}
		if (*n >= max) {
			snprintf(err, errlen, "too many events (at most %zu)", max);
			return -EINVAL;
		}
		out[(*n)++] = d;
		if (!comma)
			break;
		p = comma + 1;
	}
	return 0;
}

static size_t fill(const char *const *names, size_t count, struct event_desc *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < count && n < max; i++)
		if (events_lookup(names[i], &out[n]) == 0)
			n++;
	return n;
}

size_t events_default_hw(struct event_desc *out, size_t max)
{
	return fill(default_hw, sizeof(default_hw) / sizeof(default_hw[0]), out, max);
}

size_t events_default_sw(struct event_desc *out, size_t max)
{
	return fill(default_sw, sizeof(default_sw) / sizeof(default_sw[0]), out, max);
}

const char *events_default_sw_names(void)
{
	return "task-clock, page-faults, context-switches, cpu-migrations";
}
