/* Trace file input for `collector edag --trace`: plain, gzip (zlib) or zstd
 * (libzstd) files read in large blocks and streamed (memory does not grow
 * with the file), and a look at the first block that tells text from
 * binary data that is no trace. */
#ifndef COLLECTOR_TRACE_IN_H
#define COLLECTOR_TRACE_IN_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

enum trace_in_comp { TRACE_IN_PLAIN, TRACE_IN_GZIP, TRACE_IN_ZSTD };

struct trace_in;

/* Open path; the compression is told by the magic bytes (not the name).
 * -errno with a reason (naming the file) in err. */
int trace_in_open(const char *path, struct trace_in **out, char *err, size_t errlen);
/* Up to cap decompressed bytes into buf: the count, 0 at the end, -errno
 * with a reason in err (a corrupt or truncated stream). */
ssize_t trace_in_read(struct trace_in *t, uint8_t *buf, size_t cap, char *err, size_t errlen);
enum trace_in_comp trace_in_comp(const struct trace_in *t);
/* Bytes read from the file so far (compressed bytes for .gz/.zst). */
uint64_t trace_in_file_bytes(const struct trace_in *t);
void trace_in_close(struct trace_in *t);

enum trace_sniff {
	TRACE_SNIFF_TEXT,
	TRACE_SNIFF_EDAG_BIN, /* the native binary trace format (EDAGTRC1) */
	TRACE_SNIFF_BINARY,   /* something else that is not text: *what says what it looks like */
};
/* Look at the first bytes of a (decompressed) file: NUL bytes, an ELF or
 * other known binary magic, or more than 1% control bytes make it binary. */
enum trace_sniff trace_sniff(const uint8_t *buf, size_t len, const char **what);

/* Copy s (len bytes) into out as printable text: control bytes and bytes
 * that are not valid UTF-8 become \xNN, at most max input bytes (then
 * "..."). out always ends in NUL. */
void trace_escape(const char *s, size_t len, size_t max, char *out, size_t outlen);

#endif
