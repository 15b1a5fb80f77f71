/* The fake kbase device as the t6xx r3p0 driver (UK 3.0) answers it: the
 * Exynos 5420 Linux 3.4 kernels' drivers/gpu/arm/t6xx/kbase/ (e.g. the Galaxy
 * Tab S trees, CM-Tab-S/android_kernel_samsung_exynos5420; the Arndale Octa's
 * t6xx tree). Sources, read not copied:
 *  - src/linux/mali_kbase_core_linux.c: kbase_ioctl (CALL_MAX_SIZE 528,
 *    -EFAULT on a failed dispatch), kbase_dispatch (version check, the setup state
 *    machine, the calls below);
 *  - src/common/mali_kbase_uku.h: BASE_UK_VERSION 3.0, the function ids (TMEM_ALLOC
 *    512 .. SET_FLAGS 528), kbase_uk_tmem_alloc (40 bytes);
 *  - mali_base_kernel.h: mali_base_gpu_props with the 8-byte thread props
 *    (512 bytes);
 *  - src/linux/mali_kbase_mem_linux.c (exynos5420/android_kernel_samsung_exynos5420):
 *    kbase_mmap: the tracking page (vm_pgoff KBASE_REG_COOKIE_MTP = 3) first,
 *    "if not the MTP, verify that the MTP has been mapped" (-EINVAL); a TMEM
 *    region is mapped at its GPU page number (vm_pgoff >= the TMEM zone base);
 *    kbase_tracking_page_setup: a second tracking page is -EFAULT;
 *    kbase_cpu_mmap: write-combine unless KBASE_REG_CPU_CACHED
 *    (src/common/mali_kbase_cache_policy.c kbase_cache_enabled: both CPU hints);
 *  - src/common/mali_kbase_mem.h: KBASE_REG_ZONE_TMEM_BASE = (1 << 33) >> PAGE_SHIFT;
 *  - src/common/mali_kbase_gpuprops.c: the core groups (fake_kbase.c,
 *    fake_core_groups);
 *  - the instrumentation (src/common/mali_kbase_instr.c: kbase_instr_hwcnt_setup/
 *    _dump/_clear) is the core's (fake_kbase.c), the same entry points as the
 *    Midgard driver's (read there). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"

#define T6XX_TMEM_BASE_PFN ((1ull << 33) >> 12) /* KBASE_REG_ZONE_TMEM_BASE */
#define T6XX_UK_MAJOR 3
#define T6XX_UK_MINOR 0

/* kbase_dispatch of the t6xx r3p0 driver. 0 = MALI_ERROR_NONE, -1 = failed. */
static int dispatch(struct fake_ctx *c, void *args, uint32_t size)
{
	union kbase_uk_header *ukh = args;
	uint32_t id = ukh->id;
	ukh->ret = 0; /* "Be optimistic" */

	if (id == UKP_FUNC_ID_CHECK_VERSION) {
		if (size == sizeof(struct kbase_uk_version_check)) {
			struct kbase_uk_version_check *v = args;
			v->major = T6XX_UK_MAJOR; /* the driver's own, whatever was asked */
			v->minor = T6XX_UK_MINOR;
			ukh->ret = 0;
		} else {
			ukh->ret = 3; /* MALI_ERROR_FUNCTION_FAILED */
		}
		return 0;
	}

	if (!c->setup_complete) {
		/* "setup pending, try to signal that we'll do the setup":
		 * atomic_cmpxchg(&kctx->setup_in_progress, 0, 1) */
		if (c->setup_in_progress)
			return -1; /* "setup was already in progress, err this call" */
		c->setup_in_progress = 1;
		if (id != KBASE_T6XX_FUNC_SET_FLAGS)
			return -1; /* "unexpected call, will stay stuck in setup mode" */
		if (size != sizeof(struct kbase_uk_set_flags))
			return -1; /* bad_size: stays stuck */
		const struct kbase_uk_set_flags *f = args;
		/* kbase_context_set_create_flags: only the kernel flags (bits 1, 2) */
		if (f->create_flags & ~6u) {
			ukh->ret = 3; /* "bad flags, will stay stuck in setup mode" */
			return 0;
		}
		c->setup_complete = 1;
		return 0;
	}

	switch (id) {
	case KBASE_T6XX_FUNC_TMEM_ALLOC: {
		struct kbase_uk_t6xx_tmem_alloc *t = args;
		if (size != sizeof(*t))
			return -1;
		/* kbase_tmem_alloc: a region in the context's GPU VA zone; the
		 * answer is its GPU address (reg->start_pfn << PAGE_SHIFT), which is
		 * also the offset to mmap it at (a 32-bit kernel: no SAME_VA). */
		if (c->nreg >= FAKE_MAX_REGIONS || t->vsize == 0 || t->psize > t->vsize) {
			ukh->ret = 3;
			return 0;
		}
		struct fake_region *r = &c->reg[c->nreg++];
		memset(r, 0, sizeof(*r));
		r->pages = t->vsize;
		r->flags = t->flags;
		r->gpu_wr = (t->flags & BASE_MEM_PROT_GPU_WR) != 0;
		if (c->next_gpu_pfn < T6XX_TMEM_BASE_PFN)
			c->next_gpu_pfn = T6XX_TMEM_BASE_PFN;
		r->gpu_va = r->handle = c->next_gpu_pfn << 12;
		c->next_gpu_pfn += t->vsize;
		t->gpu_addr = r->gpu_va;
		return 0;
	}
	case KBASE_T6XX_FUNC_HWCNT_SETUP: {
		const struct kbase_uk_hwcnt_setup *s = args;
		if (size != sizeof(*s))
			return -1;
		/* kbase_instr_hwcnt_setup: a zero buffer disables */
		int rc = s->dump_buffer ? fake_hwcnt_enable(c, s->dump_buffer) : fake_hwcnt_disable(c);
		if (rc)
			ukh->ret = 3;
		return 0;
	}
	case KBASE_T6XX_FUNC_HWCNT_DUMP:
		if (fake_hwcnt_dump(c)) /* args ignored */
			ukh->ret = 3;
		return 0;
	case KBASE_T6XX_FUNC_HWCNT_CLEAR:
		if (fake_hwcnt_clear(c))
			ukh->ret = 3;
		return 0;
	case KBASE_T6XX_FUNC_GPU_PROPS_REG_DUMP:
		if (size != sizeof(struct kbase_uk_t6xx_gpuprops))
			return -1; /* "Wrong syscall size" */
		fake_props_uk(args, true);
		return 0;
	default:
		return -1; /* "unknown ioctl" -> out_bad */
	}
}

static int t6xx_ioctl(struct fake_ctx *c, unsigned long req, void *arg)
{
	/* Every type-0x80 number is a UK call here, whatever its nr: the driver
	 * reads the id from the argument's first word (kbase_ioctl). */
	return fake_uk_call(c, req, arg, dispatch);
}

#define KBASE_REG_COOKIE_MTP 3
#define T6XX_HINT_CPU_RD (1u << 5) /* mali_base_kernel.h: BASE_MEM_HINT_CPU_RD */
#define T6XX_HINT_CPU_WR (1u << 6) /* BASE_MEM_HINT_CPU_WR */

/* kbase_mmap (t6xx src/linux/mali_kbase_mem_linux.c): no VM_SHARED check in
 * this generation; the tracking page first; a TMEM region at its GPU page. */
static void *t6xx_mmap(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err)
{
	(void)prot, (void)flags;
	if (len == 0) {
		*err = EINVAL;
		return NULL;
	}
	if ((uint64_t)off == KBASE_REG_COOKIE_MTP << 12) {
		if (c->tracking_mapped) {
			*err = EFAULT; /* "check that this is the only tracking page" */
			return NULL;
		}
		c->tracking = fake_pages(len);
		c->tracking_mapped = c->tracking != NULL;
		if (!c->tracking)
			*err = ENOMEM;
		return c->tracking;
	}
	if (!c->tracking_mapped) {
		*err = EINVAL; /* "verify that the MTP has been mapped" */
		return NULL;
	}
	for (unsigned i = 0; i < c->nreg; i++) {
		struct fake_region *r = &c->reg[i];
		if ((uint64_t)off != r->gpu_va || len > r->pages * 4096 || r->cpu)
			continue;
		/* kbase_cpu_mmap: "if (!(reg->flags & KBASE_REG_CPU_CACHED))
		 * vma->vm_page_prot = pgprot_writecombine(..)"; CPU_CACHED comes from
		 * kbase_update_region_flags -> kbase_cache_enabled
		 * (mali_kbase_cache_policy.c): both BASE_MEM_HINT_CPU_RD and _WR */
		bool cached = (r->flags & (T6XX_HINT_CPU_RD | T6XX_HINT_CPU_WR)) ==
			      (T6XX_HINT_CPU_RD | T6XX_HINT_CPU_WR);
		return fake_region_map(r, len, cached, err);
	}
	*err = ENOMEM; /* no TMEM region encloses the range */
	return NULL;
}

const struct fake_gen fake_gen_t6xx = {"t6xx r3p0 (UK 3.0)", t6xx_ioctl, t6xx_mmap, 0,
				       528 /* kbase_ioctl: "#define CALL_MAX_SIZE 528" */};
