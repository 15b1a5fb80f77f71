/* The mappings a Samples record declares, stored as one packed block per record (#40, w40h):
 *   sample_map_blocks(session_id, seq, n, data)
 * data: per mapping, LEB128 varints of zigzag(map_id - the previous map_id), zigzag(pid), start,
 * zigzag(end - start), pgoff, the path's length and bytes, the build-id's length and bytes; as one zstd
 * frame where smaller (store_blocks.h). A record's mappings whose varints would pass STORE_BLOCK_MAX_RAW
 * go to sample_mappings rows as before; stores of older collectors hold only rows. Readers take the rows,
 * then the blocks in seq order, and the first declaration of a map id (the rows' key kept that one). */
#ifndef COLLECTOR_STORE_MAP_BLOCKS_H
#define COLLECTOR_STORE_MAP_BLOCKS_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "store.h"

struct store_map {
	int64_t id;
	int32_t pid;
	uint64_t start, end, pgoff;
	const char *path; /* in the decoded block: valid during the callback; pathlen bytes, no NUL */
	size_t pathlen;
	const uint8_t *build_id;
	size_t build_id_len;
};

/* The record's mappings as one block: 1 stored, 0 too large for a block (store them as rows), or -errno. */
int store_map_block_put(struct store *s, int64_t sid, uint64_t seq, const Prof__Samples *sm);
/* Each mapping of stored block z[0..zlen) to cb (non-zero from cb stops with that value): 0, -EBADMSG
 * (damaged), -ENOMEM, or cb's value. */
int store_map_block_each(const uint8_t *z, size_t zlen, int (*cb)(void *arg, const struct store_map *m),
			 void *arg);

#endif
