#include "mali_gpu.h"

#include <errno.h>
#include <string.h>

#include "kbase_abi.h"

const struct mali_family *mali_family_find(uint32_t gpu_id)
{
	uint16_t pid = (uint16_t)(gpu_id >> 16);
	for (size_t i = 0; i < mali_nfamilies; i++)
		if ((pid & mali_families[i].product_mask) == mali_families[i].product_id)
			return &mali_families[i];
	return NULL;
}

const char *mali_block_name(unsigned block)
{
	static const char *const n[] = {"jm", "tiler", "l2", "sc"};
	return block < MALI_BLOCK_TYPES ? n[block] : "?";
}

const char *mali_role_name(unsigned role)
{
	static const char *const n[] = {"",   "gpu_active", "core_active",    "compute_active", "arith",
					"ls", "tex",	    "ext_read_beats", "ext_write_beats"};
	return role < MALI_ROLE_COUNT ? n[role] : "";
}

unsigned mali_bus_bytes_from_l2_features(uint32_t l2_features)
{
	unsigned log2_bits = l2_features >> 24;
	if (log2_bits < 3 || log2_bits > 10)
		return 0;
	return (1u << log2_bits) / 8;
}

static int add(struct mali_layout *l, unsigned type, unsigned instance, size_t block_no)
{
	if (l->nblocks >= MALI_MAX_BLOCKS)
		return -EINVAL;
	l->blocks[l->nblocks++] = (struct mali_block_loc){(uint8_t)type, (uint8_t)instance,
							  (uint32_t)(block_no * MALI_CNT_PER_BLOCK)};
	return 0;
}

int mali_layout_build(struct mali_layout *l, unsigned version, uint64_t shader_present, unsigned num_l2,
		      const uint64_t *group_masks, unsigned ngroups)
{
	memset(l, 0, sizeof(*l));
	l->version = version;
	if (!shader_present)
		return -EINVAL;
	if (version == 5) {
		unsigned ncores = 64 - (unsigned)__builtin_clzll(shader_present);
		if (num_l2 == 0)
			num_l2 = 1;
		if (2 + num_l2 + ncores > MALI_MAX_BLOCKS)
			return -EINVAL;
		int rc = add(l, MALI_BLOCK_JM, 0, 0) | add(l, MALI_BLOCK_TILER, 0, 1);
		for (unsigned i = 0; i < num_l2; i++)
			rc |= add(l, MALI_BLOCK_L2, i, 2 + i);
		for (unsigned c = 0; c < ncores; c++)
			if (shader_present >> c & 1)
				rc |= add(l, MALI_BLOCK_SC, c, 2 + num_l2 + c);
		l->words = (size_t)(2 + num_l2 + ncores) * MALI_CNT_PER_BLOCK;
		return rc ? -EINVAL : 0;
	}
	if (version != 4)
		return -EINVAL;
	uint64_t one = shader_present;
	if (ngroups == 0 || !group_masks) {
		group_masks = &one;
		ngroups = 1;
	}
	if (ngroups > 4)
		return -EINVAL;
	int rc = 0;
	for (unsigned g = 0; g < ngroups; g++) {
		size_t base = (size_t)g * MALI_V4_BLOCKS_PER_GROUP;
		/* A core's block is its bit position in the group's 4 shader slots,
		 * not the k-th set bit of the mask (issue 29 item 6: gator's
		 * gator_events_mali_t6xx_hw.c / _midgard_hw.c place cores by bit
		 * position; the two agree for contiguous masks only). */
		unsigned used = 0;
		for (unsigned c = 0; c < 64; c++) {
			if (!(group_masks[g] >> c & 1))
				continue;
			unsigned slot = c % 4;
			if (used >> slot & 1)
				return -EINVAL;
			used |= 1u << slot;
			rc |= add(l, MALI_BLOCK_SC, c, base + slot);
		}
		if (g == 0) {
			rc |= add(l, MALI_BLOCK_TILER, 0, base + 4);
			rc |= add(l, MALI_BLOCK_JM, 0, base + 7);
		}
		rc |= add(l, MALI_BLOCK_L2, g, base + 5);
	}
	l->words = (size_t)ngroups * MALI_V4_BLOCKS_PER_GROUP * MALI_CNT_PER_BLOCK;
	return rc ? -EINVAL : 0;
}
