/* Packed sample keys (store_blocks.h). */
#include "store_blocks.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "store_varint.h"

/* Each thread's contexts, kept from block to block (store_block_thread_end frees them). */
static _Thread_local ZSTD_CCtx *cctx;
static _Thread_local ZSTD_DCtx *dctx;

void store_block_thread_end(void)
{
	ZSTD_freeCCtx(cctx);
	ZSTD_freeDCtx(dctx);
	cctx = NULL;
	dctx = NULL;
}

size_t store_block_put(uint8_t *p, const struct store_block_key *k)
{
	size_t n = put_var(p, zigzag(k->pid));
	n += put_var(p + n, zigzag((int64_t)k->tid - k->pid));
	n += put_var(p + n, k->ip);
	n += put_var(p + n, k->kip);
	n += put_var(p + n, k->stack_id);
	n += put_var(p + n, k->count);
	return n;
}

/* One varint of at most 10 bytes, the bytes known to be there. */
static inline size_t get_var_fast(const uint8_t *p, uint64_t *v)
{
	uint64_t r = 0;
	for (size_t i = 0; i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

size_t store_block_get(const uint8_t *p, size_t len, struct store_block_key *k)
{
	uint64_t v[6];
	size_t off = 0;
	/* a whole key's bytes there: no length check per byte (#40) */
	if (len >= STORE_BLOCK_MAX_KEY_BYTES) {
		for (int i = 0; i < 6; i++) {
			if (p[off] < 0x80) { /* most fields are one byte */
				v[i] = p[off++];
				continue;
			}
			size_t n = get_var_fast(p + off, &v[i]);
			if (!n)
				return 0;
			off += n;
		}
	} else {
		for (int i = 0; i < 6; i++) {
			size_t n = get_var(p + off, len - off, &v[i]);
			if (!n)
				return 0;
			off += n;
		}
	}
	int64_t pid = unzigzag(v[0]), tid = pid + unzigzag(v[1]);
	if (pid < INT32_MIN || pid > INT32_MAX || tid < INT32_MIN || tid > INT32_MAX || v[4] > UINT32_MAX)
		return 0;
	k->pid = (int32_t)pid;
	k->tid = (int32_t)tid;
	k->ip = v[2];
	k->kip = v[3];
	k->stack_id = (uint32_t)v[4];
	k->inc = 0;
	k->count = v[5];
	return off;
}

int store_block_pack(const uint8_t *raw, size_t len, uint8_t **out, size_t *outlen)
{
	return store_block_pack_level(raw, len, 1, out, outlen);
}

int store_block_pack_level(const uint8_t *raw, size_t len, int level, uint8_t **out, size_t *outlen)
{
	*out = NULL;
	*outlen = 0;
	if (len < 32) /* a frame's header and checksum-free trailer cost more than they save */
		return 0;
	size_t cap = ZSTD_compressBound(len);
	uint8_t *z = malloc(cap);
	if (!z)
		return -ENOMEM;
	/* one context per thread, kept (as store_block_unpack's): ZSTD_compress makes and frees one per
	 * call, whose workspace faults its pages in again each time (#41: a third of the collector's
	 * CPU per OpenCL command block, perf record of bench/ingest_cl) */
	if (!cctx && !(cctx = ZSTD_createCCtx())) {
		free(z);
		return -ENOMEM;
	}
	size_t n = ZSTD_compressCCtx(cctx, z, cap, raw, len, level);
	if (ZSTD_isError(n) || n >= len) {
		free(z);
		return 0;
	}
	*out = z;
	*outlen = n;
	return 0;
}

bool store_block_is_zstd(const uint8_t *p, size_t len)
{
	static const uint8_t magic[4] = {0x28, 0xb5, 0x2f, 0xfd}; /* ZSTD_MAGICNUMBER, little-endian */
	return p && len >= sizeof(magic) && memcmp(p, magic, sizeof(magic)) == 0;
}

const uint8_t *store_block_unpack_to(const uint8_t *p, size_t len, size_t *rawlen, uint8_t **buf, size_t *cap)
{
	*rawlen = len;
	if (!store_block_is_zstd(p, len))
		return p;
	unsigned long long want = ZSTD_getFrameContentSize(p, len);
	if (want == ZSTD_CONTENTSIZE_UNKNOWN || want == ZSTD_CONTENTSIZE_ERROR || want == 0 ||
	    want > STORE_BLOCK_MAX_RAW)
		return p;
	if (*cap < want) {
		uint8_t *d = realloc(*buf, (size_t)want);
		if (!d)
			return NULL;
		*buf = d;
		*cap = (size_t)want;
	}
	/* one context per thread, kept: creating one per block cost a third of a query's CPU (bench/query) */
	if (!dctx && !(dctx = ZSTD_createDCtx()))
		return NULL;
	size_t n = ZSTD_decompressDCtx(dctx, *buf, (size_t)want, p, len);
	if (ZSTD_isError(n) || n != want)
		return p;
	*rawlen = n;
	return *buf;
}

const uint8_t *store_block_unpack(const uint8_t *p, size_t len, size_t *rawlen, uint8_t **owned)
{
	size_t cap = 0;
	*owned = NULL;
	const uint8_t *r = store_block_unpack_to(p, len, rawlen, owned, &cap);
	if (r != *owned) { /* not decompressed (or out of memory): nothing to keep */
		free(*owned);
		*owned = NULL;
	}
	return r;
}
