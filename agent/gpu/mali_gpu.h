/* Mali GPU families, their counter tables and the layout of a counter dump.
 * The tables (mali_tables.c) are data: for each family the counters this
 * agent reads, by block and position, with the role each plays in the
 * derived metrics. Positions are from the public driver sources' counter
 * name tables (agent/gpu/README.md). */
#ifndef AGENT_GPU_MALI_GPU_H
#define AGENT_GPU_MALI_GPU_H

#include <stddef.h>
#include <stdint.h>

enum mali_block { MALI_BLOCK_JM, MALI_BLOCK_TILER, MALI_BLOCK_L2, MALI_BLOCK_SC, MALI_BLOCK_TYPES };

/* What a counter means for the derived per-kernel metrics (several counters
 * may share a role: they are summed). Kept in sync with the collector's
 * reading of GpuCounterDesc.role (proto/gpu.proto). */
enum mali_role {
	MALI_ROLE_NONE = 0,
	MALI_ROLE_GPU_ACTIVE = 1,      /* JM: cycles the GPU had work */
	MALI_ROLE_CORE_ACTIVE = 2,     /* SC: cycles a shader core was active (tripipe / exec core) */
	MALI_ROLE_COMPUTE_ACTIVE = 3,  /* SC: cycles with compute work */
	MALI_ROLE_ARITH = 4,	       /* SC: arithmetic instruction words issued */
	MALI_ROLE_LS = 5,	       /* SC: load/store instruction words issued */
	MALI_ROLE_TEX = 6,	       /* SC: texture instruction words issued */
	MALI_ROLE_EXT_READ_BEATS = 7,  /* L2: external bus read beats */
	MALI_ROLE_EXT_WRITE_BEATS = 8, /* L2: external bus write beats */
	MALI_ROLE_COUNT = 9,
};

struct mali_counter {
	uint8_t block; /* enum mali_block */
	uint8_t index; /* word in the 64-word block (>= MALI_CNT_HEADER) */
	uint8_t role;  /* enum mali_role */
	const char *name;
};

struct mali_family {
	const char *name;      /* "T62x", "G71" */
	const char *arch;      /* "Midgard", "Bifrost" */
	uint16_t product_id;   /* GPU_ID[31:16] after masking */
	uint16_t product_mask; /* 0xffff for Midgard ids, 0xf00f for the arch/product ids of Bifrost on */
	uint8_t layout;	       /* dump layout: 4 (core groups of 8 blocks) or 5 (JM, tiler, L2s, cores) */
	uint8_t bus_bytes;     /* default external bus width in bytes (L2_FEATURES overrides) */
	const struct mali_counter *counters;
	size_t ncounters;
};

extern const struct mali_family mali_families[];
extern const size_t mali_nfamilies;

/* The family of a GPU_ID register value, or NULL (unknown GPU). */
const struct mali_family *mali_family_find(uint32_t gpu_id);
const char *mali_block_name(unsigned block);
const char *mali_role_name(unsigned role);
/* Bus width from L2_FEATURES[31:24] (log2 of bits), or 0 when that field is 0. */
unsigned mali_bus_bytes_from_l2_features(uint32_t l2_features);

#define MALI_MAX_BLOCKS 96
#define MALI_MAX_GROUPS 16

struct mali_block_loc {
	uint8_t type;	  /* enum mali_block */
	uint8_t instance; /* L2 slice, core number (bit of shader_present) */
	uint32_t word;	  /* first word of the block in the dump buffer */
};

struct mali_layout {
	unsigned version;
	size_t nblocks;
	size_t words; /* the whole dump buffer, in u32 words */
	struct mali_block_loc blocks[MALI_MAX_BLOCKS];
};

/* Layout of a dump for `version` (4 or 5): v5 is JM, tiler, num_l2 L2 blocks,
 * then one block per bit up to the highest of shader_present; v4 is one group
 * of 8 blocks per core group (core c of group g in slot c % 4 of g's first 4 blocks, tiler
 * at 4, MMU/L2 at 5, JM at 7; JM and tiler read from group 0 only).
 * Returns 0, or -EINVAL (no cores, too many blocks, bad version). */
int mali_layout_build(struct mali_layout *l, unsigned version, uint64_t shader_present, unsigned num_l2,
		      const uint64_t *group_masks, unsigned ngroups);

#endif
