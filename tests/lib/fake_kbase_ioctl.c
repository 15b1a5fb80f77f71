/* The fake kbase device as the ioctl-interface drivers answer it (job-manager
 * kbase with struct kbase_file, interface 11.x; Bifrost tree). Sources, read
 * not copied:
 *  - mali_kbase_ioctl.h (uapi): KBASE_IOCTL_VERSION_CHECK (nr 0),
 *    SET_FLAGS (1), GET_GPUPROPS (3), HWCNT_READER_SETUP (8);
 *  - mali_kbase_core_linux.c, kbase_ioctl: "Only these ioctls are available
 *    until setup is complete" (VERSION_CHECK, SET_FLAGS), then
 *    "kctx = kbase_file_get_kctx_if_setup_complete(kfile); if (!kctx) return
 *    -EPERM"; kbase_file_create_kctx (SET_FLAGS): -EPERM unless the file
 *    waits for its context (KBASE_FILE_NEED_CTX: after the version check,
 *    once); an unknown number is -ENOIOCTLCMD (ENOTTY to the caller);
 *    kbase_api_get_gpuprops: size 0 answers the buffer size, a smaller one
 *    -EINVAL (kbase_gpuprops_populate_user_buffer fills it);
 *  - HWCNT_READER_SETUP -> kbase_vinstr_hwcnt_reader_setup (the reader fd).
 * The first ioctl drivers (2017: "Block call until version handshake and
 * setup is complete") answered -EINVAL where these answer -EPERM; the agent
 * reads neither. */
#include <errno.h>
#include <string.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"

static int ioctl_ioctl(struct fake_ctx *c, unsigned long req, void *arg)
{
	if (req == KBASE_IOCTL_VERSION_CHECK) {
		/* kbase_api_handshake: once per file (setup_state
		 * KBASE_FILE_NEED_VSN, else -EPERM); the asked major answered with
		 * the lower of the two minors, any other major with the driver's own
		 * version; "save the proposed version number for later use" */
		struct kbase_ioctl_version_check *v = arg;
		if (c->api_version)
			return -EPERM;
		if (v->major == 11)
			v->minor = v->minor < 13 ? v->minor : 13;
		else
			v->major = 11, v->minor = 13;
		c->api_version =
		    (uint32_t)v->major << 20 | v->minor | 1u << 31; /* non-zero: handshake done */
		return 0;
	}
	if (req == KBASE_IOCTL_SET_FLAGS) {
		if (!c->api_version || c->setup_complete)
			return -EPERM; /* kbase_file_create_kctx: not KBASE_FILE_NEED_CTX */
		c->setup_complete = 1;
		return 0;
	}
	if (!c->api_version || !c->setup_complete)
		return -EPERM; /* kbase_file_get_kctx_if_setup_complete */
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
		return fake_reader_create(((const struct kbase_ioctl_hwcnt_reader_setup *)arg)->buffer_count);
	return -ENOTTY; /* -ENOIOCTLCMD */
}

static void *ioctl_mmap(struct fake_ctx *c, size_t len, int prot, int flags, off_t off, int *err)
{
	(void)c, (void)len, (void)prot, (void)flags, (void)off;
	/* Not modelled: no mapping of the device file (the agent maps only the
	 * reader's buffers on this interface; kbase_mmap would take others) */
	*err = EINVAL;
	return NULL;
}

/* The reader of the hwcnt-virtualizer vinstr (mali_kbase_vinstr.c (C) 2011-2019,
 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval: DUMP_INTERVAL_MIN_NS, 100 us). */
const struct fake_gen fake_gen_ioctl = {"ioctl r16+", ioctl_ioctl, ioctl_mmap, 100000u, 0};
