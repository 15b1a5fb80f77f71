/* The packed keys of one Samples record (sample_blocks.data): per key,
 * LEB128 varints of zigzag(pid), zigzag(tid - pid), ip, kip, stack_id,
 * count. One row per record lets a query over a week of samples read
 * thousands of rows instead of millions (bench/query.c). */
#ifndef COLLECTOR_STORE_BLOCKS_H
#define COLLECTOR_STORE_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#define STORE_BLOCK_MAX_KEY_BYTES (6 * 10)

struct store_block_key {
	int32_t pid, tid;
	uint64_t ip, kip;
	uint32_t stack_id;
	uint64_t count;
};

/* Append k at p (at most STORE_BLOCK_MAX_KEY_BYTES); bytes written. */
size_t store_block_put(uint8_t *p, const struct store_block_key *k);
/* Read one key from p[0..len): bytes read, or 0 when the data is cut or malformed. */
size_t store_block_get(const uint8_t *p, size_t len, struct store_block_key *k);

#endif
