/* The machine model JSON (collector/edag/README.md), read with the one JSON
 * reader (common/json_read.h), and --cache level specs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"
#include "json_read.h"

/* A number, or a string "32K"/"1M"/"64" (sizes). */
static int jnumber(struct json_rd *p, double *out)
{
	if (json_rd_peek(p, '"')) {
		char buf[40];
		if (json_rd_string(p, buf, sizeof(buf)) < 0)
			return -EINVAL;
		char *end;
		double v = strtod(buf, &end);
		if (end == buf)
			return json_rd_fail(p, "'%s' is not a number", buf);
		if (*end == 'K' || *end == 'k')
			v *= 1024, end++;
		else if (*end == 'M' || *end == 'm')
			v *= 1024 * 1024, end++;
		if (*end == 'i' && end[1] == 'B')
			end += 2;
		else if (*end == 'B')
			end++;
		if (*end)
			return json_rd_fail(p, "'%s' is not a size", buf);
		*out = v;
		return 0;
	}
	double v;
	if (json_rd_number(p, &v) < 0)
		return -EINVAL;
	if (!isfinite(v))
		return json_rd_fail(p, "expected a number");
	*out = v;
	return 0;
}

struct jlevel {
	struct edag_cache_level *l;
	unsigned idx;
};

static int jnum_u32(struct json_rd *p, const char *what, uint64_t max, uint64_t *out)
{
	double v;
	if (jnumber(p, &v) < 0)
		return -EINVAL;
	if (!(v >= 0) || v > (double)max || v != floor(v))
		return json_rd_fail(p, "%s must be an integer in 0..%llu", what,
			    (unsigned long long)max);
	*out = (uint64_t)v;
	return 0;
}

static int level_key(struct json_rd *p, const char *key, void *arg)
{
	struct jlevel *jl = arg;
	uint64_t v;
	double d;
	if (json_rd_null(p))
		return 0; /* unknown: filled in by level_complete() */
	if (strcmp(key, "latency_cycles") == 0) { /* calibration: measured, fractional */
		if (jnumber(p, &d) < 0 || !(d >= 0) || d > (double)(1u << 20))
			return json_rd_fail(p, "latency_cycles must be in 0..%u", 1u << 20);
		jl->l->latency = (uint32_t)lround(d);
		return 0;
	}
	if (strcmp(key, "name") == 0)
		return json_rd_string(p, jl->l->name, sizeof(jl->l->name));
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
		return json_rd_skip(p);
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

static int cost_key(struct json_rd *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	int c = edag_class_parse(key, strlen(key));
	if (c < 0)
		return json_rd_skip(p);
	uint64_t v;
	if (jnum_u32(p, "a class cost", 1u << 20, &v) < 0)
		return -EINVAL;
	cfg->class_cost[c] = (uint32_t)v;
	return 0;
}

struct caches {
	struct edag_config *cfg;
	bool measured;
};

static int cache_elem(struct json_rd *p, size_t i, void *arg)
{
	struct caches *c = arg;
	struct edag_config *cfg = c->cfg;
	(void)i;
	if (cfg->nlevels >= EDAG_MAX_LEVELS)
		return json_rd_fail(p, "more than %d cache levels", EDAG_MAX_LEVELS);
	struct jlevel jl = {.l = &cfg->level[cfg->nlevels], .idx = cfg->nlevels};
	memset(jl.l, 0, sizeof(*jl.l));
	snprintf(jl.l->name, sizeof(jl.l->name), "L%u", cfg->nlevels + 1);
	if (json_rd_object(p, level_key, &jl) < 0)
		return -EINVAL;
	if (jl.l->size == 0)
		return json_rd_fail(p, "cache level %u without a size", cfg->nlevels + 1);
	if (c->measured)
		level_complete(jl.l);
	cfg->nlevels++;
	return 0;
}

static int machine_key(struct json_rd *p, const char *key, void *arg)
{
	struct edag_config *cfg = arg;
	double v;
	if (json_rd_null(p))
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
		return json_rd_object(p, cost_key, cfg);
	/* "caches": hand-written, checked as written; "cache_levels": measured by
	 * `collector calibrate --model`, completed into a geometry the model can simulate */
	bool measured = strcmp(key, "cache_levels") == 0;
	if (strcmp(key, "caches") == 0 || measured) {
		struct caches c = {cfg, measured};
		cfg->nlevels = 0;
		return json_rd_array(p, cache_elem, &c);
	}
	return json_rd_skip(p);
}

int edag_machine_parse(const char *json, size_t len, struct edag_config *cfg, char *err, size_t errlen)
{
	struct edag_config tmp = *cfg;
	struct json_rd p;
	json_rd_init(&p, json, len, "machine model", err, errlen);
	if (json_rd_object(&p, machine_key, &tmp) < 0 || json_rd_end(&p) < 0)
		return -EINVAL;
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
