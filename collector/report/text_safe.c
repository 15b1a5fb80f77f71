/* Text for terminals (text_safe.h). */
#include "text_safe.h"

#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>

#include "log.h"

static bool c0_or_del(unsigned char c)
{
	return c < 0x20 || c == 0x7f;
}

/* The second byte of a C1 control's UTF-8 form (after 0xC2). */
static bool c1_tail(unsigned char c)
{
	return c >= 0x80 && c <= 0x9f;
}

const char *text_safe_copy(char *buf, size_t len, const char *s)
{
	if (!len)
		return buf;
	if (!s || !*s)
		s = "-";
	size_t n = 0;
	for (const unsigned char *p = (const unsigned char *)s; *p && n + 1 < len; p++) {
		if (*p == 0xc2 && c1_tail(p[1])) {
			buf[n++] = '?';
			p++;
			continue;
		}
		buf[n++] = c0_or_del(*p) ? '?' : (char)*p;
	}
	buf[n] = 0;
	return buf;
}

struct safe_stream {
	FILE *out;
	bool c2; /* the last byte written was 0xC2: a C1 control may follow */
	bool failed;
};

static ssize_t safe_write(void *cookie, const char *buf, size_t n)
{
	struct safe_stream *t = cookie;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)buf[i];
		if (t->c2) {
			t->c2 = false;
			if (c1_tail(c)) {
				putc('?', t->out);
				continue;
			}
			putc(0xc2, t->out);
		}
		if (c == 0xc2) {
			t->c2 = true;
			continue;
		}
		putc(c0_or_del(c) && c != '\n' && c != '\t' ? '?' : c, t->out);
	}
	if (ferror(t->out)) {
		t->failed = true;
		errno = EIO;
		return -1;
	}
	return (ssize_t)n;
}

static int safe_close(void *cookie)
{
	struct safe_stream *t = cookie;
	if (t->c2)
		putc(0xc2, t->out); /* a lone lead byte: no control follows */
	int rc = t->failed || ferror(t->out) ? -1 : 0;
	free(t);
	return rc;
}

FILE *text_safe_open(FILE *out)
{
	struct safe_stream *t = calloc(1, sizeof(*t));
	FILE *f = NULL;
	if (t) {
		t->out = out;
		f = fopencookie(t, "w", (cookie_io_functions_t){.write = safe_write, .close = safe_close});
	}
	if (!f) {
		free(t);
		log_warn("out of memory for the text filter: control characters are not replaced in this output");
		return out;
	}
	return f;
}

int text_safe_close(FILE *f, FILE *out)
{
	if (f == out)
		return ferror(out) ? -EIO : 0;
	return fclose(f) != 0 ? -EIO : 0;
}
