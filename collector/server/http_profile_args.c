/* The /profile page's query string (http_profile_args.h). */
#include "http_profile_args.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

int profile_url_decode(const char *src, size_t n, char *dst, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)src[i];
		if (c == '+')
			c = ' ';
		else if (c == '%') {
			if (i + 2 >= n)
				return -EINVAL;
			int hi = hexval(src[i + 1]), lo = hexval(src[i + 2]);
			if (hi < 0 || lo < 0)
				return -EINVAL;
			c = hi * 16 + lo;
			i += 2;
		}
		if (c == 0 || o + 1 >= len)
			return -EINVAL;
		dst[o++] = (char)c;
	}
	dst[o] = '\0';
	return 0;
}

static void bad(struct profile_args *a, const char *name, const char *why)
{
	if (!a->err[0])
		snprintf(a->err, sizeof(a->err), "%s: %s", name, why);
}

static void take_time(struct profile_args *a, const char *name, const char *v, int64_t now_ns, int64_t *out,
		      bool *set)
{
	if (!v[0])
		return;
	if (query_parse_time(v, now_ns, out) < 0) {
		bad(a, name, "not a time (unix seconds, ISO-8601, 10m back, now)");
		return;
	}
	*set = true;
}

void profile_args_parse(const char *query, int64_t now_ns, unsigned window_s, struct profile_args *a,
			struct query_opts *qo)
{
	memset(a, 0, sizeof(*a));
	a->until_ns = now_ns;
	a->since_ns = now_ns - (int64_t)window_s * 1000000000;
	struct {
		const char *name;
		char *buf;
	} keys[] = {{"since", a->since},     {"until", a->until},     {"agent", a->agent},    {"a_since", a->a_since},
		    {"a_until", a->a_until}, {"b_since", a->b_since}, {"b_until", a->b_until}};
	for (const char *p = query; p && *p;) {
		size_t n = strcspn(p, "&");
		const char *eq = memchr(p, '=', n);
		if (n == 8 && memcmp(p, "offcpu=1", 8) == 0)
			a->offcpu = a->given = true;
		if (n == 6 && memcmp(p, "sens=1", 6) == 0)
			a->sens = a->given = true;
		if (eq) {
			size_t kl = (size_t)(eq - p);
			for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++) {
				if (strlen(keys[k].name) != kl || memcmp(p, keys[k].name, kl) != 0)
					continue;
				char v[PROFILE_ARG_MAX];
				if (profile_url_decode(eq + 1, n - kl - 1, v, sizeof(v)) < 0) {
					bad(a, keys[k].name, "malformed or too long");
					break;
				}
				if (v[0])
					a->given = true;
				if (k == 2 && v[0]) { /* agent: a list, repeatable */
					char err[128];
					if (query_opt(qo, QUERY_OPT_AGENT, v, err, sizeof(err)) < 0)
						bad(a, "agent", err);
					size_t used = strlen(a->agent);
					snprintf(a->agent + used, sizeof(a->agent) - used, "%s%s", used ? "," : "", v);
				} else if (k != 2)
					memcpy(keys[k].buf, v, strlen(v) + 1);
			}
		}
		p += n;
		if (*p == '&')
			p++;
	}
	bool s = false, u = false, as = false, au = false, bs = false, bu = false;
	take_time(a, "since", a->since, now_ns, &a->since_ns, &s);
	take_time(a, "until", a->until, now_ns, &a->until_ns, &u);
	take_time(a, "a_since", a->a_since, now_ns, &a->a_ns[0], &as);
	take_time(a, "a_until", a->a_until, now_ns, &a->a_ns[1], &au);
	take_time(a, "b_since", a->b_since, now_ns, &a->b_ns[0], &bs);
	take_time(a, "b_until", a->b_until, now_ns, &a->b_ns[1], &bu);
	if (a->since_ns >= a->until_ns) {
		bad(a, "since", "not before until");
		a->until_ns = now_ns;
		a->since_ns = now_ns - (int64_t)window_s * 1000000000;
	}
	if (as && au && bs && bu) {
		if (a->a_ns[0] >= a->a_ns[1] || a->b_ns[0] >= a->b_ns[1])
			bad(a, "compare", "each range's since must be before its until");
		else
			a->compare = true;
	} else if (as || au || bs || bu)
		bad(a, "compare", "give both ranges, A (a_since, a_until) and B (b_since, b_until)");
}
