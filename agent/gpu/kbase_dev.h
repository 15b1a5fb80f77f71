/* One Mali kbase device opened for hardware counters, through whichever of
 * the driver's interfaces answers: the ioctl interface (r16p0 on) with the
 * hwcnt reader, the UK interface with the reader (vinstr drivers), or the UK
 * interface's dump buffer (HWCNT_SETUP/DUMP/CLEAR; the oldest Midgard
 * drivers, e.g. the Arndale Octa's Linux 3.4 kernel).
 *
 * System calls go through struct kbase_sys so the unit tests can serve them
 * from the fake device directly; the agent uses the C library's (which the
 * LD_PRELOAD fake of the integration tests interposes). */
#ifndef AGENT_GPU_KBASE_DEV_H
#define AGENT_GPU_KBASE_DEV_H

#include <poll.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "mali_gpu.h"

struct kbase_sys {
	int (*open)(const char *path, int flags);
	int (*ioctl)(int fd, unsigned long req, void *arg);
	void *(*mmap)(void *addr, size_t len, int prot, int flags, int fd, off_t off);
	int (*munmap)(void *addr, size_t len);
	int (*poll)(struct pollfd *fds, nfds_t n, int timeout);
	int (*close)(int fd);
	uint64_t (*mono_ns)(void); /* CLOCK_MONOTONIC: the session's clock */
	uint64_t (*raw_ns)(void);  /* CLOCK_MONOTONIC_RAW: the reader's timestamps */
	uid_t (*euid)(void);	   /* HWCNT_SETUP is root-only on the UK drivers */
};
extern const struct kbase_sys kbase_sys_libc;

enum kbase_iface {
	KBASE_IFACE_NONE = 0,
	KBASE_IFACE_IOCTL = 1,	   /* ioctl interface + hwcnt reader */
	KBASE_IFACE_UK_READER = 2, /* UK interface + hwcnt reader */
	KBASE_IFACE_UK_DUMP = 3,   /* UK interface, dump buffer, agent-timed dumps */
};
const char *kbase_iface_name(enum kbase_iface i);

#define KBASE_READER_BUFFERS 16
/* The shortest reader interval every vinstr release keeps as asked
 * (mali_kbase_vinstr.c 2011-2015: DUMPING_RESOLUTION). */
#define KBASE_READER_MIN_INTERVAL_NS 500000u

/* A generation of the UK interface: the function ids and struct sizes differ
 * between the t6xx r3p0 driver (UK 3.0) and the Midgard r4p0..r15 drivers. */
struct kbase_uk_gen {
	const char *name;
	unsigned major_min, major_max; /* UK majors it stands for */
	uint32_t set_flags, gpu_props, mem_alloc, hwcnt_setup, hwcnt_dump, hwcnt_clear;
	uint32_t reader_setup; /* 0: no hwcnt reader in this generation */
	bool t6xx;	       /* TMEM_ALLOC and the 512-byte GPU props */
	bool tracking_page;    /* map the tracking page (offset 0x3000) before the dump buffer */
};

struct kbase_dev {
	const struct kbase_sys *sys;
	int fd;	 /* /dev/mali0 */
	int rfd; /* reader fd, -1 for KBASE_IFACE_UK_DUMP */
	enum kbase_iface iface;
	const struct kbase_uk_gen *uk; /* UK generation (ids, struct sizes), NULL on ioctl */
	uint16_t drv_major, drv_minor;
	uint32_t gpu_id;
	uint64_t shader_present, l2_present;
	unsigned num_l2, ngroups;
	uint64_t group_mask[MALI_MAX_GROUPS];
	uint32_t l2_features;
	unsigned hw_version; /* dump layout (4 or 5) */
	unsigned bus_bytes;
	const struct mali_family *fam;
	struct mali_layout layout;
	uint8_t *map; /* reader ring, or the dump buffer */
	size_t map_len;
	void *track;	      /* r5p0 UK: the context's tracking page, mapped first */
	uint64_t dump_va;     /* UK dump: the GPU address given to HWCNT_SETUP */
	bool hwcnt_on;	      /* UK dump: counters enabled (disabled again at close) */
	uint32_t buf_bytes, buf_count;
	uint32_t interval_ns; /* between dumps: the reader's (as the driver reads it) or the agent's timer */
	int64_t raw_to_mono; /* mono = raw + raw_to_mono */
	uint64_t last_ns; /* end of the last sample (start of the next) */
	uint64_t dumps, late_dumps;
	char desc[128];
};

/* A delta sample: counts in (t0_ns, t1_ns] (session clock), as a whole dump
 * buffer of per-block increments (layout words). */
typedef int (*kbase_sample_fn)(void *ctx, uint64_t t0_ns, uint64_t t1_ns, const uint32_t *delta);

/* Open path, check the interface version, read the GPU properties, set up
 * counting (every counter of every block enabled). err gets one line saying
 * what failed and why (missing device, permission/SELinux, driver refused,
 * unknown GPU). Returns 0 or -errno. */
int kbase_dev_open(struct kbase_dev *d, const char *path, const struct kbase_sys *sys, uint32_t interval_ns,
		   char *err, size_t errlen);
/* The fd to poll for POLLIN (reader interfaces), or -1 (UK dump: call
 * kbase_dev_dump on a timer). */
int kbase_dev_poll_fd(const struct kbase_dev *d);
/* Reader: hand every ready buffer to cb (GET_BUFFER .. PUT_BUFFER).
 * Returns the number of samples, or -errno. */
int kbase_dev_read(struct kbase_dev *d, kbase_sample_fn cb, void *ctx);
/* Ask for one dump now and hand it to cb when it is there (UK dump: at once;
 * reader: DUMP, then read). Returns samples delivered or -errno. */
int kbase_dev_dump(struct kbase_dev *d, kbase_sample_fn cb, void *ctx);
void kbase_dev_close(struct kbase_dev *d);

#endif
