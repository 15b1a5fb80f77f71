/* The fake kbase device as a UK driver with the vinstr hwcnt reader answers
 * it (Midgard r9p0..r15p0, UK 10.x, e.g. the Midgard trees whose
 * kbase_dispatch calls kbase_api_handshake). Sources, read not copied:
 *  - mali_kbase_core_linux.c: kbase_legacy_ioctl (CALL_MAX_SIZE 536; any
 *    failure of the dispatch is -EFAULT), kbase_legacy_dispatch (kbase_dispatch
 *    in the first handshake trees): the version check runs
 *    kbase_api_handshake and records kctx->api_version; "block calls until
 *    version handshake" (any other call before it fails, no state touched);
 *    then the setup state machine of r3p0..r5p0 but for bad SET_FLAGS flags,
 *    which complete the setup here (see dispatch); then
 *    KBASE_FUNC_HWCNT_READER_SETUP (512 + 36) ->
 *    kbase_vinstr_hwcnt_reader_setup, which answers the reader fd;
 *  - mali_kbase_uku.h: struct kbase_uk_hwcnt_reader_setup (32 bytes);
 *  - mali_kbase_vinstr.c, mali_kbase_hwcnt_reader.h: the reader, in the core
 *    (fake_kbase.c). */
#include <errno.h>
#include <string.h>
#include <sys/mman.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"

#define VINSTR_UK_MAJOR 10
#define VINSTR_UK_MINOR 6

static int dispatch(struct fake_ctx *c, void *args, uint32_t size)
{
	union kbase_uk_header *ukh = args;
	uint32_t id = ukh->id;
	ukh->ret = 0;

	if (id == UKP_FUNC_ID_CHECK_VERSION) {
		if (size != sizeof(struct kbase_uk_version_check)) {
			ukh->ret = 3;
			return 0;
		}
		struct kbase_uk_version_check *v = args;
		/* kbase_api_handshake: the driver's own version; the proposed one
		 * is kept as kctx->api_version */
		c->api_version = (uint32_t)v->major << 20 | v->minor;
		if (!c->api_version)
			c->api_version = 1;
		v->major = VINSTR_UK_MAJOR;
		v->minor = VINSTR_UK_MINOR;
		return 0;
	}
	if (c->api_version == 0)
		return -EINVAL; /* "block calls until version handshake" */

	if (!c->setup_complete) {
		/* "if (atomic_cmpxchg(&kctx->setup_in_progress, 0, 1) != 0) return -EINVAL" */
		if (c->setup_in_progress)
			return -EINVAL;
		c->setup_in_progress = 1;
		/* "if unexpected call, will stay stuck in setup mode" */
		if (id != KBASE_FUNC_SET_FLAGS)
			return -EINVAL;
		if (size != sizeof(struct kbase_uk_set_flags))
			return -EINVAL; /* bad_size */
		const struct kbase_uk_set_flags *f = args;
		/* kbase_legacy_dispatch ((C) 2010-2017; the earlier handshake
		 * kbase_dispatch reads the same): despite its comment "if bad flags,
		 * will stay stuck in setup mode", bad flags only set ukh->ret =
		 * MALI_ERROR_FUNCTION_FAILED and the code goes on to
		 * "atomic_set(&kctx->setup_complete, 1); return 0;": setup completes
		 * (r3p0..r5p0 returned before it and stayed stuck) */
		if (f->create_flags & ~6u) /* kbase_context_set_create_flags: kernel flags only */
			ukh->ret = 3;
		c->setup_complete = 1;
		return 0;
	}

	switch (id) {
	case KBASE_FUNC_GPU_PROPS_REG_DUMP:
		if (size != sizeof(struct kbase_uk_gpuprops))
			return -1;
		fake_props_uk(args, false);
		return 0;
	case KBASE_FUNC_HWCNT_READER_SETUP: {
		struct kbase_uk_hwcnt_reader_setup *s = args;
		if (size != sizeof(*s))
			return -1;
		int fd = fake_reader_create(s->buffer_count);
		if (fd < 0)
			ukh->ret = 3;
		s->fd = fd;
		return 0;
	}
	default:
		return -1;
	}
}

static int vinstr_ioctl(struct fake_ctx *c, unsigned long req, void *arg)
{
	return fake_uk_call(c, req, arg, dispatch);
}

static void *vinstr_mmap(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err)
{
	(void)c, (void)len, (void)prot, (void)flags, (void)off;
	/* Not modelled: the fake serves no mapping of the device file for this
	 * generation (the agent maps only the reader's buffers here; the driver's
	 * kbase_mmap would take the tracking page and regions) */
	*err = EINVAL;
	return NULL;
}

/* The reader of the first vinstr (mali_kbase_vinstr.c (C) 2011-2015,
 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval: DUMPING_RESOLUTION, 500 us). */
const struct fake_gen fake_gen_vinstr_uk = {"vinstr UK 10", vinstr_ioctl, vinstr_mmap, 500000u,
					    536 /* kbase_legacy_ioctl: CALL_MAX_SIZE */};
