#include "kbase_dev.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "fail.h"
#include "kbase_abi.h"

static int libc_open(const char *p, int f)
{
	return open(p, f);
}
static int libc_ioctl(int fd, unsigned long r, void *a)
{
	return ioctl(fd, r, a);
}
static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}
static uint64_t libc_mono(void)
{
	return clock_ns(CLOCK_MONOTONIC);
}
static uint64_t libc_raw(void)
{
	return clock_ns(CLOCK_MONOTONIC_RAW);
}

const struct kbase_sys kbase_sys_libc = {libc_open, libc_ioctl, mmap,	  munmap, poll,
					 close,	    libc_mono,	libc_raw, geteuid};

/* The UK generations this agent implements. t6xx r3p0: UK 3.0, function ids of
 * drivers/gpu/arm/t6xx/kbase/src/mali_kbase_uku.h (exynos5420 3.4 kernels).
 * Midgard r4p0..r15: UK 6..10, ids of drivers/gpu/arm/midgard/mali_kbase_uku.h
 * (UK 7.0 in LineageOS android_kernel_samsung_manta, r5p0-02rel0); the hwcnt
 * reader (512+36) exists from the vinstr drivers on, older ones answer it
 * "unknown ioctl" (kbase_dispatch default case) and the dump buffer is used. */
static const struct kbase_uk_gen uk_t6xx = {
    "t6xx r3p0",
    3,
    3,
    KBASE_T6XX_FUNC_SET_FLAGS,
    KBASE_T6XX_FUNC_GPU_PROPS_REG_DUMP,
    KBASE_T6XX_FUNC_TMEM_ALLOC,
    KBASE_T6XX_FUNC_HWCNT_SETUP,
    KBASE_T6XX_FUNC_HWCNT_DUMP,
    KBASE_T6XX_FUNC_HWCNT_CLEAR,
    0,
    true,
    true, /* t6xx src/linux/mali_kbase_mem_linux.c kbase_mmap: KBASE_REG_COOKIE_MTP (3) first */
};
static const struct kbase_uk_gen uk_midgard = {
    "midgard r4p0-r15",
    6,
    10,
    KBASE_FUNC_SET_FLAGS,
    KBASE_FUNC_GPU_PROPS_REG_DUMP,
    KBASE_FUNC_MEM_ALLOC,
    KBASE_FUNC_HWCNT_SETUP,
    KBASE_FUNC_HWCNT_DUMP,
    KBASE_FUNC_HWCNT_CLEAR,
    KBASE_FUNC_HWCNT_READER_SETUP,
    false,
    true,
};

const char *kbase_iface_name(enum kbase_iface i)
{
	switch (i) {
	case KBASE_IFACE_IOCTL:
		return "ioctl+reader";
	case KBASE_IFACE_UK_READER:
		return "uk+reader";
	case KBASE_IFACE_UK_DUMP:
		return "uk-dump";
	default:
		return "none";
	}
}

static int xioctl(struct kbase_dev *d, int fd, unsigned long req, void *arg)
{
	int rc = d->sys->ioctl(fd, req, arg);
	return rc < 0 ? -errno : rc;
}

/* A UK call: the driver's answer is in header.ret as well as the return code. */
static int uk_call(struct kbase_dev *d, void *arg, uint32_t id, size_t size)
{
	union kbase_uk_header *h = arg;
	h->sizer = 0;
	h->id = id;
	int rc = xioctl(d, d->fd, KBASE_UK_CMD(id, size), arg);
	if (rc < 0)
		return rc;
	return h->ret ? -EINVAL : 0;
}

static uint64_t prop_get(const uint8_t *buf, size_t len, uint32_t key, bool *found)
{
	size_t i = 0;
	while (i + 4 <= len) {
		uint32_t k;
		memcpy(&k, buf + i, 4);
		i += 4;
		size_t sz = (size_t)1 << (k & 3);
		if (i + sz > len)
			break;
		uint64_t v = 0;
		memcpy(&v, buf + i, sz); /* little-endian host (ARM, x86) */
		i += sz;
		if ((k >> 2) == key) {
			if (found)
				*found = true;
			return v;
		}
	}
	return 0;
}

static int props_ioctl(struct kbase_dev *d, char *err, size_t errlen)
{
	struct kbase_ioctl_get_gpuprops q = {0};
	int size = xioctl(d, d->fd, KBASE_IOCTL_GET_GPUPROPS, &q);
	if (size <= 0 || size > 65536)
		return fail_with(err, errlen, size < 0 ? size : -EPROTO, "GET_GPUPROPS: %s",
				 size < 0 ? strerror(-size) : "bad size");
	uint8_t *buf = calloc(1, (size_t)size);
	if (!buf)
		return -ENOMEM;
	q.buffer = (uint64_t)(uintptr_t)buf;
	q.size = (uint32_t)size;
	int rc = xioctl(d, d->fd, KBASE_IOCTL_GET_GPUPROPS, &q);
	if (rc < 0) {
		free(buf);
		return fail_with(err, errlen, rc, "GET_GPUPROPS: %s", strerror(-rc));
	}
	size_t len = (size_t)size;
	bool have_id = false;
	d->gpu_id = (uint32_t)prop_get(buf, len, KBASE_GPUPROP_RAW_GPU_ID, &have_id);
	if (!have_id)
		d->gpu_id = (uint32_t)prop_get(buf, len, KBASE_GPUPROP_PRODUCT_ID, NULL) << 16 |
			    ((uint32_t)prop_get(buf, len, KBASE_GPUPROP_MAJOR_REVISION, NULL) & 0xf) << 12 |
			    ((uint32_t)prop_get(buf, len, KBASE_GPUPROP_MINOR_REVISION, NULL) & 0xff) << 4;
	d->shader_present = prop_get(buf, len, KBASE_GPUPROP_RAW_SHADER_PRESENT, NULL);
	d->l2_present = prop_get(buf, len, KBASE_GPUPROP_RAW_L2_PRESENT, NULL);
	d->num_l2 = (unsigned)prop_get(buf, len, KBASE_GPUPROP_L2_NUM_L2_SLICES, NULL);
	if (!d->num_l2)
		d->num_l2 = (unsigned)__builtin_popcountll(d->l2_present);
	d->l2_features = (uint32_t)prop_get(buf, len, KBASE_GPUPROP_RAW_L2_FEATURES, NULL);
	d->ngroups = (unsigned)prop_get(buf, len, KBASE_GPUPROP_COHERENCY_NUM_CORE_GROUPS, NULL);
	if (d->ngroups > MALI_MAX_GROUPS)
		d->ngroups = MALI_MAX_GROUPS;
	for (unsigned g = 0; g < d->ngroups; g++)
		d->group_mask[g] = prop_get(buf, len, KBASE_GPUPROP_COHERENCY_GROUP_0 + g, NULL);
	free(buf);
	return 0;
}

static void props_from_raw(struct kbase_dev *d, uint32_t product_id, uint8_t num_l2_slices,
			   const struct kbase_uk_raw_props *r, const struct kbase_uk_coherent_info *c)
{
	d->gpu_id = r->gpu_id ? r->gpu_id : product_id << 16;
	d->shader_present = r->shader_present;
	d->l2_present = r->l2_present;
	d->num_l2 = num_l2_slices ? num_l2_slices : (unsigned)__builtin_popcountll(r->l2_present);
	d->l2_features = r->l2_features;
	d->ngroups = c->num_core_groups > MALI_MAX_GROUPS ? MALI_MAX_GROUPS : c->num_core_groups;
	for (unsigned g = 0; g < d->ngroups; g++)
		d->group_mask[g] = c->group[g].core_mask;
}

static int props_uk(struct kbase_dev *d, char *err, size_t errlen)
{
	int rc;
	if (d->uk->t6xx) {
		struct kbase_uk_t6xx_gpuprops *p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		rc = uk_call(d, p, d->uk->gpu_props, sizeof(*p));
		if (rc == 0)
			props_from_raw(d, p->core.product_id, p->num_l2_slices, &p->raw, &p->coh);
		free(p);
	} else {
		struct kbase_uk_gpuprops *p = calloc(1, sizeof(*p));
		if (!p)
			return -ENOMEM;
		rc = uk_call(d, p, d->uk->gpu_props, sizeof(*p));
		if (rc == 0)
			props_from_raw(d, p->core.product_id, p->num_l2_slices, &p->raw, &p->coh);
		free(p);
	}
	if (rc < 0)
		return fail_with(err, errlen, rc, "GPU_PROPS_REG_DUMP (UK %u.%u): %s", d->drv_major,
				 d->drv_minor, strerror(-rc));
	return 0;
}

static int reader_setup(struct kbase_dev *d, uint32_t interval_ns, char *err, size_t errlen)
{
	uint32_t v = 0;
	if (xioctl(d, d->rfd, KBASE_HWCNT_READER_GET_API_VERSION, &v) == 0 && v != KBASE_HWCNT_READER_API)
		return fail_with(err, errlen, -EPROTO, "hwcnt reader API version %u (this agent knows 1)", v);
	int rc = xioctl(d, d->rfd, KBASE_HWCNT_READER_GET_HWVER, &d->hw_version);
	if (rc < 0)
		return fail_with(err, errlen, rc, "hwcnt reader GET_HWVER: %s", strerror(-rc));
	rc = xioctl(d, d->rfd, KBASE_HWCNT_READER_GET_BUFFER_SIZE, &d->buf_bytes);
	if (rc < 0)
		return fail_with(err, errlen, rc, "hwcnt reader GET_BUFFER_SIZE: %s", strerror(-rc));
	d->buf_count = KBASE_READER_BUFFERS;
	d->map_len = (size_t)d->buf_count * d->buf_bytes;
	void *m = d->sys->mmap(NULL, d->map_len, PROT_READ, MAP_PRIVATE, d->rfd, 0);
	if (m == MAP_FAILED)
		return fail_with(err, errlen, -errno, "hwcnt reader mmap of %zu bytes: %s", d->map_len,
				 strerror(errno));
	d->map = m;
	/* The interval goes by value: every vinstr release dispatches it as
	 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval(cli, (u32)arg)
	 * (mali_kbase_vinstr.c, kbasep_vinstr_hwcnt_reader_ioctl, 2011-2015 and
	 * 2011-2019), as gator and HWCPipe pass it. The 2011-2015 vinstr raises
	 * an interval under DUMPING_RESOLUTION (500 us) to it, the later one
	 * under DUMP_INTERVAL_MIN_NS (100 us): asking for at least 500 us makes
	 * the interval stated here the one every release dumps at. */
	if (interval_ns < KBASE_READER_MIN_INTERVAL_NS)
		interval_ns = KBASE_READER_MIN_INTERVAL_NS;
	d->interval_ns = interval_ns;
	rc = xioctl(d, d->rfd, KBASE_HWCNT_READER_SET_INTERVAL, (void *)(uintptr_t)interval_ns);
	if (rc < 0)
		return fail_with(err, errlen, rc, "hwcnt reader SET_INTERVAL %u ns: %s", interval_ns,
				 strerror(-rc));
	return 0;
}

/* The t6xx TMEM zone starts at GPU address 2^33 and the region's mmap offset
 * is its GPU address (kbase_mmap: vm_pgoff = the GPU page number). */
_Static_assert(sizeof(off_t) >= 8, "the dump buffer's mmap offset can pass 4 GiB: build with "
				   "-D_FILE_OFFSET_BITS=64 on 32-bit glibc");

static int hwcnt_refused(struct kbase_dev *d, int rc, char *err, size_t errlen)
{
	/* kbase_instr_hwcnt_enable: kbase_security_has_capability(..,
	 * KBASE_SEC_INSTR_HW_COUNTERS_COLLECT) is kbasep_am_i_root on these drivers. */
	if (d->sys->euid && d->sys->euid() != 0)
		return fail_with(err, errlen, rc,
				 "the Mali driver refused counter setup (HWCNT_SETUP: %s): it gives the "
				 "counters to root only; run the agent as root (`adb root`, sudo)",
				 strerror(-rc));
	return fail_with(err, errlen, rc,
			 "the Mali driver refused counter setup (HWCNT_SETUP: %s): another process "
			 "(gatord, a vendor tool) holds the counters",
			 strerror(-rc));
}

/* The dump buffer's flags: GPU-writable, and CPU-readable *and* -writable so
 * that every generation maps it uncached (write-combine), and a read after
 * HWCNT_DUMP sees what the GPU wrote, not lines the CPU cached before:
 *  - t6xx r3p0 (src/linux/mali_kbase_mem_linux.c, kbase_cpu_mmap): every
 *    region without KBASE_REG_CPU_CACHED is mapped pgprot_writecombine;
 *    CPU_CACHED comes only from both BASE_MEM_HINT_CPU_RD and _WR
 *    (mali_kbase_cache_policy.c, kbase_cache_enabled);
 *  - Midgard r5p0 as in LineageOS android_kernel_samsung_manta
 *    (midgard/mali_kbase_mem_linux.c, kbase_cpu_mmap): write-combine only
 *    "if (!(reg->flags & KBASE_REG_CPU_CACHED) && (reg->flags &
 *    KBASE_REG_CPU_WR))": a CPU-read-only buffer is mapped cacheable there;
 *  - r5p0-02rel0 and later Midgard copies (kbase_cpu_mmap): write-combine
 *    with KBASE_REG_CPU_WR or _RD; CPU_CACHED only from BASE_MEM_CACHED_CPU
 *    (kbase_cache_enabled).
 * No cache flag or hint is asked for, and the mapping stays PROT_READ (the
 * driver refuses VM_WRITE only without CPU_WR: kbase_mmap). */
#define DUMP_BUFFER_FLAGS (BASE_MEM_PROT_CPU_RD | BASE_MEM_PROT_CPU_WR | BASE_MEM_PROT_GPU_WR)

/* The dump buffer of the UK drivers before vinstr: allocate it, map it, give
 * its GPU address to HWCNT_SETUP. */
static int uk_dump_setup(struct kbase_dev *d, size_t bytes, char *err, size_t errlen)
{
	size_t pages = (bytes + 4095) / 4096;
	uint64_t off;
	uint64_t flags_out = 0;
	int rc;
	if (d->uk->tracking_page) {
		/* kbase_mmap (t6xx r3p0: KBASE_REG_COOKIE_MTP, page 3; Midgard:
		 * BASE_MEM_MAP_TRACKING_HANDLE, 0x3000): every other mmap fails with
		 * EINVAL until the context's tracking page is mapped
		 * (kbase_tracking_page_setup: "if not the MTP, verify that the MTP has
		 * been mapped"). A driver without it refuses this one mapping; the dump
		 * buffer's own mmap then says whether it mattered. */
		void *t = d->sys->mmap(NULL, 4096, PROT_NONE, MAP_SHARED, d->fd,
				       (off_t)BASE_MEM_MAP_TRACKING_HANDLE);
		d->track = t == MAP_FAILED ? NULL : t;
	}
	if (d->uk->t6xx) {
		struct kbase_uk_t6xx_tmem_alloc a = {0};
		a.vsize = a.psize = (uint32_t)pages;
		a.flags = DUMP_BUFFER_FLAGS;
		rc = uk_call(d, &a, d->uk->mem_alloc, sizeof(a));
		off = a.gpu_addr;
	} else {
		struct kbase_uk_mem_alloc a = {0};
		a.va_pages = a.commit_pages = pages;
		a.flags = DUMP_BUFFER_FLAGS;
		rc = uk_call(d, &a, d->uk->mem_alloc, sizeof(a));
		off = a.gpu_va;
		flags_out = a.flags;
	}
	if (rc < 0)
		return fail_with(err, errlen, rc, "MEM_ALLOC for the dump buffer: %s", strerror(-rc));
	d->map_len = pages * 4096;
	void *m = d->sys->mmap(NULL, d->map_len, PROT_READ, MAP_SHARED, d->fd, (off_t)off);
	if (m == MAP_FAILED)
		return fail_with(err, errlen, -errno, "mmap of the dump buffer (offset 0x%llx): %s",
				 (unsigned long long)off, strerror(errno));
	d->map = m;
	/* 64-bit kernels force SAME_VA on a 64-bit process (kbase_mem_alloc):
	 * MEM_ALLOC answers an mmap cookie, and the GPU address is the CPU
	 * address the mmap returned (mali_kbase_mem_linux.c). */
	d->dump_va = (flags_out & BASE_MEM_SAME_VA) ? (uint64_t)(uintptr_t)m : off;
	struct kbase_uk_hwcnt_setup s = {0};
	s.dump_buffer = d->dump_va;
	s.jm_bm = s.shader_bm = s.tiler_bm = s.mmu_l2_bm = 0xffffffffu;
	rc = uk_call(d, &s, d->uk->hwcnt_setup, sizeof(s));
	if (rc < 0)
		return hwcnt_refused(d, rc, err, errlen);
	d->hwcnt_on = true;
	struct kbase_uk_hwcnt_simple c = {0};
	rc = uk_call(d, &c, d->uk->hwcnt_clear, sizeof(c));
	if (rc < 0)
		return fail_with(err, errlen, rc, "HWCNT_CLEAR: %s", strerror(-rc));
	return 0;
}

static int open_ioctl_iface(struct kbase_dev *d, char *err, size_t errlen)
{
	struct kbase_ioctl_set_flags f = {0};
	int rc = xioctl(d, d->fd, KBASE_IOCTL_SET_FLAGS, &f);
	if (rc < 0)
		return fail_with(err, errlen, rc, "SET_FLAGS: %s", strerror(-rc));
	return props_ioctl(d, err, errlen);
}

static int open_uk_iface(struct kbase_dev *d, char *err, size_t errlen)
{
	struct kbase_uk_set_flags f = {0};
	int rc = uk_call(d, &f, d->uk->set_flags, sizeof(f));
	if (rc < 0)
		return fail_with(err, errlen, rc, "SET_FLAGS (UK): %s", strerror(-rc));
	return props_uk(d, err, errlen);
}

static int setup_counting(struct kbase_dev *d, uint32_t interval_ns, char *err, size_t errlen)
{
	int rc;
	if (d->iface == KBASE_IFACE_IOCTL) {
		struct kbase_ioctl_hwcnt_reader_setup s = {KBASE_READER_BUFFERS, ~0u, ~0u, ~0u, ~0u};
		rc = xioctl(d, d->fd, KBASE_IOCTL_HWCNT_READER_SETUP, &s);
		if (rc < 0)
			return fail_with(
			    err, errlen, rc,
			    "the Mali driver refused counter setup (HWCNT_READER_SETUP: %s): "
			    "another profiler may hold the counters, or the kernel disables them",
			    strerror(-rc));
		d->rfd = rc;
		return reader_setup(d, interval_ns, err, errlen);
	}
	struct kbase_uk_hwcnt_reader_setup s = {.buffer_count = KBASE_READER_BUFFERS};
	s.jm_bm = s.shader_bm = s.tiler_bm = s.mmu_l2_bm = ~0u;
	s.fd = -1;
	/* After SET_FLAGS an unknown UK id fails without touching the context
	 * (kbase_dispatch: default case, "unknown ioctl"), so asking is safe. */
	rc = d->uk->reader_setup ? uk_call(d, &s, d->uk->reader_setup, sizeof(s)) : -ENOTTY;
	if (rc == 0 && s.fd >= 0) {
		d->iface = KBASE_IFACE_UK_READER;
		d->rfd = s.fd;
		return reader_setup(d, interval_ns, err, errlen);
	}
	/* No reader (drivers before vinstr): the dump buffer. */
	d->iface = KBASE_IFACE_UK_DUMP;
	d->hw_version = d->fam->layout;
	return 0;
}

static int open_node(struct kbase_dev *d, const char *path, char *err, size_t errlen)
{
	d->fd = d->sys->open(path, O_RDWR | O_CLOEXEC);
	if (d->fd >= 0)
		return 0;
	int e = errno;
	d->fd = -1;
	if (e == ENOENT || e == ENXIO || e == ENODEV)
		return fail_with(err, errlen, -e, "no Mali GPU counters: %s does not exist (no kbase driver)",
				 path);
	if (e == EACCES || e == EPERM)
		return fail_with(err, errlen, -e,
				 "no Mali GPU counters: permission denied opening %s (device mode "
				 "or SELinux policy; run as root / `adb root`)",
				 path);
	return fail_with(err, errlen, -e, "no Mali GPU counters: cannot open %s: %s", path, strerror(e));
}

/* Which interface answers, probed the way the drivers expect it:
 *  1. the UK version check (id 0) first. The UK drivers (t6xx r3p0, Midgard
 *     r4p0..r15) read every type-0x80 call as a UK call whose id is its first
 *     word; in r3p0..r5p0 kbase_dispatch, any call but the version check made
 *     before SET_FLAGS sets setup_in_progress for the life of the file, so the
 *     ioctl interface's VERSION_CHECK (its first word, major 11, reads as UK
 *     id 11) must never come first there. gator and HWCPipe do the same.
 *  2. if the UK check is refused, or answers a UK version not implemented
 *     here: a fresh open (nothing the first file did stays), then the ioctl
 *     interface's VERSION_CHECK (r16 on). */
static int probe(struct kbase_dev *d, const char *path, char *err, size_t errlen)
{
	struct kbase_uk_version_check u = {.major = 10, .minor = 0};
	int rc = uk_call(d, &u, UKP_FUNC_ID_CHECK_VERSION, sizeof(u));
	bool uk_unknown = false;
	if (rc == 0) {
		d->drv_major = u.major;
		d->drv_minor = u.minor;
		if (u.major >= uk_t6xx.major_min && u.major <= uk_t6xx.major_max)
			d->uk = &uk_t6xx;
		else if (u.major >= uk_midgard.major_min && u.major <= uk_midgard.major_max)
			d->uk = &uk_midgard;
		if (d->uk) {
			d->iface = KBASE_IFACE_UK_READER; /* until setup says otherwise */
			return 0;
		}
		/* a UK version this agent does not implement: the ioctl interface
		 * may still answer (a driver keeping a legacy UK path); else refuse */
		uk_unknown = true;
	}
	d->sys->close(d->fd);
	d->fd = -1;
	rc = open_node(d, path, err, errlen);
	if (rc < 0)
		return rc;
	struct kbase_ioctl_version_check v = {11, 0};
	rc = xioctl(d, d->fd, KBASE_IOCTL_VERSION_CHECK, &v);
	if (rc < 0 && uk_unknown)
		return fail_with(err, errlen, -EPROTONOSUPPORT,
				 "no Mali GPU counters: %s is a kbase UK %u.%u driver, which this agent "
				 "does not implement (it knows UK 3 = t6xx r3p0 and UK 6-10 = Midgard "
				 "r4p0-r15)",
				 path, u.major, u.minor);
	if (rc < 0)
		return fail_with(
		    err, errlen, rc,
		    "no Mali GPU counters: %s answers neither the UK version check nor the kbase "
		    "ioctl one (%s): not a Midgard/Bifrost job-manager kbase driver",
		    path, strerror(-rc));
	d->iface = KBASE_IFACE_IOCTL;
	d->drv_major = v.major;
	d->drv_minor = v.minor;
	return 0;
}

int kbase_dev_open(struct kbase_dev *d, const char *path, const struct kbase_sys *sys, uint32_t interval_ns,
		   char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	d->sys = sys ? sys : &kbase_sys_libc;
	d->rfd = -1;
	d->interval_ns = interval_ns; /* the agent's own timer (UK dump); the reader's: reader_setup */
	int rc = open_node(d, path, err, errlen);
	if (rc < 0)
		return rc;
	rc = probe(d, path, err, errlen);
	if (rc < 0) {
		kbase_dev_close(d);
		return rc;
	}
	char why[256] = "";
	rc = d->iface == KBASE_IFACE_IOCTL ? open_ioctl_iface(d, why, sizeof(why))
					   : open_uk_iface(d, why, sizeof(why));
	if (rc < 0) {
		kbase_dev_close(d);
		return fail_with(err, errlen, rc, "no Mali GPU counters: %s", why);
	}
	d->fam = mali_family_find(d->gpu_id);
	if (!d->fam) {
		uint32_t id = d->gpu_id;
		kbase_dev_close(d);
		return fail_with(
		    err, errlen, -ENODEV,
		    "no Mali GPU counters: unknown GPU id 0x%08x (product 0x%04x): no "
		    "counter table for it (known: T60x T62x T72x T76x T82x T83x T86x T88x G71 G51)",
		    id, id >> 16);
	}
	rc = setup_counting(d, interval_ns, why, sizeof(why));
	if (rc == 0) {
		rc = mali_layout_build(&d->layout, d->hw_version, d->shader_present, d->num_l2, d->group_mask,
				       d->ngroups);
		if (rc < 0)
			snprintf(why, sizeof(why),
				 "cannot lay out the dump: hw version %u, shader_present 0x%llx",
				 d->hw_version, (unsigned long long)d->shader_present);
	}
	if (rc == 0 && d->iface != KBASE_IFACE_UK_DUMP && d->buf_bytes < d->layout.words * 4) {
		snprintf(why, sizeof(why), "reader buffers of %u bytes, the layout needs %zu", d->buf_bytes,
			 d->layout.words * 4);
		rc = -EPROTO;
	}
	if (rc == 0 && d->iface == KBASE_IFACE_UK_DUMP)
		rc = uk_dump_setup(d, d->layout.words * 4, why, sizeof(why));
	if (rc < 0) {
		kbase_dev_close(d);
		return fail_with(err, errlen, rc, "no Mali GPU counters: %s", why);
	}
	unsigned bb = mali_bus_bytes_from_l2_features(d->l2_features);
	d->bus_bytes = bb ? bb : d->fam->bus_bytes;
	d->raw_to_mono = (int64_t)(d->sys->mono_ns() - d->sys->raw_ns());
	d->last_ns = d->sys->mono_ns();
	snprintf(d->desc, sizeof(d->desc),
		 "Mali-%s (%s) gpu_id 0x%08x, %d cores, %u L2, driver %s%u.%u%s, %s", d->fam->name,
		 d->fam->arch, d->gpu_id, __builtin_popcountll(d->shader_present), d->num_l2 ? d->num_l2 : 1,
		 d->uk ? "UK " : "", d->drv_major, d->drv_minor, d->uk && d->uk->t6xx ? " (t6xx r3p0)" : "",
		 kbase_iface_name(d->iface));
	return 0;
}

int kbase_dev_poll_fd(const struct kbase_dev *d)
{
	return d->rfd;
}

static int deliver(struct kbase_dev *d, uint64_t t1, const uint32_t *delta, kbase_sample_fn cb, void *ctx)
{
	if (t1 <= d->last_ns) { /* out of order: keep intervals disjoint and ordered */
		d->late_dumps++;
		t1 = d->last_ns + 1;
	}
	uint64_t t0 = d->last_ns;
	d->last_ns = t1;
	d->dumps++;
	return cb(ctx, t0, t1, delta);
}

int kbase_dev_read(struct kbase_dev *d, kbase_sample_fn cb, void *ctx)
{
	if (d->rfd < 0)
		return 0;
	int n = 0;
	for (int guard = 0; guard < (int)d->buf_count * 2; guard++) {
		struct kbase_hwcnt_reader_metadata m = {0};
		int rc = xioctl(d, d->rfd, KBASE_HWCNT_READER_GET_BUFFER, &m);
		if (rc == -EAGAIN || rc == -EWOULDBLOCK)
			break;
		if (rc < 0)
			return rc;
		if (m.buffer_idx >= d->buf_count) {
			xioctl(d, d->rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m);
			return -EPROTO;
		}
		const uint32_t *buf = (const uint32_t *)(d->map + (size_t)m.buffer_idx * d->buf_bytes);
		uint64_t t1 = m.timestamp + (uint64_t)d->raw_to_mono;
		/* A reader buffer holds the increments since the previous dump. */
		rc = deliver(d, t1, buf, cb, ctx);
		int prc = xioctl(d, d->rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m);
		if (rc < 0)
			return rc;
		if (prc < 0)
			return prc;
		n++;
	}
	return n;
}

int kbase_dev_dump(struct kbase_dev *d, kbase_sample_fn cb, void *ctx)
{
	if (d->iface != KBASE_IFACE_UK_DUMP) {
		/* kbasep_vinstr_hwcnt_reader_ioctl: DUMP does not read its argument */
		int rc = xioctl(d, d->rfd, KBASE_HWCNT_READER_DUMP, NULL);
		if (rc < 0)
			return rc;
		return kbase_dev_read(d, cb, ctx);
	}
	uint64_t a = d->sys->mono_ns();
	struct kbase_uk_hwcnt_simple h = {0};
	int rc = uk_call(d, &h, d->uk->hwcnt_dump, sizeof(h));
	if (rc < 0)
		return rc;
	uint64_t b = d->sys->mono_ns();
	/* The GPU resets its counter blocks at every dump request
	 * (mali_kbase_vinstr.c: "The GPU resets the counter block every time
	 * there is a request to dump it"; gator uses each dump as the
	 * interval's counts): the buffer holds the increments since the
	 * previous dump (the CLEAR at setup for the first). */
	rc = deliver(d, a + (b - a) / 2, (const uint32_t *)d->map, cb, ctx);
	return rc < 0 ? rc : 1;
}

void kbase_dev_close(struct kbase_dev *d)
{
	if (!d->sys)
		return;
	if (d->hwcnt_on && d->fd >= 0) {
		/* HWCNT_SETUP with a zero buffer disables the counters
		 * (kbase_instr_hwcnt_setup -> kbase_instr_hwcnt_disable); a context
		 * closed with them on makes the driver warn the client forgot it. */
		struct kbase_uk_hwcnt_setup s = {0};
		uk_call(d, &s, d->uk->hwcnt_setup, sizeof(s));
		d->hwcnt_on = false;
	}
	if (d->map)
		d->sys->munmap(d->map, d->map_len);
	if (d->track)
		d->sys->munmap(d->track, 4096);
	if (d->rfd >= 0)
		d->sys->close(d->rfd);
	if (d->fd >= 0)
		d->sys->close(d->fd);
	d->map = NULL;
	d->track = NULL;
	d->fd = d->rfd = -1;
}
