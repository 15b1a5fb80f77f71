/* The fake kbase device as the Midgard r5p0 driver (UK 7.0, before vinstr)
 * answers it: drivers/gpu/arm/midgard/ r5p0-02rel0 as in LineageOS
 * android_kernel_samsung_manta (and other exynos5420 / Arndale Octa 3.x
 * trees; r4p0 is the same but for the tracking page). Sources, read not
 * copied:
 *  - mali_kbase_core_linux.c: kbase_ioctl (CALL_MAX_SIZE 536, -EFAULT when
 *    kbase_dispatch fails), kbase_dispatch (version check answered with the
 *    driver's own BASE_UK_VERSION, then the setup state machine: the first
 *    other call takes setup_in_progress with atomic_cmpxchg and, unless it is
 *    a well-sized SET_FLAGS, leaves the context stuck for the life of the
 *    file; then MEM_ALLOC, HWCNT_SETUP/DUMP/CLEAR, GPU_PROPS_REG_DUMP with
 *    their size checks; an unknown id is "unknown ioctl");
 *  - mali_kbase_uku.h: BASE_UK_VERSION 7.0, ids 512 + n, kbase_uk_mem_alloc;
 *  - mali_kbase_mem_linux.c: kbase_mem_alloc (a 64-bit process, !is_compat,
 *    gets SAME_VA: the answer is an mmap cookie, BASE_MEM_COOKIE_BASE
 *    + n pages, and the GPU address is where the mmap lands), kbase_mmap
 *    (MAP_SHARED only; nothing but the tracking page, offset
 *    BASE_MEM_MAP_TRACKING_HANDLE, until it is mapped);
 *  - mali_kbase_instr.c: the instrumentation, in the core (fake_kbase.c). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"

#define R5P0_UK_MAJOR 7
#define MIDGARD_CACHED_CPU (1u << 12) /* mali_base_kernel.h: BASE_MEM_CACHED_CPU */
#define R5P0_UK_MINOR 0

static int dispatch(struct fake_ctx *c, void *args, uint32_t size)
{
	union kbase_uk_header *ukh = args;
	uint32_t id = ukh->id;
	ukh->ret = 0;

	if (id == UKP_FUNC_ID_CHECK_VERSION) {
		if (size == sizeof(struct kbase_uk_version_check)) {
			struct kbase_uk_version_check *v = args;
			/* (cfg uk_major: a driver of another UK version, for the
			 * agent's refusal of versions it does not implement) */
			v->major = fake_cfg()->uk_major ? (uint16_t)fake_cfg()->uk_major : R5P0_UK_MAJOR;
			v->minor = R5P0_UK_MINOR;
		} else {
			ukh->ret = 3;
		}
		return 0;
	}

	if (!c->setup_complete) {
		if (c->setup_in_progress)
			return -1; /* atomic_cmpxchg(&kctx->setup_in_progress, 0, 1) != 0 */
		c->setup_in_progress = 1;
		if (id != KBASE_FUNC_SET_FLAGS)
			return -1; /* "unexpected call, will stay stuck in setup mode" */
		if (size != sizeof(struct kbase_uk_set_flags))
			return -1;
		const struct kbase_uk_set_flags *f = args;
		if (f->create_flags & ~6u) {
			ukh->ret = 3;
			return 0;
		}
		c->setup_complete = 1;
		return 0;
	}

	switch (id) {
	case KBASE_FUNC_MEM_ALLOC: {
		struct kbase_uk_mem_alloc *m = args;
		if (size != sizeof(*m))
			return -1;
		if (c->nreg >= FAKE_MAX_REGIONS || m->va_pages == 0 || m->commit_pages > m->va_pages) {
			ukh->ret = 3;
			return 0;
		}
		struct fake_region *r = &c->reg[c->nreg++];
		memset(r, 0, sizeof(*r));
		r->pages = (size_t)m->va_pages;
		r->gpu_wr = (m->flags & BASE_MEM_PROT_GPU_WR) != 0;
		if (sizeof(void *) == 8 && !fake_cfg()->compat32) {
			/* kbase_mem_alloc: "if (!kctx->is_compat) *flags |= BASE_MEM_SAME_VA";
			 * the region waits for its mmap, the caller gets a cookie */
			m->flags |= BASE_MEM_SAME_VA;
			r->handle = BASE_MEM_COOKIE_BASE + (c->next_cookie++ << 12);
		} else {
			r->gpu_va = r->handle = c->next_gpu_pfn << 12;
			c->next_gpu_pfn += r->pages;
		}
		r->flags = m->flags;
		m->gpu_va = r->handle;
		return 0;
	}
	case KBASE_FUNC_HWCNT_SETUP: {
		const struct kbase_uk_hwcnt_setup *s = args;
		if (size != sizeof(*s))
			return -1;
		int rc = s->dump_buffer ? fake_hwcnt_enable(c, s->dump_buffer) : fake_hwcnt_disable(c);
		if (rc)
			ukh->ret = 3;
		return 0;
	}
	case KBASE_FUNC_HWCNT_DUMP:
		if (fake_hwcnt_dump(c))
			ukh->ret = 3;
		return 0;
	case KBASE_FUNC_HWCNT_CLEAR:
		if (fake_hwcnt_clear(c))
			ukh->ret = 3;
		return 0;
	case KBASE_FUNC_GPU_PROPS_REG_DUMP:
		if (size != sizeof(struct kbase_uk_gpuprops))
			return -1;
		fake_props_uk(args, false);
		return 0;
	case KBASE_FUNC_SET_FLAGS: /* a second SET_FLAGS after setup: a normal call with no case */
	default:
		return -1; /* "unknown ioctl %u" -> out_bad; HWCNT_READER_SETUP (548) too */
	}
}

static int r5p0_ioctl(struct fake_ctx *c, unsigned long req, void *arg)
{
	return fake_uk_call(c, req, arg, dispatch);
}

static void *r5p0_mmap(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err)
{
	(void)prot;
	/* kbase_mmap: "if (!(vma->vm_flags & VM_SHARED)) err = -EINVAL" */
	if (!(flags & MAP_SHARED) || len == 0) {
		*err = EINVAL;
		return NULL;
	}
	if ((uint64_t)off == BASE_MEM_MAP_TRACKING_HANDLE) {
		/* kbase_tracking_page_setup: "check that this is the only tracking
		 * page" (-EFAULT); the mapping's size is not checked (any non-zero
		 * number of pages, kbase_mmap) */
		if (c->tracking_mapped) {
			*err = EFAULT;
			return NULL;
		}
		c->tracking = fake_pages(len);
		c->tracking_mapped = c->tracking != NULL;
		if (!c->tracking)
			*err = ENOMEM;
		return c->tracking;
	}
	/* kbase_mem_allow_alloc: no tracking page yet, no mapping */
	if (!c->tracking_mapped) {
		*err = EINVAL;
		return NULL;
	}
	for (unsigned i = 0; i < c->nreg; i++) {
		struct fake_region *r = &c->reg[i];
		if ((uint64_t)off != r->handle || len > r->pages * 4096 || r->cpu)
			continue;
		/* kbase_cpu_mmap: write-combine unless KBASE_REG_CPU_CACHED (from
		 * BASE_MEM_CACHED_CPU, kbase_cache_enabled), and then only
		 * "(reg->flags & KBASE_REG_CPU_WR)" in manta's copy, "(reg->flags &
		 * (KBASE_REG_CPU_WR|KBASE_REG_CPU_RD))" in the r5p0-02rel0 ones */
		uint64_t wc_if = fake_cfg()->r5p0_02rel0 ? BASE_MEM_PROT_CPU_WR | BASE_MEM_PROT_CPU_RD
							 : BASE_MEM_PROT_CPU_WR;
		bool cached = (r->flags & MIDGARD_CACHED_CPU) || !(r->flags & wc_if);
		if (!fake_region_map(r, len, cached, err))
			return NULL;
		/* SAME_VA (kbase_mmap cookie case): the region is mapped on the
		 * GPU at the CPU address just chosen */
		if (r->flags & BASE_MEM_SAME_VA)
			r->gpu_va = (uint64_t)(uintptr_t)r->cpu;
		return r->cpu;
	}
	*err = EINVAL;
	return NULL;
}

const struct fake_gen fake_gen_midgard_uk = {"midgard r5p0 (UK 7.0)", r5p0_ioctl, r5p0_mmap, 0,
					     536 /* kbase_ioctl: CALL_MAX_SIZE */};
