/* The filter options every query command shares (query.h): durations, times,
 * lists, the grouping. */
#include <ctype.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fail.h"
#include "query.h"

static const char *const group_names[] = {"function", "module", "process", "thread", "agent", "stack"};

void query_opts_init(struct query_opts *o, int64_t now_ns)
{
	memset(o, 0, sizeof(*o));
	if (now_ns == 0) {
		struct timespec ts;
		clock_gettime(CLOCK_REALTIME, &ts);
		now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	}
	o->now_ns = now_ns;
	o->by = QUERY_BY_FUNCTION;
}

int query_parse_duration(const char *s, int64_t *ns)
{
	static const struct {
		const char *unit;
		int64_t ns;
	} units[] = {{"ms", 1000000},	      {"s", 1000000000},	  {"m", 60000000000},
		     {"h", 3600000000000},    {"d", 86400000000000}, {"w", 604800000000000}};
	if (!s || !*s)
		return -EINVAL;
	int64_t total = 0;
	const char *p = s;
	while (*p) {
		if (!isdigit((unsigned char)*p))
			return -EINVAL;
		errno = 0;
		char *end;
		unsigned long long v = strtoull(p, &end, 10);
		if (errno || v > (unsigned long long)INT64_MAX)
			return -ERANGE;
		size_t ul = 0;
		int64_t mult = 0;
		for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++) {
			size_t l = strlen(units[i].unit);
			if (strncmp(end, units[i].unit, l) == 0 && l > ul) {
				/* "m" must not take the "m" of "ms" */
				ul = l;
				mult = units[i].ns;
			}
		}
		if (!mult)
			return -EINVAL; /* a unit is required: a bare number is a time */
		if ((int64_t)v > (INT64_MAX - total) / mult)
			return -ERANGE;
		total += (int64_t)v * mult;
		p = end + ul;
	}
	if (total <= 0)
		return -EINVAL;
	*ns = total;
	return 0;
}

/* YYYY-MM-DD[(T| )hh:mm[:ss[.frac]]][Z|±hh[:]mm]; no zone = UTC. */
static int parse_iso(const char *s, int64_t *unix_ns)
{
	int y, mo, d, h = 0, mi = 0, n = 0;
	double sec = 0;
	if (sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) != 3 || n != 10)
		return -EINVAL;
	const char *p = s + n;
	if (*p == 'T' || *p == 't' || *p == ' ') {
		int m = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &h, &mi, &m) != 2 || m != 5)
			return -EINVAL;
		p += 1 + m;
		if (*p == ':') {
			char *end;
			if (!isdigit((unsigned char)p[1]))
				return -EINVAL;
			sec = strtod(p + 1, &end);
			p = end;
		}
	}
	int64_t off = 0;
	if (*p == 'Z' || *p == 'z') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int oh = 0, om = 0, m = 0;
		if (sscanf(p + 1, "%2d:%2d%n", &oh, &om, &m) == 2 && m == 5)
			;
		else if (sscanf(p + 1, "%2d%2d%n", &oh, &om, &m) == 2 && m == 4)
			;
		else if (sscanf(p + 1, "%2d%n", &oh, &m) == 1 && m == 2)
			om = 0;
		else
			return -EINVAL;
		off = ((int64_t)oh * 3600 + om * 60) * (*p == '-' ? -1 : 1);
		p += 1 + m;
	}
	if (*p || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec < 0 || sec >= 61 || y < 1970)
		return -EINVAL;
	struct tm tm = {.tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_hour = h, .tm_min = mi};
	time_t t = timegm(&tm);
	if (t == (time_t)-1)
		return -EINVAL;
	*unix_ns = ((int64_t)t - off) * 1000000000 + (int64_t)(sec * 1e9 + 0.5);
	return 0;
}

int query_parse_time(const char *s, int64_t now_ns, int64_t *unix_ns)
{
	if (!s || !*s)
		return -EINVAL;
	if (strcmp(s, "now") == 0) { /* --until now (issue 39: refused) */
		*unix_ns = now_ns;
		return 0;
	}
	int64_t d;
	if (query_parse_duration(s, &d) == 0) {
		*unix_ns = now_ns - d;
		return 0;
	}
	if (strchr(s, '-') && parse_iso(s, unix_ns) == 0)
		return 0;
	/* unix seconds, with an optional fraction: decimal digits only (strtod alone took 0x10 and 1e9) */
	size_t digits = strspn(s, "0123456789");
	if (digits == 0 || (s[digits] && (s[digits] != '.' || !isdigit((unsigned char)s[digits + 1]) ||
					  s[digits + 1 + strspn(s + digits + 1, "0123456789")])))
		return -EINVAL;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (errno || *end || end == s || v < 0 || v > 9.2e9)
		return -EINVAL;
	*unix_ns = (int64_t)(v * 1e9);
	return 0;
}

int query_parse_group(const char *s, enum query_group *g)
{
	for (size_t i = 0; i < sizeof(group_names) / sizeof(group_names[0]); i++)
		if (strcmp(s, group_names[i]) == 0) {
			*g = (enum query_group)i;
			return 0;
		}
	return -EINVAL;
}

const char *query_group_name(enum query_group g)
{
	return (unsigned)g < sizeof(group_names) / sizeof(group_names[0]) ? group_names[g] : "?";
}

/* The copies that list items point into, freed by query_opts_free(). */
struct opts_arena {
	size_t n;
	char *copies[];
};

static char *keep_copy(struct query_opts *o, const char *arg)
{
	struct opts_arena *a = o->priv;
	size_t n = a ? a->n : 0;
	struct opts_arena *na = realloc(a, sizeof(*na) + (n + 1) * sizeof(char *));
	if (!na)
		return NULL;
	na->n = n;
	o->priv = na;
	char *c = strdup(arg);
	if (c)
		na->copies[na->n++] = c;
	return c;
}

void query_opts_free(struct query_opts *o)
{
	struct opts_arena *a = o->priv;
	for (size_t i = 0; a && i < a->n; i++)
		free(a->copies[i]);
	free(a);
	o->priv = NULL;
}

/* Comma-separated items appended to list. */
static int add_list(struct query_opts *o, const char *arg, const char **list, size_t *n, const char *what,
		    char *err, size_t errlen)
{
	char *copy = keep_copy(o, arg);
	if (!copy)
		return fail(err, errlen, "out of memory");
	char *save = NULL;
	int any = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (*n >= QUERY_MAX_LIST)
			return fail(err, errlen, "--%s: more than %d values", what, QUERY_MAX_LIST);
		list[(*n)++] = tok;
		any = 1;
	}
	if (!any)
		return fail(err, errlen, "--%s wants a value", what);
	return 1;
}

static int add_ints(const char *arg, int64_t min, int64_t max, int64_t *out64, int32_t *out32, size_t *n,
		    const char *what, char *err, size_t errlen)
{
	const char *p = arg;
	for (;;) {
		char *end;
		errno = 0;
		long long v = strtoll(p, &end, 10);
		/* errno: strtoll clamps 2^63 to INT64_MAX; a sign or space is not a digit */
		if (end == p || errno || !isdigit((unsigned char)*p) || v < min || v > max ||
		    (*end && *end != ','))
			return fail(err, errlen, "--%s wants numbers from %lld to %lld (comma-separated), not '%s'",
				    what, (long long)min, (long long)max, arg);
		if (*n >= QUERY_MAX_LIST)
			return fail(err, errlen, "--%s: more than %d values", what, QUERY_MAX_LIST);
		if (out64)
			out64[*n] = v;
		else
			out32[*n] = (int32_t)v;
		(*n)++;
		if (!*end)
			return 1;
		p = end + 1;
	}
}

int query_opt(struct query_opts *o, int ch, const char *arg, char *err, size_t errlen)
{
	struct query_filter *f = &o->f;
	int64_t t;
	switch (ch) {
	case QUERY_OPT_SINCE:
	case QUERY_OPT_UNTIL:
		if (query_parse_time(arg, o->now_ns, &t) < 0)
			return fail(err, errlen,
				    "--%s wants a duration (10m, 2h, 7d), an ISO-8601 time (2026-12-03T18:00:00Z) or "
				    "unix seconds, not '%s'",
				    ch == QUERY_OPT_SINCE ? "since" : "until", arg);
		if (ch == QUERY_OPT_SINCE)
			f->since_ns = t;
		else
			f->until_ns = t;
		return 1;
	case QUERY_OPT_AGENT: return add_list(o, arg, f->agents, &f->nagents, "agent", err, errlen);
	case QUERY_OPT_BOARD: return add_list(o, arg, f->boards, &f->nboards, "board", err, errlen);
	case QUERY_OPT_COMM: return add_list(o, arg, f->comms, &f->ncomms, "comm", err, errlen);
	case QUERY_OPT_PID: return add_ints(arg, 1, INT32_MAX, NULL, f->pids, &f->npids, "pid", err, errlen);
	case QUERY_OPT_SESSION:
		return add_ints(arg, 1, INT64_MAX, f->sessions, NULL, &f->nsessions, "session", err, errlen);
	case QUERY_OPT_BY:
		if (query_parse_group(arg, &o->by) < 0)
			return fail(err, errlen, "--by wants function, module, process, thread, agent or stack, not '%s'",
				    arg);
		o->by_set = true;
		return 1;
	case QUERY_OPT_SYMFS: o->symfs = arg; return 1;
	case QUERY_OPT_DEBUG_DIR: o->debug_dir = arg; return 1;
	case QUERY_OPT_KALLSYMS: o->kallsyms = arg; return 1;
	default: return 0;
	}
}

int query_opts_check(const struct query_opts *o, char *err, size_t errlen)
{
	if (o->f.since_ns && o->f.until_ns && o->f.since_ns >= o->f.until_ns)
		return fail(err, errlen, "--since must be before --until");
	return 0;
}

bool query_filter_any(const struct query_filter *f)
{
	return f->since_ns || f->until_ns || f->nagents || f->nboards || f->ncomms || f->npids;
}
