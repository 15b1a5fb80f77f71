/* Counter tables per Mali family: (block, word, role, name). Word positions
 * come from the counter name tables of the public kbase driver sources
 * (mali_kbase_gator_hwcnt_names.h for T60x..T88x, ..._names_tmix.h for G71,
 * ..._names_tsix.h for G51;
 * agent/gpu/README.md says which versions). Only the counters the derived
 * metrics and the reports use are listed; the positions of the others are in
 * those files. Words 0..3 of every block are its header. */
#include <stddef.h>

#include "mali_gpu.h"

#define JM MALI_BLOCK_JM
#define TI MALI_BLOCK_TILER
#define L2 MALI_BLOCK_L2
#define SC MALI_BLOCK_SC
#define N(a) (sizeof(a) / sizeof((a)[0]))

/* T60x, T62x: same positions (T62x's SHADER_CORE_ACTIVE sits in header word 3: not read). */
static const struct mali_counter t60x[] = {
	{JM, 6, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 8, 0, "JS0_JOBS"},
	{JM, 10, 0, "JS0_ACTIVE"},
	{JM, 16, 0, "JS1_JOBS"},
	{JM, 18, 0, "JS1_ACTIVE"},
	{TI, 45, 0, "TI_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 22, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 23, 0, "COMPUTE_TASKS"},
	{SC, 24, 0, "COMPUTE_THREADS"},
	{SC, 26, MALI_ROLE_CORE_ACTIVE, "TRIPIPE_ACTIVE"},
	{SC, 27, MALI_ROLE_ARITH, "ARITH_WORDS"},
	{SC, 31, MALI_ROLE_LS, "LS_WORDS"},
	{SC, 32, 0, "LS_ISSUES"},
	{SC, 38, MALI_ROLE_TEX, "TEX_WORDS"},
	{SC, 42, 0, "TEX_ISSUES"},
	{SC, 48, 0, "LSC_READ_HITS"},
	{SC, 49, 0, "LSC_READ_MISSES"},
	{SC, 50, 0, "LSC_WRITE_HITS"},
	{SC, 51, 0, "LSC_WRITE_MISSES"},
	{L2, 30, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEATS"},
	{L2, 31, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEATS"},
	{L2, 33, 0, "L2_READ_LOOKUP"},
	{L2, 37, 0, "L2_READ_HIT"},
	{L2, 39, 0, "L2_WRITE_LOOKUP"},
	{L2, 43, 0, "L2_WRITE_HIT"},
};

static const struct mali_counter t72x[] = {
	{JM, 4, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 6, 0, "JS0_JOBS"},
	{JM, 8, 0, "JS0_ACTIVE"},
	{JM, 9, 0, "JS1_JOBS"},
	{JM, 11, 0, "JS1_ACTIVE"},
	{TI, 22, 0, "TI_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 17, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 18, 0, "COMPUTE_TASKS"},
	{SC, 19, 0, "COMPUTE_THREADS"},
	{SC, 20, MALI_ROLE_CORE_ACTIVE, "TRIPIPE_ACTIVE"},
	{SC, 21, MALI_ROLE_ARITH, "ARITH_WORDS"},
	{SC, 23, MALI_ROLE_LS, "LS_WORDS"},
	{SC, 24, 0, "LS_ISSUES"},
	{SC, 27, MALI_ROLE_TEX, "TEX_WORDS"},
	{SC, 29, 0, "TEX_ISSUES"},
	{SC, 30, 0, "LSC_READ_HITS"},
	{SC, 31, 0, "LSC_READ_MISSES"},
	{L2, 4, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEAT"},
	{L2, 5, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEAT"},
	{L2, 7, 0, "L2_READ_HIT"},
	{L2, 9, 0, "L2_WRITE_HIT"},
};

/* T76x, T86x, T88x: T60x positions, LSC_*_OP instead of *_MISSES. */
static const struct mali_counter t76x[] = {
	{JM, 6, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 8, 0, "JS0_JOBS"},
	{JM, 10, 0, "JS0_ACTIVE"},
	{JM, 16, 0, "JS1_JOBS"},
	{JM, 18, 0, "JS1_ACTIVE"},
	{TI, 45, 0, "TI_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 22, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 23, 0, "COMPUTE_TASKS"},
	{SC, 24, 0, "COMPUTE_THREADS"},
	{SC, 26, MALI_ROLE_CORE_ACTIVE, "TRIPIPE_ACTIVE"},
	{SC, 27, MALI_ROLE_ARITH, "ARITH_WORDS"},
	{SC, 31, MALI_ROLE_LS, "LS_WORDS"},
	{SC, 32, 0, "LS_ISSUES"},
	{SC, 38, MALI_ROLE_TEX, "TEX_WORDS"},
	{SC, 42, 0, "TEX_ISSUES"},
	{SC, 48, 0, "LSC_READ_HITS"},
	{SC, 49, 0, "LSC_READ_OP"},
	{SC, 50, 0, "LSC_WRITE_HITS"},
	{SC, 51, 0, "LSC_WRITE_OP"},
	{L2, 30, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEATS"},
	{L2, 31, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEATS"},
	{L2, 33, 0, "L2_READ_LOOKUP"},
	{L2, 37, 0, "L2_READ_HIT"},
	{L2, 39, 0, "L2_WRITE_LOOKUP"},
	{L2, 43, 0, "L2_WRITE_HIT"},
};

/* T82x, T83x: T76x positions except the short tiler block (TI_ACTIVE at 22). */
static const struct mali_counter t82x[] = {
	{JM, 6, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 8, 0, "JS0_JOBS"},
	{JM, 10, 0, "JS0_ACTIVE"},
	{JM, 16, 0, "JS1_JOBS"},
	{JM, 18, 0, "JS1_ACTIVE"},
	{TI, 22, 0, "TI_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 22, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 23, 0, "COMPUTE_TASKS"},
	{SC, 24, 0, "COMPUTE_THREADS"},
	{SC, 26, MALI_ROLE_CORE_ACTIVE, "TRIPIPE_ACTIVE"},
	{SC, 27, MALI_ROLE_ARITH, "ARITH_WORDS"},
	{SC, 31, MALI_ROLE_LS, "LS_WORDS"},
	{SC, 32, 0, "LS_ISSUES"},
	{SC, 38, MALI_ROLE_TEX, "TEX_WORDS"},
	{SC, 42, 0, "TEX_ISSUES"},
	{SC, 48, 0, "LSC_READ_HITS"},
	{SC, 49, 0, "LSC_READ_OP"},
	{L2, 30, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEATS"},
	{L2, 31, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEATS"},
	{L2, 33, 0, "L2_READ_LOOKUP"},
	{L2, 39, 0, "L2_WRITE_LOOKUP"},
};

/* G71 (tMIx, Bifrost): instructions, not words; EXEC_INSTR_COUNT is every
 * instruction issued (the arithmetic role: Bifrost's table has no separate
 * arithmetic-issue counter), LS is the sum of the load/store memory accesses. */
static const struct mali_counter g71[] = {
	{JM, 6, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 8, 0, "JS0_JOBS"},
	{JM, 10, 0, "JS0_ACTIVE"},
	{JM, 16, 0, "JS1_JOBS"},
	{JM, 18, 0, "JS1_ACTIVE"},
	{TI, 4, 0, "TILER_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 22, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 23, 0, "COMPUTE_TASKS"},
	{SC, 24, 0, "COMPUTE_WARPS"},
	{SC, 26, MALI_ROLE_CORE_ACTIVE, "EXEC_CORE_ACTIVE"},
	{SC, 28, MALI_ROLE_ARITH, "EXEC_INSTR_COUNT"},
	{SC, 31, 0, "ARITH_INSTR_SINGLE_FMA"},
	{SC, 35, MALI_ROLE_TEX, "TEX_INSTR"},
	{SC, 44, MALI_ROLE_LS, "LS_MEM_READ_FULL"},
	{SC, 45, MALI_ROLE_LS, "LS_MEM_READ_SHORT"},
	{SC, 46, MALI_ROLE_LS, "LS_MEM_WRITE_FULL"},
	{SC, 47, MALI_ROLE_LS, "LS_MEM_WRITE_SHORT"},
	{SC, 48, MALI_ROLE_LS, "LS_MEM_ATOMIC"},
	{L2, 26, 0, "L2_READ_LOOKUP"},
	{L2, 27, 0, "L2_WRITE_LOOKUP"},
	{L2, 32, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEATS"},
	{L2, 47, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEATS"},
};

/* G51 (tSIx): G71's positions except the texture block (words 35..43), which
 * counts quads, passes and operations instead of instructions: the texture
 * role is the filtering operations (TEX_FILT_NUM_OPERATIONS). */
static const struct mali_counter g51[] = {
	{JM, 6, MALI_ROLE_GPU_ACTIVE, "GPU_ACTIVE"},
	{JM, 8, 0, "JS0_JOBS"},
	{JM, 10, 0, "JS0_ACTIVE"},
	{JM, 16, 0, "JS1_JOBS"},
	{JM, 18, 0, "JS1_ACTIVE"},
	{TI, 4, 0, "TILER_ACTIVE"},
	{SC, 4, 0, "FRAG_ACTIVE"},
	{SC, 22, MALI_ROLE_COMPUTE_ACTIVE, "COMPUTE_ACTIVE"},
	{SC, 23, 0, "COMPUTE_TASKS"},
	{SC, 24, 0, "COMPUTE_WARPS"},
	{SC, 26, MALI_ROLE_CORE_ACTIVE, "EXEC_CORE_ACTIVE"},
	{SC, 28, MALI_ROLE_ARITH, "EXEC_INSTR_COUNT"},
	{SC, 31, 0, "ARITH_INSTR_SINGLE_FMA"},
	{SC, 35, 0, "TEX_MSGI_NUM_QUADS"},
	{SC, 43, MALI_ROLE_TEX, "TEX_FILT_NUM_OPERATIONS"},
	{SC, 44, MALI_ROLE_LS, "LS_MEM_READ_FULL"},
	{SC, 45, MALI_ROLE_LS, "LS_MEM_READ_SHORT"},
	{SC, 46, MALI_ROLE_LS, "LS_MEM_WRITE_FULL"},
	{SC, 47, MALI_ROLE_LS, "LS_MEM_WRITE_SHORT"},
	{SC, 48, MALI_ROLE_LS, "LS_MEM_ATOMIC"},
	{L2, 26, 0, "L2_READ_LOOKUP"},
	{L2, 27, 0, "L2_WRITE_LOOKUP"},
	{L2, 32, MALI_ROLE_EXT_READ_BEATS, "L2_EXT_READ_BEATS"},
	{L2, 47, MALI_ROLE_EXT_WRITE_BEATS, "L2_EXT_WRITE_BEATS"},
};

/* Product ids: GPU_ID[31:16]. Midgard parts have fixed ids; from Bifrost on
 * the id is arch_major[15:12] arch_minor[11:8] arch_rev[7:4] product[3:0] and
 * is matched on arch_major and product (mali_kbase_gpu_id.h). Bus width:
 * 16 bytes (128-bit AXI) unless the GPU's L2_FEATURES says otherwise. */
const struct mali_family mali_families[] = {
	{"T60x", "Midgard", 0x6956, 0xffff, 4, 16, t60x, N(t60x)},
	{"T62x", "Midgard", 0x0620, 0xffff, 4, 16, t60x, N(t60x)},
	{"T72x", "Midgard", 0x0720, 0xffff, 4, 16, t72x, N(t72x)},
	{"T76x", "Midgard", 0x0750, 0xffff, 5, 16, t76x, N(t76x)},
	{"T82x", "Midgard", 0x0820, 0xffff, 5, 16, t82x, N(t82x)},
	{"T83x", "Midgard", 0x0830, 0xffff, 5, 16, t82x, N(t82x)},
	{"T86x", "Midgard", 0x0860, 0xffff, 5, 16, t76x, N(t76x)},
	{"T88x", "Midgard", 0x0880, 0xffff, 5, 16, t76x, N(t76x)},
	{"G71", "Bifrost", 0x6000, 0xf00f, 5, 16, g71, N(g71)},
	{"G51", "Bifrost", 0x7000, 0xf00f, 5, 16, g51, N(g51)},
};
const size_t mali_nfamilies = N(mali_families);
