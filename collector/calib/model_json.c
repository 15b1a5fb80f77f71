/* A small JSON reader for machine models: objects, arrays, strings (with
 * \uXXXX kept as '?' when not ASCII), numbers, true/false/null. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib_io.h"

struct jp {
	const char *s, *e, *start;
	char *err;
	size_t errlen;
	int depth;
};

static int jfail(struct jp *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(p->err, p->errlen, "machine model: %s at byte %ld", msg, (long)(p->s - p->start));
	return -EINVAL;
}

static void ws(struct jp *p)
{
	while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

static int expect(struct jp *p, char c)
{
	ws(p);
	if (p->s >= p->e || *p->s != c)
		return jfail(p, "expected '%c'", c);
	p->s++;
	return 0;
}

static int jstring(struct jp *p, char *out, size_t len)
{
	if (expect(p, '"') < 0)
		return -EINVAL;
	size_t n = 0;
	while (p->s < p->e && *p->s != '"') {
		char c = *p->s++;
		if ((unsigned char)c < 0x20)
			return jfail(p, "control character in a string");
		if (c == '\\') {
			if (p->s >= p->e)
				break;
			char q = *p->s++;
			switch (q) {
			case 'n': c = '\n'; break;
			case 't': c = '\t'; break;
			case 'r': c = '\r'; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'u': {
				if (p->e - p->s < 4)
					return jfail(p, "short \\u escape");
				char hex[5] = {p->s[0], p->s[1], p->s[2], p->s[3], 0};
				char *end;
				long v = strtol(hex, &end, 16);
				if (*end)
					return jfail(p, "bad \\u escape");
				p->s += 4;
				c = v > 0 && v < 0x80 ? (char)v : '?';
				break;
			}
			default: c = q; break;
			}
		}
		if (out && n + 1 < len)
			out[n++] = c;
	}
	if (p->s >= p->e)
		return jfail(p, "unterminated string");
	p->s++;
	if (out && len)
		out[n] = 0;
	return 0;
}

static int jnumber(struct jp *p, double *v)
{
	ws(p);
	if (p->e - p->s >= 4 && memcmp(p->s, "null", 4) == 0) {
		p->s += 4;
		*v = NAN;
		return 0;
	}
	char buf[64];
	size_t n = 0;
	while (p->s + n < p->e && n + 1 < sizeof(buf) && strchr("+-0123456789.eE", p->s[n]))
		n++;
	memcpy(buf, p->s, n);
	buf[n] = 0;
	char *end;
	*v = strtod(buf, &end);
	if (n == 0 || *end)
		return jfail(p, "expected a number");
	p->s += n;
	return 0;
}

static int jbool(struct jp *p, bool *v)
{
	ws(p);
	if (p->e - p->s >= 4 && memcmp(p->s, "true", 4) == 0) {
		p->s += 4;
		*v = true;
		return 0;
	}
	if (p->e - p->s >= 5 && memcmp(p->s, "false", 5) == 0) {
		p->s += 5;
		*v = false;
		return 0;
	}
	return jfail(p, "expected true or false");
}

typedef int (*key_fn)(struct jp *p, const char *key, void *arg);
static int jobject(struct jp *p, key_fn fn, void *arg);

static int skip_key(struct jp *p, const char *key, void *arg);

static int jskip(struct jp *p)
{
	ws(p);
	if (p->s >= p->e)
		return jfail(p, "unexpected end");
	if (++p->depth > 64)
		return jfail(p, "nested too deeply");
	int rc = 0;
	if (*p->s == '{') {
		rc = jobject(p, skip_key, NULL);
	} else if (*p->s == '[') {
		p->s++;
		ws(p);
		if (p->s < p->e && *p->s == ']') {
			p->s++;
		} else {
			for (;;) {
				if ((rc = jskip(p)) < 0)
					break;
				ws(p);
				if (p->s < p->e && *p->s == ',') {
					p->s++;
					continue;
				}
				rc = expect(p, ']');
				break;
			}
		}
	} else if (*p->s == '"') {
		rc = jstring(p, NULL, 0);
	} else if (*p->s == 't' || *p->s == 'f') {
		bool b;
		rc = jbool(p, &b);
	} else {
		double d;
		rc = jnumber(p, &d);
	}
	p->depth--;
	return rc;
}

static int skip_key(struct jp *p, const char *key, void *arg)
{
	(void)key;
	(void)arg;
	return jskip(p);
}

static int jobject(struct jp *p, key_fn fn, void *arg)
{
	if (expect(p, '{') < 0)
		return -EINVAL;
	ws(p);
	if (p->s < p->e && *p->s == '}') {
		p->s++;
		return 0;
	}
	for (;;) {
		char key[CALIB_NAME_MAX];
		if (jstring(p, key, sizeof(key)) < 0 || expect(p, ':') < 0 || fn(p, key, arg) < 0)
			return -EINVAL;
		ws(p);
		if (p->s < p->e && *p->s == ',') {
			p->s++;
			continue;
		}
		return expect(p, '}');
	}
}

struct param_ctx {
	struct calib_param p;
	bool have_value;
};

static int param_key(struct jp *p, const char *key, void *arg)
{
	struct param_ctx *c = arg;
	if (strcmp(key, "value") == 0) {
		c->have_value = true;
		return jnumber(p, &c->p.value);
	}
	if (strcmp(key, "unit") == 0)
		return jstring(p, c->p.unit, sizeof(c->p.unit));
	if (strcmp(key, "method") == 0)
		return jstring(p, c->p.method, sizeof(c->p.method));
	if (strcmp(key, "spread") == 0)
		return jnumber(p, &c->p.spread);
	if (strcmp(key, "confidence") == 0)
		return jnumber(p, &c->p.confidence);
	if (strcmp(key, "flagged") == 0)
		return jbool(p, &c->p.flagged);
	return jskip(p);
}

static int params_key(struct jp *p, const char *key, void *arg)
{
	struct calib_model *m = arg;
	struct param_ctx c = {.p = {.confidence = 1}};
	snprintf(c.p.name, sizeof(c.p.name), "%s", key);
	if (jobject(p, param_key, &c) < 0)
		return -EINVAL;
	if (!c.have_value)
		return jfail(p, "parameter %s has no value", key);
	if (isnan(c.p.value))
		return 0; /* null: unknown, as if absent */
	if (isnan(c.p.spread))
		c.p.spread = 0;
	if (isnan(c.p.confidence))
		c.p.confidence = 1;
	int rc = calib_model_set(m, &c.p);
	if (rc < 0)
		return jfail(p, "parameter %s: %s", key, rc == -ENOSPC ? "too many parameters" : "bad value");
	return 0;
}

static int model_key(struct jp *p, const char *key, void *arg)
{
	struct calib_model *m = arg;
	if (strcmp(key, "device") == 0)
		return jstring(p, m->device, sizeof(m->device));
	if (strcmp(key, "source") == 0)
		return jstring(p, m->source, sizeof(m->source));
	if (strcmp(key, "params") == 0)
		return jobject(p, params_key, m);
	return jskip(p);
}

int calib_model_parse_json(const char *json, size_t len, struct calib_model *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	struct jp p = {.s = json, .e = json + len, .start = json, .err = err, .errlen = errlen};
	if (jobject(&p, model_key, m) < 0)
		return -EINVAL;
	ws(&p);
	if (p.s != p.e)
		return jfail(&p, "trailing data after the object");
	return 0;
}
