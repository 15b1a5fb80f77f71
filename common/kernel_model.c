/* The per-kernel work model file (kernel_model.h). */
#include "kernel_model.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static int parse_num(const char *s, double *out)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || *end || !isfinite(v) || v < 0)
		return -EINVAL;
	*out = v;
	return 0;
}

int kernel_model_parse_line(const char *line, struct kernel_model_entry *out, char *err, size_t errlen)
{
	char buf[512];
	snprintf(buf, sizeof(buf), "%s", line);
	char *hash = strchr(buf, '#');
	if (hash)
		*hash = '\0';
	char *save = NULL, *tok = strtok_r(buf, " \t\r\n", &save);
	if (!tok)
		return 0;
	memset(out, 0, sizeof(*out));
	out->ops = out->bytes = -1;
	snprintf(out->name, sizeof(out->name), "%s", tok);
	while ((tok = strtok_r(NULL, " \t\r\n", &save))) {
		double v;
		char *eq = strchr(tok, '=');
		if (!eq || parse_num(eq + 1, &v) < 0) {
			snprintf(err, errlen, "'%s': want ops=N or bytes=N", tok);
			return -EINVAL;
		}
		*eq = '\0';
		if (strcmp(tok, "ops") == 0)
			out->ops = v;
		else if (strcmp(tok, "bytes") == 0)
			out->bytes = v;
		else {
			snprintf(err, errlen, "unknown key '%s' (ops, bytes)", tok);
			return -EINVAL;
		}
	}
	if (out->ops < 0 || out->bytes < 0) {
		snprintf(err, errlen, "kernel %s: both ops=N and bytes=N (per work-item) are needed", out->name);
		return -EINVAL;
	}
	return 1;
}

/* s for a message, every byte outside printable ASCII as \xNN (cut to fit out): what a file
 * holds must not reach the terminal raw. */
static void quote(const char *s, char *out, size_t len)
{
	size_t o = 0;
	for (size_t i = 0; s[i] && o + 5 < len; i++) {
		unsigned char c = (unsigned char)s[i];
		o += (size_t)snprintf(out + o, len - o, c >= 0x20 && c < 0x7f ? "%c" : "\\x%02x", c);
	}
	out[o] = '\0';
}

/* The first byte of a line (of n bytes) that text never holds (NUL, controls but tab and the
 * line ends), or -1. */
static long binary_byte(const char *line, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)line[i];
		if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
			return (long)i;
	}
	return -1;
}

int kernel_model_load(const char *path, struct kernel_model_entry **out, size_t *n, char *err, size_t errlen)
{
	*out = NULL;
	*n = 0;
	FILE *f = fopen(path, "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "cannot read the kernel model %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
		fclose(f);
		snprintf(err, errlen, "%s is a directory: give the kernel model file (lines 'KERNEL ops=N bytes=N')",
			 path);
		return -EISDIR;
	}
	char *line = NULL, why[200], q[800];
	size_t cap = 0;
	ssize_t got;
	unsigned lineno = 0;
	int rc = 0;
	errno = 0;
	while ((got = getline(&line, &cap, f)) >= 0) {
		lineno++;
		long at = binary_byte(line, (size_t)got);
		if (at >= 0) {
			snprintf(err, errlen,
				 "%s:%u: not a text file (byte 0x%02x at column %ld): want lines 'KERNEL ops=N bytes=N'",
				 path, lineno, (unsigned char)line[at], at + 1);
			rc = -EINVAL;
			break;
		}
		if (got >= 512) {
			snprintf(err, errlen, "%s:%u: line longer than 511 bytes", path, lineno);
			rc = -EINVAL;
			break;
		}
		struct kernel_model_entry e;
		int k = kernel_model_parse_line(line, &e, why, sizeof(why));
		if (k < 0) {
			quote(why, q, sizeof(q));
			snprintf(err, errlen, "%s:%u: %s", path, lineno, q);
			rc = -EINVAL;
			break;
		}
		if (k == 0)
			continue;
		if (*n >= KERNEL_MODEL_MAX_ENTRIES) {
			snprintf(err, errlen, "%s: more than %u kernels", path, KERNEL_MODEL_MAX_ENTRIES);
			rc = -E2BIG;
			break;
		}
		struct kernel_model_entry *ne = realloc(*out, (*n + 1) * sizeof(*ne));
		if (!ne) {
			snprintf(err, errlen, "out of memory");
			rc = -ENOMEM;
			break;
		}
		*out = ne;
		(*out)[(*n)++] = e;
	}
	if (rc == 0 && ferror(f)) {
		rc = errno ? -errno : -EIO;
		snprintf(err, errlen, "cannot read the kernel model %s: %s", path, strerror(-rc));
	} else if (rc == 0 && *n == 0) {
		snprintf(err, errlen, "%s holds no kernel: want lines 'KERNEL ops=N bytes=N' (per work-item)%s", path,
			 lineno ? "" : " (the file is empty)");
		rc = -ENODATA;
	}
	free(line);
	fclose(f);
	if (rc < 0) {
		free(*out);
		*out = NULL;
		*n = 0;
	}
	return rc;
}

const struct kernel_model_entry *kernel_model_find(const struct kernel_model_entry *e, size_t n, const char *name)
{
	for (size_t i = n; i-- > 0;) /* a later line wins */
		if (strcmp(e[i].name, name) == 0)
			return &e[i];
	return NULL;
}
