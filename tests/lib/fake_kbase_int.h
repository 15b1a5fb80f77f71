/* Inside the fake kbase device (tests/lib/fake_kbase.c): what the per-
 * generation driver files (fake_kbase_t6xx.c, fake_kbase_midgard_uk.c,
 * fake_kbase_vinstr_uk.c, fake_kbase_ioctl.c) share with the core. The core
 * holds the GPU (counter activity, the dump written at a dump request, the
 * hwcnt reader's ring) and the device-wide instrumentation state; each
 * generation file replays its driver's dispatch of the calls on one open
 * file (one kbase context), citing the driver source it follows. */
#ifndef TESTS_LIB_FAKE_KBASE_INT_H
#define TESTS_LIB_FAKE_KBASE_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "fake_kbase.h"

#define FAKE_MAX_REGIONS 8
#define FAKE_MAX_GROUPS 16 /* BASE_MAX_COHERENT_GROUPS */

/* One GPU memory region of a context. */
struct fake_region {
	uint64_t handle; /* what MEM_ALLOC answered: GPU address, or the SAME_VA cookie */
	uint64_t gpu_va; /* 0 until the GPU can address it (SAME_VA: set at mmap) */
	size_t pages;
	uint64_t flags;
	uint8_t *cpu; /* the CPU mapping (fake memory), NULL until mmap */
	/* A cacheable CPU mapping (the generation's kbase_cpu_mmap did not make
	 * it write-combine): the GPU writes memory behind the CPU's cache, here
	 * `mem`, and the CPU keeps reading the lines it has (the worst case: never
	 * evicted, never invalidated). NULL: the mapping is uncached, the CPU
	 * reads what the GPU wrote. */
	uint8_t *mem;
	bool gpu_wr;
};
/* The CPU mapping of r (len bytes) as the generation's kbase_cpu_mmap makes
 * it: cached or write-combine. Returns r->cpu, NULL with *err set. */
void *fake_region_map(struct fake_region *r, size_t len, bool cpu_cached, int *err);

/* The per-file state of the driver (struct kbase_context). */
struct fake_ctx {
	uint32_t api_version; /* r6+ handshake: 0 until the version check */
	int setup_in_progress, setup_complete;
	bool tracking_mapped;
	void *tracking;
	struct fake_region reg[FAKE_MAX_REGIONS];
	unsigned nreg;
	uint64_t next_gpu_pfn, next_cookie;
};

/* A driver generation: the device file's ioctl and mmap. */
struct fake_gen {
	const char *name;
	int (*ioctl)(struct fake_ctx *c, unsigned long req, void *arg); /* >= 0 or -errno */
	void *(*mmap)(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err);
	uint32_t reader_min_interval_ns; /* the vinstr reader's shortest interval (0: no reader) */
	uint32_t uk_call_max;		 /* kbase_ioctl's CALL_MAX_SIZE (0: no UK calls) */
};
extern const struct fake_gen fake_gen_t6xx, fake_gen_midgard_uk, fake_gen_vinstr_uk, fake_gen_ioctl;

const struct fake_kbase_cfg *fake_cfg(void);
uid_t fake_euid(void);

/* The GPU's instrumentation (kbase_device's hwcnt state), device-wide. */
enum fake_hwcnt_state { FAKE_HWCNT_DISABLED, FAKE_HWCNT_IDLE };
/* kbase_instr_hwcnt_enable/_disable/_dump/_clear: 0 or -1 (MALI_ERROR_FUNCTION_FAILED). */
int fake_hwcnt_enable(struct fake_ctx *c, uint64_t dump_va);
int fake_hwcnt_disable(struct fake_ctx *c);
int fake_hwcnt_dump(struct fake_ctx *c);
int fake_hwcnt_clear(struct fake_ctx *c);
/* The reader (vinstr) with buffer_count buffers: returns the reader fd or -errno. */
int fake_reader_create(uint32_t buffer_count);

/* The core groups as the driver builds them from L2_PRESENT and
 * SHADER_PRESENT; returns their number. */
unsigned fake_core_groups(uint64_t mask[FAKE_MAX_GROUPS]);
/* GPU properties in the drivers' layouts. */
void fake_props_uk(void *props, bool t6xx); /* struct kbase_uk_gpuprops / kbase_uk_t6xx_gpuprops */
size_t fake_props_kv(uint8_t *buf);	    /* GET_GPUPROPS key/value buffer (NULL: size) */

/* Fake memory for mappings (page-aligned, released by fake_kbase_munmap). */
void *fake_pages(size_t len);
/* The UK calling convention of kbase_ioctl on the UK drivers: a call larger
 * than the generation's CALL_MAX_SIZE is -ENOTTY; the argument is copied into
 * a message buffer prefilled with 0xdeadbeef, kbase_dispatch runs on it, any
 * failure returns -EFAULT and nothing is copied back. dispatch returns 0
 * (MALI_ERROR_NONE) or non-zero (MALI_ERROR_FUNCTION_FAILED, or the errno of
 * the handshake drivers' kbase_legacy_dispatch). */
int fake_uk_call(struct fake_ctx *c, unsigned long req, void *arg,
		 int (*dispatch)(struct fake_ctx *c, void *msg, uint32_t size));
/* Stats of the calls, for tests (fake_kbase_stats). */
struct fake_kbase_stats *fake_stats(void);

#endif
