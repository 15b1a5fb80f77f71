/* Trace file input: plain, gzip or zstd, in large blocks (trace_in.h). */
#include "trace_in.h"

#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "edag/edag.h"

#define IN_BUF (256u << 10) /* compressed input block */

struct trace_in {
	int fd;
	const char *path;
	enum trace_in_comp comp;
	uint8_t *in; /* compressed input (and the first bytes of a plain file) */
	size_t in_len, in_off;
	bool eof;
	uint64_t file_bytes;
	z_stream z;
	bool z_init, z_end;
	ZSTD_DCtx *zs;
	size_t zs_last; /* last return of ZSTD_decompressStream: 0 = a frame ended */
};

static ssize_t fill(struct trace_in *t, char *err, size_t errlen)
{
	if (t->in_off < t->in_len || t->eof)
		return (ssize_t)(t->in_len - t->in_off);
	ssize_t n;
	do
		n = read(t->fd, t->in, IN_BUF);
	while (n < 0 && errno == EINTR);
	if (n < 0) {
		int e = errno;
		snprintf(err, errlen, "%s: read: %s", t->path, strerror(e));
		return -e;
	}
	t->in_len = (size_t)n;
	t->in_off = 0;
	t->file_bytes += (uint64_t)n;
	if (n == 0)
		t->eof = true;
	return n;
}

int trace_in_open(const char *path, struct trace_in **out, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot open the trace %s: %s", path, strerror(e));
		return -e;
	}
	struct trace_in *t = calloc(1, sizeof(*t));
	uint8_t *in = malloc(IN_BUF);
	if (!t || !in) {
		free(t);
		free(in);
		close(fd);
		snprintf(err, errlen, "%s: out of memory", path);
		return -ENOMEM;
	}
	t->fd = fd;
	t->path = path;
	t->in = in;
	posix_fadvise(fd, 0, 0, POSIX_FADV_SEQUENTIAL);
	ssize_t n = fill(t, err, errlen);
	if (n < 0) {
		trace_in_close(t);
		return (int)n;
	}
	if (n >= 2 && t->in[0] == 0x1f && t->in[1] == 0x8b) {
		t->comp = TRACE_IN_GZIP;
		if (inflateInit2(&t->z, 15 + 16) != Z_OK) {
			snprintf(err, errlen, "%s: zlib: cannot initialise", path);
			trace_in_close(t);
			return -ENOMEM;
		}
		t->z_init = true;
	} else if (n >= 4 && memcmp(t->in, "\x28\xb5\x2f\xfd", 4) == 0) {
		t->comp = TRACE_IN_ZSTD;
		t->zs = ZSTD_createDCtx();
		if (!t->zs) {
			snprintf(err, errlen, "%s: zstd: cannot initialise", path);
			trace_in_close(t);
			return -ENOMEM;
		}
	}
	*out = t;
	return 0;
}

static ssize_t read_gzip(struct trace_in *t, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
	t->z.next_out = buf;
	t->z.avail_out = (uInt)(cap > (1u << 30) ? (1u << 30) : cap);
	while (t->z.avail_out > 0) {
		ssize_t n = fill(t, err, errlen);
		if (n < 0)
			return n;
		if (n == 0) {
			if (!t->z_end) {
				snprintf(err, errlen, "%s: the gzip stream is truncated", t->path);
				return -EINVAL;
			}
			break;
		}
		if (t->z_end) { /* another gzip member follows */
			if (inflateReset(&t->z) != Z_OK)
				return -EINVAL;
			t->z_end = false;
		}
		t->z.next_in = t->in + t->in_off;
		t->z.avail_in = (uInt)(t->in_len - t->in_off);
		int rc = inflate(&t->z, Z_NO_FLUSH);
		t->in_off = t->in_len - t->z.avail_in;
		if (rc == Z_STREAM_END) {
			t->z_end = true;
		} else if (rc != Z_OK && rc != Z_BUF_ERROR) {
			snprintf(err, errlen, "%s: corrupt gzip data (%s)", t->path, t->z.msg ? t->z.msg : "zlib error");
			return -EINVAL;
		}
	}
	return (ssize_t)(t->z.next_out - buf);
}

static ssize_t read_zstd(struct trace_in *t, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
	ZSTD_outBuffer ob = {buf, cap, 0};
	while (ob.pos < ob.size) {
		ssize_t n = fill(t, err, errlen);
		if (n < 0)
			return n;
		if (n == 0) {
			if (t->zs_last != 0) {
				snprintf(err, errlen, "%s: the zstd stream is truncated", t->path);
				return -EINVAL;
			}
			break;
		}
		ZSTD_inBuffer ib = {t->in, t->in_len, t->in_off};
		size_t rc = ZSTD_decompressStream(t->zs, &ob, &ib);
		t->in_off = ib.pos;
		if (ZSTD_isError(rc)) {
			snprintf(err, errlen, "%s: corrupt zstd data (%s)", t->path, ZSTD_getErrorName(rc));
			return -EINVAL;
		}
		t->zs_last = rc;
	}
	return (ssize_t)ob.pos;
}

ssize_t trace_in_read(struct trace_in *t, uint8_t *buf, size_t cap, char *err, size_t errlen)
{
	if (t->comp == TRACE_IN_GZIP)
		return read_gzip(t, buf, cap, err, errlen);
	if (t->comp == TRACE_IN_ZSTD)
		return read_zstd(t, buf, cap, err, errlen);
	if (t->in_off < t->in_len) { /* the first block, read to see the magic */
		size_t n = t->in_len - t->in_off < cap ? t->in_len - t->in_off : cap;
		memcpy(buf, t->in + t->in_off, n);
		t->in_off += n;
		return (ssize_t)n;
	}
	if (t->eof)
		return 0;
	size_t got = 0;
	while (got < cap) { /* straight into the caller's buffer: no second copy */
		ssize_t n = read(t->fd, buf + got, cap - got);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			snprintf(err, errlen, "%s: read: %s", t->path, strerror(e));
			return -e;
		}
		if (n == 0) {
			t->eof = true;
			break;
		}
		got += (size_t)n;
		t->file_bytes += (uint64_t)n;
	}
	return (ssize_t)got;
}

enum trace_in_comp trace_in_comp(const struct trace_in *t)
{
	return t->comp;
}

uint64_t trace_in_file_bytes(const struct trace_in *t)
{
	return t->file_bytes;
}

void trace_in_close(struct trace_in *t)
{
	if (!t)
		return;
	if (t->z_init)
		inflateEnd(&t->z);
	ZSTD_freeDCtx(t->zs);
	close(t->fd);
	free(t->in);
	free(t);
}

/* ---------------------------------------------------------------- what the bytes look like */

enum trace_sniff trace_sniff(const uint8_t *buf, size_t len, const char **what)
{
	static const struct {
		const char *magic;
		size_t len;
		const char *what;
	} magics[] = {
	    {"\x7f" "ELF", 4, "an ELF file (a program or library, not a trace)"},
	    {"\x1f\x8b", 2, "gzip data inside gzip data"},
	    {"\x28\xb5\x2f\xfd", 4, "zstd data inside compressed data"},
	    {"PK\x03\x04", 4, "a zip archive"},
	    {"BZh", 3, "bzip2 data (decompress it first: .gz and .zst are read directly)"},
	    {"\xfd" "7zXZ", 6, "xz data (decompress it first: .gz and .zst are read directly)"},
	    {"SQLite format 3", 16, "an SQLite database (use --store PATH --session N)"},
	    {"PERFILE2", 8, "a perf.data file"},
	};
	*what = NULL;
	if (len >= 8 && memcmp(buf, EDAG_BIN_MAGIC, 8) == 0)
		return TRACE_SNIFF_EDAG_BIN;
	for (size_t i = 0; i < sizeof(magics) / sizeof(magics[0]); i++)
		if (len >= magics[i].len && memcmp(buf, magics[i].magic, magics[i].len) == 0) {
			*what = magics[i].what;
			return TRACE_SNIFF_BINARY;
		}
	size_t ctl = 0;
	for (size_t i = 0; i < len; i++) {
		uint8_t c = buf[i];
		if (c == 0) {
			*what = "binary data (NUL bytes)";
			return TRACE_SNIFF_BINARY;
		}
		if ((c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f)
			ctl++;
	}
	if (len && ctl * 100 > len) {
		*what = "binary data (control bytes)";
		return TRACE_SNIFF_BINARY;
	}
	return TRACE_SNIFF_TEXT;
}

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 if none. */
static size_t utf8_len(const uint8_t *s, size_t n)
{
	size_t l;
	uint32_t min;
	if (s[0] >= 0xc2 && s[0] <= 0xdf)
		l = 2, min = 0x80;
	else if (s[0] >= 0xe0 && s[0] <= 0xef)
		l = 3, min = 0x800;
	else if (s[0] >= 0xf0 && s[0] <= 0xf4)
		l = 4, min = 0x10000;
	else
		return 0;
	if (n < l)
		return 0;
	uint32_t cp = s[0] & (0x7f >> l);
	for (size_t i = 1; i < l; i++) {
		if ((s[i] & 0xc0) != 0x80)
			return 0;
		cp = cp << 6 | (s[i] & 0x3f);
	}
	if (cp < min || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
		return 0;
	return l;
}

void trace_escape(const char *s, size_t len, size_t max, char *out, size_t outlen)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t o = 0, i = 0;
	bool cut = false;
	if (outlen < 8) {
		if (outlen)
			out[0] = 0;
		return;
	}
	while (i < len) {
		char tmp[8];
		size_t tl, u = p[i] >= 0x80 ? utf8_len(p + i, len - i) : 0;
		if (i >= max) {
			cut = true;
			break;
		}
		if (u) {
			memcpy(tmp, p + i, u);
			tl = u;
		} else if (p[i] < 0x20 || p[i] >= 0x7f || p[i] == '\\') {
			if (p[i] == '\\')
				tl = (size_t)snprintf(tmp, sizeof(tmp), "\\\\");
			else if (p[i] == '\t')
				tl = (size_t)snprintf(tmp, sizeof(tmp), "\\t");
			else
				tl = (size_t)snprintf(tmp, sizeof(tmp), "\\x%02x", p[i]);
			u = 1;
		} else {
			tmp[0] = (char)p[i];
			tl = u = 1;
		}
		if (o + tl + 4 >= outlen) {
			cut = true;
			break;
		}
		memcpy(out + o, tmp, tl);
		o += tl;
		i += u;
	}
	if (cut) {
		memcpy(out + o, "...", 3);
		o += 3;
	}
	out[o] = 0;
}
