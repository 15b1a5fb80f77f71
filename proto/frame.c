#include "frame.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate.h"

size_t frame_put_varint(uint8_t *out, uint32_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		out[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	out[n++] = (uint8_t)v;
	return n;
}

int frame_get_varint(const uint8_t *buf, size_t len, uint32_t *v)
{
	uint64_t acc = 0;
	for (size_t i = 0; i < FRAME_VARINT_MAX; i++) {
		if (i >= len)
			return 0;
		acc |= (uint64_t)(buf[i] & 0x7f) << (7 * i);
		if (!(buf[i] & 0x80)) {
			if (acc > UINT32_MAX)
				return -EPROTO;
			*v = (uint32_t)acc;
			return (int)i + 1;
		}
	}
	return -EPROTO;
}

int frame_encode(const Prof__Envelope *env, size_t max_frame, uint8_t **out, size_t *outlen)
{
	size_t body = prof__envelope__get_packed_size(env);
	if (body > max_frame || body > UINT32_MAX)
		return -EMSGSIZE;
	uint8_t *buf = malloc(FRAME_VARINT_MAX + body);
	if (!buf)
		return -ENOMEM;
	size_t hdr = frame_put_varint(buf, (uint32_t)body);
	size_t packed = prof__envelope__pack(env, buf + hdr);
	if (packed != body) {
		free(buf);
		return -EINVAL;
	}
	*out = buf;
	*outlen = hdr + body;
	return 0;
}

int frame_decoder_init(struct frame_decoder *d, size_t max_frame)
{
	memset(d, 0, sizeof(*d));
	d->max_frame = max_frame;
	d->buf = malloc(FRAME_INITIAL_CAP);
	if (!d->buf)
		return -ENOMEM;
	d->cap = FRAME_INITIAL_CAP;
	return 0;
}

void frame_decoder_free(struct frame_decoder *d)
{
	free(d->buf);
	d->buf = NULL;
	d->cap = d->start = d->end = 0;
}

size_t frame_decoder_pending(const struct frame_decoder *d)
{
	return d->end - d->start;
}

/* How many bytes the frame at d->start needs in total (header + payload), or
 * FRAME_VARINT_MAX if its header is not complete yet. Errors are negative. */
static long frame_needed(const struct frame_decoder *d)
{
	uint32_t len;
	int h = frame_get_varint(d->buf + d->start, d->end - d->start, &len);
	if (h < 0)
		return h;
	if (h == 0)
		return FRAME_VARINT_MAX;
	if (len > d->max_frame)
		return -EMSGSIZE;
	return (long)h + (long)len;
}

size_t frame_decoder_want(const struct frame_decoder *d)
{
	long need = frame_needed(d);
	size_t want = need > 0 ? (size_t)need : FRAME_VARINT_MAX;
	size_t pending = d->end - d->start;
	/* The frame at the front is already whole but the caller adds more before taking it
	 * (frame_decoder_feed of several frames): room beyond it, or the space would be 0
	 * and the caller would spin. Bounded by what the caller has put in. */
	if (need > 0 && (size_t)need <= pending)
		want = pending + FRAME_INITIAL_CAP;
	return want < FRAME_INITIAL_CAP ? FRAME_INITIAL_CAP : want;
}

uint8_t *frame_decoder_space(struct frame_decoder *d, size_t *avail)
{
	size_t want = frame_decoder_want(d);
	/* Compact first: consumed bytes at the front are free space. */
	if (d->start > 0 && (d->cap - d->end < want || d->start == d->end)) {
		memmove(d->buf, d->buf + d->start, d->end - d->start);
		d->end -= d->start;
		d->start = 0;
	}
	/* An idle decoder that grew for a larger frame gives the memory back at once: what a
	 * connection holds between frames is FRAME_INITIAL_CAP (a collector budgets the rest). */
	if (d->start == d->end && d->cap > FRAME_INITIAL_CAP && want <= FRAME_INITIAL_CAP) {
		uint8_t *nb = realloc(d->buf, FRAME_INITIAL_CAP);
		if (nb) {
			d->buf = nb;
			d->cap = FRAME_INITIAL_CAP;
		}
	}
	if (d->cap < want) {
		/* want is bounded: header (<= 5) + max_frame, checked in frame_needed. */
		uint8_t *nb = realloc(d->buf, want);
		if (!nb) {
			*avail = 0;
			return NULL;
		}
		d->buf = nb;
		d->cap = want;
	}
	*avail = d->cap - d->end;
	return d->buf + d->end;
}

void frame_decoder_commit(struct frame_decoder *d, size_t n)
{
	d->end += n;
	d->bytes += n;
}

int frame_decoder_feed(struct frame_decoder *d, const void *data, size_t n)
{
	const uint8_t *p = data;
	while (n > 0) {
		size_t avail;
		uint8_t *dst = frame_decoder_space(d, &avail);
		if (!dst)
			return -ENOMEM;
		size_t k = n < avail ? n : avail;
		memcpy(dst, p, k);
		frame_decoder_commit(d, k);
		p += k;
		n -= k;
	}
	return 0;
}

int frame_decoder_next(struct frame_decoder *d, const uint8_t **payload, size_t *len)
{
	uint32_t flen;
	int h = frame_get_varint(d->buf + d->start, d->end - d->start, &flen);
	if (h < 0) {
		snprintf(d->err, sizeof(d->err),
			 "malformed length prefix at byte %llu (varint longer than %u bytes or above 2^32)",
			 (unsigned long long)(d->bytes - (d->end - d->start)), FRAME_VARINT_MAX);
		return h;
	}
	if (h == 0)
		return 0;
	if (flen > d->max_frame) {
		snprintf(d->err, sizeof(d->err), "frame of %u bytes exceeds the maximum of %zu bytes",
			 flen, d->max_frame);
		return -EMSGSIZE;
	}
	if (flen == 0) {
		snprintf(d->err, sizeof(d->err), "empty frame (length 0)");
		return -EBADMSG;
	}
	if (d->end - d->start < (size_t)h + flen)
		return 0;
	*payload = d->buf + d->start + h;
	*len = flen;
	d->start += (size_t)h + flen;
	d->frames++;
	return 1;
}

int frame_decoder_finish(struct frame_decoder *d)
{
	size_t left = d->end - d->start;
	if (left == 0)
		return 0;
	uint32_t flen;
	int h = frame_get_varint(d->buf + d->start, left, &flen);
	if (h > 0)
		snprintf(d->err, sizeof(d->err), "truncated frame: stream ended after %zu of %u payload bytes",
			 left - (size_t)h, flen);
	else
		snprintf(d->err, sizeof(d->err), "truncated frame: stream ended inside a length prefix (%zu bytes)",
			 left);
	return -EPIPE;
}

Prof__Envelope *envelope_decode(const uint8_t *payload, size_t len, char *err, size_t errlen)
{
	Prof__Envelope *env = prof__envelope__unpack(NULL, len, payload);
	if (!env) {
		snprintf(err, errlen, "payload of %zu bytes is not a valid protobuf Envelope", len);
		return NULL;
	}
	if (envelope_validate(env, err, errlen) < 0) {
		prof__envelope__free_unpacked(env, NULL);
		return NULL;
	}
	return env;
}
