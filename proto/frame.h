/* Framing shared by the agent and the collector: varint length prefix + one
 * serialized prof.Envelope. The decoder is incremental (bytes may arrive in
 * any split), checks the announced length against the maximum before it
 * allocates anything, and reports precise errors. */
#ifndef PROTO_FRAME_H
#define PROTO_FRAME_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

#define PROF_SCHEMA_VERSION 1u
#define FRAME_VARINT_MAX 5u /* a 32-bit length needs at most 5 varint bytes */
#define FRAME_INITIAL_CAP 4096u /* a decoder's buffer until a larger frame arrives */

/* Encode a length prefix into out (>= FRAME_VARINT_MAX bytes); returns bytes used. */
size_t frame_put_varint(uint8_t *out, uint32_t v);

/* Parse a length prefix from buf[0..len).
 * Returns bytes consumed (>0), 0 if more bytes are needed, -EPROTO if the
 * varint is longer than FRAME_VARINT_MAX bytes or does not fit 32 bits. */
int frame_get_varint(const uint8_t *buf, size_t len, uint32_t *v);

/* Serialize env as a whole frame into a new malloc'd buffer.
 * Returns 0 and sets *out and *outlen, -EMSGSIZE if the envelope is larger than
 * max_frame, -ENOMEM. */
int frame_encode(const Prof__Envelope *env, size_t max_frame, uint8_t **out, size_t *outlen);

struct frame_decoder {
	uint8_t *buf;
	size_t cap;       /* allocated bytes */
	size_t start;     /* first unconsumed byte */
	size_t end;       /* one past the last received byte */
	size_t max_frame; /* largest payload accepted */
	uint64_t frames;  /* frames returned so far */
	uint64_t bytes;   /* bytes received so far */
	char err[160];    /* detail of the last error */
};

int frame_decoder_init(struct frame_decoder *d, size_t max_frame);
void frame_decoder_free(struct frame_decoder *d);

/* Where the next received bytes go. Ensures at least min_space free bytes
 * (bounded by what the frame being received can still need); returns a
 * pointer and sets *avail. Returns NULL (and -ENOMEM in *avail==0) on
 * allocation failure. */
uint8_t *frame_decoder_space(struct frame_decoder *d, size_t *avail);
/* Account n bytes just written into the space returned above. */
void frame_decoder_commit(struct frame_decoder *d, size_t n);
/* The buffer size the next frame_decoder_space() call needs: above d->cap it will grow
 * to that (at most the frame being received, header included), so a caller can check a
 * memory budget first. */
size_t frame_decoder_want(const struct frame_decoder *d);
/* Copy bytes in (convenience for tests and in-memory input). Returns 0 or -ENOMEM. */
int frame_decoder_feed(struct frame_decoder *d, const void *data, size_t n);

/* Next complete frame. Returns 1 and sets *payload and *len (valid until the next
 * call that feeds or commits), 0 if more bytes are needed, or a negative
 * errno: -EPROTO (malformed length prefix), -EMSGSIZE (announced length
 * exceeds max_frame), -EBADMSG (zero-length frame). d->err says more. */
int frame_decoder_next(struct frame_decoder *d, const uint8_t **payload, size_t *len);

/* Call when the peer closed the stream: 0 if nothing is pending, -EPIPE if a
 * partial frame is left (d->err says how much was missing). */
int frame_decoder_finish(struct frame_decoder *d);

/* Bytes buffered but not yet returned as frames. */
size_t frame_decoder_pending(const struct frame_decoder *d);

/* Unpack and validate one payload. Returns the envelope (free with
 * prof__envelope__free_unpacked(env, NULL)) or NULL with a reason in err. */
Prof__Envelope *envelope_decode(const uint8_t *payload, size_t len, char *err, size_t errlen);

#endif
