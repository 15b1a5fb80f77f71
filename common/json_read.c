/* The JSON reader (json_read.h). */
#include "json_read.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void json_rd_init(struct json_rd *p, const char *buf, size_t len, const char *what, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	p->start = p->s = buf;
	p->e = buf + len;
	p->what = what ? what : "json";
	p->err = err;
	p->errlen = errlen;
}

int json_rd_fail(struct json_rd *p, const char *fmt, ...)
{
	char msg[256];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (p->err && p->errlen)
		snprintf(p->err, p->errlen, "%s: %s at byte %ld", p->what, msg, (long)(p->s - p->start));
	return -EINVAL;
}

void json_rd_ws(struct json_rd *p)
{
	while (p->s < p->e && (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r'))
		p->s++;
}

bool json_rd_peek(struct json_rd *p, char c)
{
	json_rd_ws(p);
	return p->s < p->e && *p->s == c;
}

int json_rd_expect(struct json_rd *p, char c)
{
	if (!json_rd_peek(p, c))
		return json_rd_fail(p, "expected '%c'", c);
	p->s++;
	return 0;
}

int json_rd_string(struct json_rd *p, char *out, size_t len)
{
	if (json_rd_expect(p, '"') < 0)
		return -EINVAL;
	size_t n = 0;
	while (p->s < p->e && *p->s != '"') {
		char c = *p->s++;
		if ((unsigned char)c < 0x20)
			return json_rd_fail(p, "control character in a string");
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
					return json_rd_fail(p, "short \\u escape");
				char hex[5] = {p->s[0], p->s[1], p->s[2], p->s[3], 0};
				char *end;
				long v = strtol(hex, &end, 16);
				if (*end)
					return json_rd_fail(p, "bad \\u escape");
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
		return json_rd_fail(p, "unterminated string");
	p->s++;
	if (out && len)
		out[n] = 0;
	return 0;
}

int json_rd_number(struct json_rd *p, double *v)
{
	json_rd_ws(p);
	char buf[64];
	size_t n = 0;
	while (p->s + n < p->e && n + 1 < sizeof(buf) && strchr("+-0123456789.eE", p->s[n]))
		n++;
	memcpy(buf, p->s, n);
	buf[n] = 0;
	char *end;
	double d = strtod(buf, &end);
	if (n == 0 || *end)
		return json_rd_fail(p, "expected a number");
	p->s += n;
	*v = d;
	return 0;
}

static int literal(struct json_rd *p, const char *lit)
{
	size_t l = strlen(lit);
	json_rd_ws(p);
	if ((size_t)(p->e - p->s) >= l && memcmp(p->s, lit, l) == 0) {
		p->s += l;
		return 1;
	}
	return 0;
}

int json_rd_bool(struct json_rd *p, bool *v)
{
	if (literal(p, "true")) {
		*v = true;
		return 0;
	}
	if (literal(p, "false")) {
		*v = false;
		return 0;
	}
	return json_rd_fail(p, "expected true or false");
}

int json_rd_null(struct json_rd *p)
{
	return literal(p, "null");
}

static int skip_key(struct json_rd *p, const char *key, void *arg)
{
	(void)key;
	(void)arg;
	return json_rd_skip(p);
}

static int skip_elem(struct json_rd *p, size_t i, void *arg)
{
	(void)i;
	(void)arg;
	return json_rd_skip(p);
}

int json_rd_skip(struct json_rd *p)
{
	json_rd_ws(p);
	if (p->s >= p->e)
		return json_rd_fail(p, "unexpected end");
	if (p->depth >= JSON_READ_MAX_DEPTH)
		return json_rd_fail(p, "nested too deeply");
	p->depth++;
	int rc;
	char c = *p->s;
	if (c == '{')
		rc = json_rd_object(p, skip_key, NULL);
	else if (c == '[')
		rc = json_rd_array(p, skip_elem, NULL);
	else if (c == '"')
		rc = json_rd_string(p, NULL, 0);
	else if (c == 't' || c == 'f') {
		bool b;
		rc = json_rd_bool(p, &b);
	} else if (json_rd_null(p))
		rc = 0;
	else {
		double d;
		rc = json_rd_number(p, &d);
	}
	p->depth--;
	return rc;
}

int json_rd_object(struct json_rd *p, json_key_fn fn, void *arg)
{
	if (json_rd_expect(p, '{') < 0)
		return -EINVAL;
	if (json_rd_peek(p, '}')) {
		p->s++;
		return 0;
	}
	for (;;) {
		char key[JSON_READ_KEY_MAX];
		if (json_rd_string(p, key, sizeof(key)) < 0 || json_rd_expect(p, ':') < 0 || fn(p, key, arg) < 0)
			return -EINVAL;
		if (json_rd_peek(p, ',')) {
			p->s++;
			continue;
		}
		return json_rd_expect(p, '}');
	}
}

int json_rd_array(struct json_rd *p, json_elem_fn fn, void *arg)
{
	if (json_rd_expect(p, '[') < 0)
		return -EINVAL;
	if (json_rd_peek(p, ']')) {
		p->s++;
		return 0;
	}
	for (size_t i = 0;; i++) {
		if (fn(p, i, arg) < 0)
			return -EINVAL;
		if (json_rd_peek(p, ',')) {
			p->s++;
			continue;
		}
		return json_rd_expect(p, ']');
	}
}

int json_rd_end(struct json_rd *p)
{
	json_rd_ws(p);
	if (p->s != p->e)
		return json_rd_fail(p, "trailing data after the object");
	return 0;
}
