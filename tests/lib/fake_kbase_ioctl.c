/* The fake kbase device as the ioctl-interface drivers answer it (job-manager
 * kbase r16p0 on, interface 11.x). Sources, read not copied:
 *  - mali_kbase_ioctl.h (uapi): KBASE_IOCTL_VERSION_CHECK (nr 0),
 *    SET_FLAGS (1), GET_GPUPROPS (3), HWCNT_READER_SETUP (8);
 *  - mali_kbase_core_linux.c, kbase_ioctl: VERSION_CHECK must come first
 *    (other calls before it: -EPERM in this fake), SET_FLAGS before the rest
 *    (kbase_file setup state); an unknown number (a UK-style call) is
 *    -ENOTTY; GET_GPUPROPS with size 0 answers the buffer size
 *    (kbase_gpuprops_populate_user_buffer). */
#include <errno.h>
#include <string.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"

static int ioctl_ioctl(struct fake_ctx *c, unsigned long req, void *arg)
{
	if (req == KBASE_IOCTL_VERSION_CHECK) {
		struct kbase_ioctl_version_check *v = arg;
		v->major = 11, v->minor = 13;
		c->api_version = 11u << 20 | 13;
		return 0;
	}
	if (!c->api_version)
		return -EPERM;
	if (req == KBASE_IOCTL_SET_FLAGS) {
		if (c->setup_complete)
			return -EINVAL;
		c->setup_complete = 1;
		return 0;
	}
	if (!c->setup_complete)
		return -EINVAL;
	if (req == KBASE_IOCTL_GET_GPUPROPS) {
		struct kbase_ioctl_get_gpuprops *g = arg;
		size_t need = fake_props_kv(NULL);
		if (g->size == 0)
			return (int)need;
		if (g->size < need)
			return -EINVAL;
		return (int)fake_props_kv((uint8_t *)(uintptr_t)g->buffer);
	}
	if (req == KBASE_IOCTL_HWCNT_READER_SETUP)
		return fake_reader_create();
	return -ENOTTY;
}

static void *ioctl_mmap(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err)
{
	(void)c, (void)len, (void)prot, (void)flags, (void)off;
	*err = EINVAL;
	return NULL;
}

/* The reader of the hwcnt-virtualizer vinstr (mali_kbase_vinstr.c (C) 2011-2019,
 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval: DUMP_INTERVAL_MIN_NS, 100 us). */
const struct fake_gen fake_gen_ioctl = {"ioctl r16+", ioctl_ioctl, ioctl_mmap, 100000u, 0};
