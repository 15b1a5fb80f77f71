/* JSON output helpers (json.h). */
#include "json.h"

#include <inttypes.h>
#include <math.h>
#include <stddef.h>

/* Length of the valid UTF-8 sequence at s (1..4), 0 if it is not one. */
static size_t utf8_len(const unsigned char *s)
{
	unsigned char c = s[0];
	size_t n;
	uint32_t cp;
	if (c < 0x80)
		return 1;
	if (c >= 0xc2 && c <= 0xdf) {
		n = 2;
		cp = c & 0x1f;
	} else if (c >= 0xe0 && c <= 0xef) {
		n = 3;
		cp = c & 0x0f;
	} else if (c >= 0xf0 && c <= 0xf4) {
		n = 4;
		cp = c & 0x07;
	} else {
		return 0;
	}
	for (size_t i = 1; i < n; i++) {
		if ((s[i] & 0xc0) != 0x80) /* also stops at the terminating NUL */
			return 0;
		cp = (cp << 6) | (s[i] & 0x3f);
	}
	if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
	    (cp >= 0xd800 && cp <= 0xdfff))
		return 0; /* overlong, out of range, or a surrogate */
	return n;
}

void json_string(FILE *f, const char *str)
{
	if (!str) {
		fputs("null", f);
		return;
	}
	const unsigned char *s = (const unsigned char *)str;
	fputc('"', f);
	while (*s) {
		unsigned char c = *s;
		if (c == '"' || c == '\\') {
			fputc('\\', f);
			fputc(c, f);
			s++;
		} else if (c == '<' || c == '>' || c == '&') {
			fprintf(f, "\\u%04x", c); /* no "</script>" or "<!--" inside an HTML page */
			s++;
		} else if (c < 0x20 || c == 0x7f) {
			switch (c) {
			case '\n':
				fputs("\\n", f);
				break;
			case '\r':
				fputs("\\r", f);
				break;
			case '\t':
				fputs("\\t", f);
				break;
			default:
				fprintf(f, "\\u%04x", c);
				break;
			}
			s++;
		} else {
			size_t n = utf8_len(s);
			if (n == 0) {
				fputs("\\ufffd", f);
				s++;
			} else if (n == 3 && s[0] == 0xe2 && s[1] == 0x80 && (s[2] == 0xa8 || s[2] == 0xa9)) {
				fputs(s[2] == 0xa8 ? "\\u2028" : "\\u2029", f); /* line / paragraph separator */
				s += 3;
			} else {
				fwrite(s, 1, n, f);
				s += n;
			}
		}
	}
	fputc('"', f);
}

void json_key(FILE *f, int first, const char *key)
{
	if (!first)
		fputc(',', f);
	json_string(f, key);
	fputc(':', f);
}

void json_u64(FILE *f, uint64_t v)
{
	fprintf(f, "%" PRIu64, v);
}

void json_i64(FILE *f, int64_t v)
{
	fprintf(f, "%" PRId64, v);
}

void json_double(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.12g", v);
	else
		fputs("null", f);
}

void json_str_key(FILE *f, int first, const char *key, const char *v)
{
	json_key(f, first, key);
	json_string(f, v);
}

void json_u64_key(FILE *f, int first, const char *key, uint64_t v)
{
	json_key(f, first, key);
	json_u64(f, v);
}

void json_i64_key(FILE *f, int first, const char *key, int64_t v)
{
	json_key(f, first, key);
	json_i64(f, v);
}

void json_num_key(FILE *f, int first, const char *key, double v)
{
	json_key(f, first, key);
	json_double(f, v);
}
