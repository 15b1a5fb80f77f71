/* The LEB128 varints and zigzag of the store's packed blocks (store_blocks.c,
 * store_map_blocks.c): one copy for both formats. */
#ifndef COLLECTOR_STORE_VARINT_H
#define COLLECTOR_STORE_VARINT_H

#include <stddef.h>
#include <stdint.h>

static inline size_t put_var(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline uint64_t zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/* 0 when cut or longer than 10 bytes. */
static inline size_t get_var(const uint8_t *p, size_t len, uint64_t *v)
{
	uint64_t r = 0;
	for (size_t i = 0; i < len && i < 10; i++) {
		r |= (uint64_t)(p[i] & 0x7f) << (7 * i);
		if (!(p[i] & 0x80)) {
			*v = r;
			return i + 1;
		}
	}
	return 0;
}

#endif
