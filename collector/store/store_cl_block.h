/* Stored OpenCL command blocks (#41): the commands of one record packed
 * columnar (collector/store/cl_block.proto: each field of every command as a
 * packed sint64 of differences), zstd-compressed through store_blocks.h's
 * store_block_pack / store_block_unpack (the sample blocks' code path), one
 * row of cl_command_blocks per block in place of a row per command. Decoded
 * commands are gathered in a store_cl_rows, whose rows own their lists. */
#ifndef COLLECTOR_STORE_CL_BLOCK_H
#define COLLECTOR_STORE_CL_BLOCK_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "store_opencl.h"

/* Most raw (uncompressed) bytes command c takes in a block's columns. */
size_t store_cl_block_cmd_max(const Prof__ClCommand *c);
/* c[0..n) as one block: *out (malloc'd, *outlen bytes) to store as it is
 * (a zstd frame, or the columns raw where zstd does not shrink them); the
 * commands' first host_enqueue_ns and last host_complete_ns in *t_first,
 * *t_last. The caller keeps the raw columns within STORE_BLOCK_MAX_RAW
 * (store_cl_block_cmd_max). 0, or -ENOMEM. */
int store_cl_block_pack(Prof__ClCommand *const *c, size_t n, uint8_t **out, size_t *outlen, uint64_t *t_first,
			uint64_t *t_last);

/* Commands gathered from blocks and older rows. */
struct store_cl_rows {
	struct store_cl_rows_ent *ent;
	size_t n, cap;
	uint64_t *list; /* every row's wait, read, written lists, in turn */
	size_t nlist, caplist;
};

/* Append r (its lists copied); 0 or -ENOMEM. */
int store_cl_rows_add(struct store_cl_rows *v, const struct store_cl_command_row *r);
/* Decode the stored block p[0..len) of record seq, appending the commands
 * whose host_enqueue_ns is in [t_from, t_to); 0, -EBADMSG (damaged block) or -ENOMEM. */
int store_cl_block_read(struct store_cl_rows *v, const uint8_t *p, size_t len, uint64_t seq, uint64_t t_from,
			uint64_t t_to);
/* Sort by (pid, id, seq) and hand each row to cb (stops at a non-zero return, which it returns). */
int store_cl_rows_each(struct store_cl_rows *v, store_cl_command_cb cb, void *arg);
void store_cl_rows_free(struct store_cl_rows *v);

#endif
