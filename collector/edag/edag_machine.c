/* The machine model JSON (collector/edag/README.md) and --cache level specs. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "trace/lex.h"

#define perr lx_err

struct jp {
	const char *start, *s, *e;
	char *err;
	size_t errlen;
};

static void jws(struct jp *p)
{
	while (p->s < p->e && isspace((unsigned char)*p->s))
		p->s++;
}

static int jexpect(struct jp *p, char c)
{
	jws(p);
	if (p->s >= p->e || *p->s != c)
		return perr(p->err, p->errlen, "machine model: expected '%c' at offset %td", c,
			    p->s - p->start);
	p->s++;
	return 0;
}

static int jstring(struct jp *p, char *out, size_t outlen)
{
	jws(p);
	if (p->s >= p->e || *p->s != '"')
		return perr(p->err, p->errlen, "machine model: expected a string");
	p->s++;
	size_t n = 0;
	while (p->s < p->e && *p->s != '"') {
		char c = *p->s++;
		if (c == '\\' && p->s < p->e)
			c = *p->s++;
		if (n + 1 < outlen)
			out[n++] = c;
	}
	if (p->s >= p->e)
		return perr(p->err, p->errlen, "machine model: unterminated string");
	p->s++;
	if (outlen)
		out[n] = 0;
	return 0;
}

/* A number, or a string "32K"/"1M"/"64" (sizes). */
static int jnumber(struct jp *p, double *out)
{
	jws(p);
	char buf[40];
	if (p->s < p->e && *p->s == '"') {
		if (jstring(p, buf, sizeof(buf)) < 0)
			return -EINVAL;
		char *end;
		double v = strtod(buf, &end);
		if (end == buf)
			return perr(p->err, p->errlen, "machine model: '%s' is not a number", buf);
		if (*end == 'K' || *end == 'k')
			v *= 1024, end++;
		else if (*end == 'M' || *end == 'm')
			v *= 1024 * 1024, end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
		if (*end)
			return perr(p->err, p->errlen, "machine model: '%s' is not a size", buf);
		*out = v;
		return 0;
	}
	size_t n = 0;
	while (p->s + n < p->e && n + 1 < sizeof(buf) && strchr("+-0123456789.eE", p->s[n]))
		n++;
	memcpy(buf, p->s, n);
	buf[n] = 0;
	char *end;
	double v = strtod(buf, &end);
	if (n == 0 || *end || !isfinite(v))
		return perr(p->err, p->errlen, "machine model: expected a number");
	p->s += n;
	*out = v;
	return 0;
}

static int jskip(struct jp *p, int depth)
{
	jws(p);
	if (p->s >= p->e || depth > 64)
		return perr(p->err, p->errlen, "machine model: unexpected end or nesting too deep");
	char c = *p->s;
	if (c == '"') {
		char tmp[1];
		return jstring(p, tmp, 0);
	}
	if (c == '{' || c == '[') {
		char close = c == '{' ? '}' : ']';
		p->s++;
		jws(p);
		if (p->s < p->e && *p->s == close) {
			p->s++;
			return 0;
		}
		for (;;) {
			if (c == '{') {
				char tmp[1];
				if (jstring(p, tmp, 0) < 0 || jexpect(p, ':') < 0)
					return -EINVAL;
			}
			if (jskip(p, depth + 1) < 0)
				return -EINVAL;
			jws(p);
			if (p->s < p->e && *p->s == ',') {
				p->s++;
				continue;
			}
			return jexpect(p, close);
		}
	}
	static const char *const lits[] = {"true", "false", "null"};
	for (int i = 0; i < 3; i++) {
		size_t l = strlen(lits[i]);
		if ((size_t)(p->e - p->s) >= l && memcmp(p->s, lits[i], l) == 0) {
			p->s += l;
			return 0;
		}
	}
	double d;
	return jnumber(p, &d);
}

/* Iterate an object: calls fn(p, key, arg) positioned on each value, which
 * must consume it. */
static int jobject(struct jp *p, int (*fn)(struct jp *, const char *, void *), void *arg)
{
	if (jexpect(p, '{') < 0)
		return -EINVAL;
	jws(p);
	if (p->s < p->e && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		char key[64];
		if (jstring(p, key, sizeof(key)) < 0 || jexpect(p, ':') < 0)
			return -EINVAL;
		if (fn(p, key, arg) < 0)
			return -EINVAL;
		jws(p);
		if (p->s < p->e && *p->s == ',') {
			p->s++;
			continue;
		}
		return jexpect(p, '}');
	}
}

struct jlevel {
	struct edag_cache_level *l;
	unsigned idx;
};

static int jnum_u32(struct jp *p, const char *what, uint64_t max, uint64_t *out)
{
	double v;
	if (jnumber(p, &v) < 0)
		return -EINVAL;
	if (!(v >= 0) || v > (double)max || v != floor(v))
		return perr(p->err, p->errlen, "machine model: %s must be an integer in 0..%llu", what,
			    (unsigned long long)max);
	*out = (uint64_t)v;
	return 0;
}

/* A JSON null (an unknown value in a calibrated model): consumed, returns 1. */
static int jnull(struct jp *p)
{
	jws(p);
	if (p->e - p->s >= 4 && memcmp(p->s, "null", 4) == 0) {
		p->s += 4;
		return 1;
	}
	return 0;
}

static int level_key(struct jp *p, const char *key, void *arg)
{
	struct jlevel *jl = arg;
	uint64_t v;
	double d;
	if (jnull(p))
		return 0; /* unknown: filled in by level_complete() */
	if (strcmp(key, "latency_cycles") == 0) { /* calibration: measured, fractional */
		if (jnumber(p, &d) < 0 || !(d >= 0) || d > (double)(1u << 20))
			return perr(p->err, p->errlen, "machine model: latency_cycles must be in 0..%u", 1u << 20);
		jl->l->latency = (uint32_t)lround(d);
		return 0;
	}
	if (strcmp(key, "name") == 0)
		return jstring(p, jl->l->name, sizeof(jl->l->name));
	if (strcmp(key, "size") == 0 || strcmp(key, "size_bytes") == 0) {
		if (jnum_u32(p, "size", 1ull << 34, &v) < 0)
			return -EINVAL;
		jl->l->size = v;
	} else if (strcmp(key, "assoc") == 0 || strcmp(key, "ways") == 0) {
		if (jnum_u32(p, "assoc", 64, &v) < 0)
			return -EINVAL;
		jl->l->assoc = (uint32_t)v;
	} else if (strcmp(key, "line") == 0 || strcmp(key, "line_bytes") == 0) {
		if (jnum_u32(p, "line", 4096, &v) < 0)
			return -EINVAL;
		jl->l->line = (uint32_t)v;
	} else if (strcmp(key, "latency") == 0 || strcmp(key, "latency_cycles") == 0) {
		if (jnum_u32(p, "latency", 1u << 20, &v) < 0)
			return -EINVAL;
		jl->l->latency = (uint32_t)v;
	} else {
		return jskip(p, 1);
	}
	return 0;
}

/* Levels measured by calibration have sizes of plateaus (not a whole number of
 * sets) and may lack the associativity or line size: make a cache the model
 * can simulate — 8 ways and 64-byte lines where unknown, size rounded down to
 * a whole number of sets (at least one). */
static void level_complete(struct edag_cache_level *l)
{
	if (l->line == 0)
		l->line = 64;
	if (l->assoc == 0)
		l->assoc = 8;
	uint64_t set = (uint64_t)l->assoc * l->line;
	l->size = l->size < set ? set : l->size / set * set;
}

static int cost_key(struct jp *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	int c = edag_class_parse(key, strlen(key));
	if (c < 0)
		return jskip(p, 1);
	uint64_t v;
	if (jnum_u32(p, "a class cost", 1u << 20, &v) < 0)
		return -EINVAL;
	cfg->class_cost[c] = (uint32_t)v;
	return 0;
}

static int machine_key(struct jp *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	double v;
	if (jnull(p))
		return 0; /* unknown: keep the default */
	if (strcmp(key, "alpha0") == 0 || strcmp(key, "memory_latency") == 0) {
		uint64_t u;
		if (jnum_u32(p, "alpha0", 1u << 24, &u) < 0)
			return -EINVAL;
		cfg->alpha0 = (uint32_t)u;
		return 0;
	}
	if (strcmp(key, "m") == 0 || strcmp(key, "memory_slots") == 0) {
		if (jnumber(p, &v) < 0)
			return -EINVAL;
		cfg->m = v;
		return 0;
	}
	if (strcmp(key, "alpha") == 0) {
		if (jnumber(p, &v) < 0)
			return -EINVAL;
		cfg->alpha = v;
		return 0;
	}
	if (strcmp(key, "costs") == 0)
		return jobject(p, cost_key, cfg);
	/* "caches": hand-written, checked as written; "cache_levels": measured by
	 * `collector calibrate --model`, completed into a geometry the model can simulate */
	bool measured = strcmp(key, "cache_levels") == 0;
	if (strcmp(key, "caches") == 0 || measured) {
		if (jexpect(p, '[') < 0)
			return -EINVAL;
		cfg->nlevels = 0;
		jws(p);
		if (p->s < p->e && *p->s == ']') {
			p->s++;
			return 0;
		}
		for (;;) {
			if (cfg->nlevels >= EDAG_MAX_LEVELS)
				return perr(p->err, p->errlen, "machine model: more than %d cache levels",
					    EDAG_MAX_LEVELS);
			struct jlevel jl = {.l = &cfg->level[cfg->nlevels], .idx = cfg->nlevels};
			memset(jl.l, 0, sizeof(*jl.l));
			snprintf(jl.l->name, sizeof(jl.l->name), "L%u", cfg->nlevels + 1);
			if (jobject(p, level_key, &jl) < 0)
				return -EINVAL;
			if (jl.l->size == 0)
				return perr(p->err, p->errlen, "machine model: cache level %u without a size",
					    cfg->nlevels + 1);
			if (measured)
				level_complete(jl.l);
			cfg->nlevels++;
			jws(p);
			if (p->s < p->e && *p->s == ',') {
				p->s++;
				continue;
			}
			return jexpect(p, ']');
		}
	}
	return jskip(p, 1);
}

int edag_machine_parse(const char *json, size_t len, struct edag_config *cfg, char *err, size_t errlen)
{
	struct edag_config tmp = *cfg;
	struct jp p = {.start = json, .s = json, .e = json + len, .err = err, .errlen = errlen};
	if (jobject(&p, machine_key, &tmp) < 0)
		return -EINVAL;
	jws(&p);
	if (p.s != p.e)
		return perr(err, errlen, "machine model: trailing data after the object");
	if (edag_config_check(&tmp, err, errlen) < 0)
		return -EINVAL;
	*cfg = tmp;
	return 0;
}

int edag_cache_level_parse(const char *spec, struct edag_cache_level *out)
{
	memset(out, 0, sizeof(*out));
	char *end;
	errno = 0;
	double size = strtod(spec, &end);
	if (end == spec || errno || !(size > 0))
		return -EINVAL;
	if (*end == 'K' || *end == 'k')
		size *= 1024, end++;
	else if (*end == 'M' || *end == 'm')
		size *= 1024 * 1024, end++;
	if (*end != ':' || size > (double)(1ull << 34))
		return -EINVAL;
	unsigned long assoc, line, lat;
	char *p = end + 1;
	assoc = strtoul(p, &end, 10);
	if (end == p || *end != ':')
		return -EINVAL;
	p = end + 1;
	line = strtoul(p, &end, 10);
	if (end == p || *end != ':')
		return -EINVAL;
	p = end + 1;
	lat = strtoul(p, &end, 10);
	if (end == p || *end || assoc > 64 || line > 4096 || lat > (1u << 20))
		return -EINVAL;
	out->size = (uint64_t)size;
	out->assoc = (uint32_t)assoc;
	out->line = (uint32_t)line;
	out->latency = (uint32_t)lat;
	return 0;
}
