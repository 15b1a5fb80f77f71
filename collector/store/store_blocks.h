/* The packed keys of one Samples record (sample_blocks.data): per key,
 * LEB128 varints of zigzag(pid), zigzag(tid - pid), ip, kip, stack_id,
 * count, stored as one zstd frame (level 1) where that is smaller (#40);
 * blocks of older stores, and those zstd does not shrink, are the varints
 * as they are. One row per record lets a query over a week of samples
 * read thousands of rows instead of millions (bench/query.c). */
#ifndef COLLECTOR_STORE_BLOCKS_H
#define COLLECTOR_STORE_BLOCKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define STORE_BLOCK_MAX_KEY_BYTES (6 * 10)
/* Most varint bytes one stored block decompresses to (65536 keys of
 * STORE_BLOCK_MAX_KEY_BYTES, VALIDATE_MAX_SAMPLE_KEYS): a frame that claims
 * more is not decompressed. */
#define STORE_BLOCK_MAX_RAW (65536u * STORE_BLOCK_MAX_KEY_BYTES)

/* A block's pid_bits (sample_blocks): the bit of each of its keys' pids, pid mod 64 (consecutive pids
 * never share one); a query for pid p reads only blocks with p's bit and p in [pid_min, pid_max]. */
#define STORE_BLOCK_PID_BIT(pid) (1ull << ((uint32_t)(pid)&63u))

struct store_block_key {
	int32_t pid, tid;
	uint64_t ip, kip;
	uint32_t stack_id;
	/* the pid's process in its session (pid reuse, w44a: TaskName.incarnation): set by the query model
	 * from the block's seq; not stored in a block (store_block_get: 0) */
	uint32_t inc;
	uint64_t count;
};

/* Append k at p (at most STORE_BLOCK_MAX_KEY_BYTES); bytes written. */
size_t store_block_put(uint8_t *p, const struct store_block_key *k);
/* Read one key from p[0..len): bytes read, or 0 when the data is cut or malformed. */
size_t store_block_get(const uint8_t *p, size_t len, struct store_block_key *k);

/* The block to store for the varints raw[0..len): *out is a zstd frame of
 * them (malloc'd, *outlen bytes) when that is smaller, else NULL (store raw
 * as it is). 0, or -ENOMEM. */
int store_block_pack(const uint8_t *raw, size_t len, uint8_t **out, size_t *outlen);
/* The same at a zstd level of the caller's (store_block_pack: 1; data written once and kept long,
 * such as a boot's kernel table, pays for a higher one). */
int store_block_pack_level(const uint8_t *raw, size_t len, int level, uint8_t **out, size_t *outlen);
/* The level of the blocks a compaction or downsampling merges (query_downsample.c; #40, w40i): written
 * once in the background and kept. A real 10 kHz run's blocks 1.10 -> 0.97 B/sample compacted per 16 s
 * (level 9: 0.91 for ~2x the compaction's CPU); the synthetic 10^7 store's compaction took the same CPU
 * at 1 and 3 (1.2-1.6 s); zstd decodes either as fast. */
#define STORE_BLOCK_COMPACT_LEVEL 3
/* Whether p[0..len) starts with the zstd frame magic (a packed block's data). */
bool store_block_is_zstd(const uint8_t *p, size_t len);
/* The varints of a stored block p[0..len): a decompressed copy in *owned
 * (free it) for a zstd frame, else p itself (older or incompressible blocks,
 * and a frame that claims more than STORE_BLOCK_MAX_RAW or does not
 * decompress: read as varints, which the damage check then catches).
 * *rawlen is their length; NULL (with *owned NULL) only on -ENOMEM. */
const uint8_t *store_block_unpack(const uint8_t *p, size_t len, size_t *rawlen, uint8_t **owned);
/* The same into a buffer kept by the caller across blocks (*buf, *cap bytes: grown as needed; free
 * it at the end): *buf or p itself, NULL only on -ENOMEM. */
const uint8_t *store_block_unpack_to(const uint8_t *p, size_t len, size_t *rawlen, uint8_t **buf,
				     size_t *cap);
/* Frees the calling thread's compression contexts (a thread that packed or unpacked blocks calls it
 * before it ends; the next call makes them again). */
void store_block_thread_end(void);

#endif
