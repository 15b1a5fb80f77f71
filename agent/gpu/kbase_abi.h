/* The Mali kbase driver's user interface, as far as hardware counters need it:
 * written from the public driver sources (see agent/gpu/README.md for the
 * files and versions each part comes from). Both the agent (kbase_dev.c) and
 * the fake device of the tests (tests/fake_kbase/) use these definitions, so
 * an error here would be shared by both: nothing in this file has been
 * checked against a real driver.
 *
 * Two interfaces:
 *  - "ioctl": drivers r16p0 and later (interface major 11): one ioctl number
 *    per call, struct sizes encoded in the number, type 0x80.
 *  - "UK": the older Midgard drivers (Linux 3.x board kernels): every call is
 *    _IOC(RW, 0x80, id, size) with a header whose first word is the function
 *    id (UK_FUNC_ID + n) and which the driver overwrites with a result code.
 * The hardware-counter reader (vinstr, fd returned by HWCNT_READER_SETUP) has
 * its own ioctls, type 0xBE, in both. */
#ifndef AGENT_GPU_KBASE_ABI_H
#define AGENT_GPU_KBASE_ABI_H

#include <stdint.h>
#include <sys/ioctl.h>

#define KBASE_IOCTL_TYPE 0x80

/* ---- ioctl interface (mali_kbase_ioctl.h) */
struct kbase_ioctl_version_check {
	uint16_t major;
	uint16_t minor;
};
struct kbase_ioctl_set_flags {
	uint32_t create_flags;
};
struct kbase_ioctl_get_gpuprops {
	uint64_t buffer; /* user pointer; 0 with size 0 asks for the size */
	uint32_t size;
	uint32_t flags;
};
struct kbase_ioctl_hwcnt_reader_setup {
	uint32_t buffer_count;
	uint32_t fe_bm; /* job manager ("front end") block enable mask */
	uint32_t shader_bm;
	uint32_t tiler_bm;
	uint32_t mmu_l2_bm;
};
#define KBASE_IOCTL_VERSION_CHECK _IOWR(KBASE_IOCTL_TYPE, 0, struct kbase_ioctl_version_check)
#define KBASE_IOCTL_SET_FLAGS _IOW(KBASE_IOCTL_TYPE, 1, struct kbase_ioctl_set_flags)
#define KBASE_IOCTL_GET_GPUPROPS _IOW(KBASE_IOCTL_TYPE, 3, struct kbase_ioctl_get_gpuprops)
#define KBASE_IOCTL_HWCNT_READER_SETUP _IOW(KBASE_IOCTL_TYPE, 8, struct kbase_ioctl_hwcnt_reader_setup)

/* GET_GPUPROPS answer: (key << 2 | size code) as u32 LE, then the value
 * (size code 0..3 = u8, u16, u32, u64), packed. Keys used here: */
#define KBASE_GPUPROP_PRODUCT_ID 1
#define KBASE_GPUPROP_MINOR_REVISION 3
#define KBASE_GPUPROP_MAJOR_REVISION 4
#define KBASE_GPUPROP_GPU_FREQ_KHZ_MAX 6
#define KBASE_GPUPROP_L2_NUM_L2_SLICES 15
#define KBASE_GPUPROP_RAW_SHADER_PRESENT 25
#define KBASE_GPUPROP_RAW_L2_PRESENT 27
#define KBASE_GPUPROP_RAW_L2_FEATURES 29
#define KBASE_GPUPROP_RAW_GPU_ID 55
#define KBASE_GPUPROP_COHERENCY_NUM_GROUPS 61
#define KBASE_GPUPROP_COHERENCY_NUM_CORE_GROUPS 62
#define KBASE_GPUPROP_COHERENCY_GROUP_0 64 /* .. 79: core mask of group n */

/* ---- hwcnt reader (mali_kbase_hwcnt_reader.h), on the reader fd */
struct kbase_hwcnt_reader_metadata {
	uint64_t timestamp; /* ns, the driver's raw monotonic clock */
	uint32_t event_id;  /* 0 manual, 1 periodic, 2 pre-job, 3 post-job */
	uint32_t buffer_idx;
};
#define KBASE_HWCNT_READER 0xBE
#define KBASE_HWCNT_READER_GET_HWVER _IOR(KBASE_HWCNT_READER, 0x00, uint32_t)
#define KBASE_HWCNT_READER_GET_BUFFER_SIZE _IOR(KBASE_HWCNT_READER, 0x01, uint32_t)
#define KBASE_HWCNT_READER_DUMP _IOW(KBASE_HWCNT_READER, 0x10, uint32_t)
#define KBASE_HWCNT_READER_CLEAR _IOW(KBASE_HWCNT_READER, 0x11, uint32_t)
#define KBASE_HWCNT_READER_GET_BUFFER _IOR(KBASE_HWCNT_READER, 0x20, struct kbase_hwcnt_reader_metadata)
#define KBASE_HWCNT_READER_PUT_BUFFER _IOW(KBASE_HWCNT_READER, 0x21, struct kbase_hwcnt_reader_metadata)
#define KBASE_HWCNT_READER_SET_INTERVAL _IOW(KBASE_HWCNT_READER, 0x30, uint32_t)
#define KBASE_HWCNT_READER_GET_API_VERSION _IOW(KBASE_HWCNT_READER, 0xFF, uint32_t)
#define KBASE_HWCNT_READER_API 1
#define KBASE_HWCNT_READER_EVENT_PERIODIC 1

/* ---- UK interface (mali_uk.h, mali_kbase_uku.h) */
union kbase_uk_header {
	uint32_t id;  /* in: function id */
	uint32_t ret; /* out: 0 = success */
	uint64_t sizer;
};
#define UKP_FUNC_ID_CHECK_VERSION 0
#define KBASE_UK_FUNC_ID 512
#define KBASE_FUNC_MEM_ALLOC (KBASE_UK_FUNC_ID + 0)
#define KBASE_FUNC_HWCNT_SETUP (KBASE_UK_FUNC_ID + 10)
#define KBASE_FUNC_HWCNT_DUMP (KBASE_UK_FUNC_ID + 11)
#define KBASE_FUNC_HWCNT_CLEAR (KBASE_UK_FUNC_ID + 12)
#define KBASE_FUNC_GPU_PROPS_REG_DUMP (KBASE_UK_FUNC_ID + 14)
#define KBASE_FUNC_SET_FLAGS (KBASE_UK_FUNC_ID + 18)
#define KBASE_FUNC_HWCNT_READER_SETUP (KBASE_UK_FUNC_ID + 36)
/* The command number: the id lands in (and overlaps) the nr/type bits, as
 * the driver's user library computes it; the driver reads the id from the
 * header, and the size from the number. */
#define KBASE_UK_CMD(id, size)                                                                               \
	((unsigned long)((3u << 30) | ((uint32_t)(size) << 16) | (KBASE_IOCTL_TYPE << 8) | (uint32_t)(id)))

struct kbase_uk_version_check {
	union kbase_uk_header header;
	uint16_t major;
	uint16_t minor;
	uint8_t padding[4];
};
struct kbase_uk_set_flags {
	union kbase_uk_header header;
	uint32_t create_flags;
	uint32_t padding;
};
struct kbase_uk_mem_alloc {
	union kbase_uk_header header;
	uint64_t va_pages;
	uint64_t commit_pages;
	uint64_t extent;
	uint64_t flags;
	uint64_t gpu_va; /* out; also the mmap offset of the region */
	uint16_t va_alignment;
	uint8_t padding[6];
};
#define BASE_MEM_PROT_CPU_RD (1u << 0)
#define BASE_MEM_PROT_CPU_WR (1u << 1)
#define BASE_MEM_PROT_GPU_WR (1u << 3)
struct kbase_uk_hwcnt_setup {
	union kbase_uk_header header;
	uint64_t dump_buffer; /* GPU address; 0 disables */
	uint32_t jm_bm;
	uint32_t shader_bm;
	uint32_t tiler_bm;
	uint32_t l3_cache_bm;
	uint32_t mmu_l2_bm;
	uint32_t padding;
};
struct kbase_uk_hwcnt_simple { /* DUMP and CLEAR: header only */
	union kbase_uk_header header;
};
struct kbase_uk_hwcnt_reader_setup {
	union kbase_uk_header header;
	uint32_t buffer_count;
	uint32_t jm_bm;
	uint32_t shader_bm;
	uint32_t tiler_bm;
	uint32_t mmu_l2_bm;
	int32_t fd; /* out */
};

/* struct mali_base_gpu_props of the UK GPU_PROPS_REG_DUMP call, the fields
 * this agent reads at their offsets. Midgard r4p0 on (mali_base_kernel.h,
 * e.g. LineageOS android_kernel_samsung_manta drivers/gpu/arm/midgard, UK 7.0):
 * core 48, l2 8, l3 (unused) 8, tiler 8, thread 24, raw 160, coherency 272 =
 * 528 bytes. The t6xx r3p0 driver (UK 3.0: drivers/gpu/arm/t6xx/kbase/
 * mali_base_kernel.h of the Galaxy Tab S exynos5420 trees) has an 8-byte
 * thread props struct: 512 bytes, the raw and coherency parts 16 bytes
 * earlier. */
struct kbase_uk_core_props { /* 48 */
	uint32_t product_id;
	uint16_t version_status, minor_revision, major_revision, padding0;
	uint32_t gpu_speed_mhz, gpu_freq_khz_max, gpu_freq_khz_min, log2_program_counter_size;
	uint32_t texture_features[3];
	uint64_t gpu_available_memory_size;
};
struct kbase_uk_raw_props { /* 160: midg_raw_gpu_props */
	uint64_t shader_present, tiler_present, l2_present, l3_present;
	uint32_t l2_features, l3_features, mem_features, mmu_features;
	uint32_t as_present, js_present, js_features[16], tiler_features, texture_features[3];
	uint32_t gpu_id;
	uint32_t thread_max_threads, thread_max_workgroup_size, thread_max_barrier_size, thread_features;
	uint32_t coherency_mode; /* "padding" before r5 */
};
struct kbase_uk_gpu_coherent_group {
	uint64_t core_mask;
	uint16_t num_cores;
	uint16_t padding[3];
};
struct kbase_uk_coherent_info { /* 272 */
	uint32_t num_groups, num_core_groups, coherency, coherency_padding;
	struct kbase_uk_gpu_coherent_group group[16];
};
struct kbase_uk_gpuprops {
	union kbase_uk_header header;
	struct kbase_uk_core_props core;
	uint8_t l2_log2_line_size, l2_log2_cache_size, num_l2_slices, l2_padding[5];
	uint64_t l3_unused;
	uint32_t tiler_bin_size_bytes, tiler_max_active_levels;
	uint8_t thread_props[24];
	struct kbase_uk_raw_props raw;
	struct kbase_uk_coherent_info coh;
};
struct kbase_uk_t6xx_gpuprops {
	union kbase_uk_header header;
	struct kbase_uk_core_props core;
	uint8_t l2_log2_line_size, l2_log2_cache_size, num_l2_slices, l2_padding[5];
	uint8_t l3_props[8];
	uint32_t tiler_bin_size_bytes, tiler_max_active_levels;
	uint8_t thread_props[8]; /* max_registers u16, 3 x u8, padding[3] */
	struct kbase_uk_raw_props raw;
	struct kbase_uk_coherent_info coh;
};

/* ---- t6xx r3p0 (UK 3.0; drivers/gpu/arm/t6xx/kbase/src/mali_kbase_uku.h,
 * enum kbase_uk_function_id: TMEM_ALLOC, TMEM_IMPORT, PMEM_ALLOC, MEM_FREE,
 * JOB_SUBMIT, SYNC, POST_TERM, HWCNT_SETUP, ..., SET_FLAGS in order) */
#define KBASE_T6XX_FUNC_TMEM_ALLOC (KBASE_UK_FUNC_ID + 0)
#define KBASE_T6XX_FUNC_HWCNT_SETUP (KBASE_UK_FUNC_ID + 7)
#define KBASE_T6XX_FUNC_HWCNT_DUMP (KBASE_UK_FUNC_ID + 8)
#define KBASE_T6XX_FUNC_HWCNT_CLEAR (KBASE_UK_FUNC_ID + 9)
#define KBASE_T6XX_FUNC_GPU_PROPS_REG_DUMP (KBASE_UK_FUNC_ID + 11)
#define KBASE_T6XX_FUNC_SET_FLAGS (KBASE_UK_FUNC_ID + 16)
struct kbase_uk_t6xx_tmem_alloc {
	union kbase_uk_header header;
	uint32_t vsize, psize, extent, flags, is_growable, padding;
	uint64_t gpu_addr; /* out: GPU address, also the region's mmap offset */
};

/* Memory (mali_base_kernel.h, mali_kbase_mem_linux.c kbase_mmap) */
#define BASE_MEM_SAME_VA (1u << 13)		 /* out of MEM_ALLOC: GPU VA = the CPU mapping */
#define BASE_MEM_MAP_TRACKING_HANDLE 0x3000ull	 /* r5p0: mmap it before any other */
#define BASE_MEM_COOKIE_BASE 0x40000ull		 /* SAME_VA allocations answer a cookie offset */
#define KBASE_HWCNT_DUMP_ALIGN 2048		 /* kbase_instr_hwcnt_enable_internal */

_Static_assert(sizeof(struct kbase_uk_gpuprops) == 8 + 528, "mali_base_gpu_props layout");
_Static_assert(sizeof(struct kbase_uk_t6xx_gpuprops) == 8 + 512, "t6xx mali_base_gpu_props layout");
_Static_assert(sizeof(struct kbase_uk_t6xx_tmem_alloc) == 40, "t6xx kbase_uk_tmem_alloc layout");
_Static_assert(sizeof(struct kbase_uk_raw_props) == 160, "midg_raw_gpu_props layout");
_Static_assert(sizeof(struct kbase_uk_hwcnt_setup) == 40, "kbase_uk_hwcnt_setup layout");
_Static_assert(sizeof(struct kbase_uk_mem_alloc) == 56, "kbase_uk_mem_alloc layout");
_Static_assert(sizeof(struct kbase_uk_hwcnt_reader_setup) == 32, "kbase_uk_hwcnt_reader_setup layout");

/* ---- counter blocks (mali_kbase_vinstr.c, mali_kbase_gator_api.c) */
#define MALI_CNT_PER_BLOCK 64 /* u32 words per block */
#define MALI_CNT_HEADER 4     /* the first 4 words: timestamp (2), enable mask (1), reserved */
#define MALI_CNT_ENABLE_WORD 2
#define MALI_BLOCK_BYTES (MALI_CNT_PER_BLOCK * 4)
#define MALI_V4_BLOCKS_PER_GROUP 8 /* SC0..SC3, tiler, MMU/L2, (unused), JM */

#endif
