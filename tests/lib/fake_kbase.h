/* A fake Mali kbase device for tests: a replay of the real drivers' logic,
 * one file per driver generation (tests/lib/fake_kbase_t6xx.c: t6xx r3p0,
 * UK 3.0; fake_kbase_midgard_uk.c: Midgard r4p0-r5p0 UK dump buffer;
 * fake_kbase_vinstr_uk.c: UK with the vinstr hwcnt reader; fake_kbase_ioctl.c:
 * the ioctl interface of r16 on), each behaviour citing the driver file and
 * function it follows; the GPU (tests/lib/fake_kbase.c) resets its counters at
 * every dump request, as the hardware does. GPU properties of a Mali-T628 MP6
 * or a Mali-G71 MP8, counter values scripted per test as activity spread
 * evenly over time spans.
 *
 * Two ways in: fake_kbase_sys (a struct kbase_sys the unit tests hand to
 * kbase_dev_open, on a clock the test moves), and the LD_PRELOAD library
 * build/<board>/lib/libfake_kbase.so (tests/fake_kbase/preload.c), which
 * interposes open/ioctl/mmap/close on the device node and reads its script
 * from $PROF_FAKE_KBASE_SCRIPT. One device at a time. */
#ifndef TESTS_LIB_FAKE_KBASE_H
#define TESTS_LIB_FAKE_KBASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* The driver generation the fake stands for. */
enum fake_iface {
	FAKE_IFACE_IOCTL,     /* r16+ ioctl interface, hwcnt reader */
	FAKE_IFACE_UK_READER, /* UK 10 (r9-r15 vinstr drivers), hwcnt reader */
	FAKE_IFACE_UK_DUMP,   /* Midgard r5p0 UK 7.0 (r4p0-r5p0), dump buffer */
	FAKE_IFACE_T6XX,      /* t6xx r3p0 UK 3.0, dump buffer */
};
enum fake_block { FAKE_JM, FAKE_TILER, FAKE_L2, FAKE_SC };

struct fake_kbase_cfg {
	enum fake_iface iface;
	const char *path; /* device node the fake answers for */
	uint32_t gpu_id;
	uint64_t shader_present;
	uint64_t l2_present; /* L2_PRESENT: one core group per bit (the fake derives the groups) */
	unsigned num_l2;     /* num_l2_slices as the driver reports it */
	uint32_t l2_features;
	unsigned hw_version;	/* 4: core groups of 8 blocks; 5: JM, tiler, L2s, cores */
	int open_errno;		/* open fails with it (0: opens) */
	int refuse_setup_errno; /* counter setup fails with it (0: accepted) */
	bool real_clock;	/* CLOCK_MONOTONIC(_RAW) instead of fake_kbase_set_time (preload) */
	bool compat32;		/* the caller as a 32-bit process (kctx->is_compat): no forced
				 * SAME_VA; a 64-bit process on the (64-bit) kernel gets it */
	int euid;		/* the caller's uid as the driver sees it (-1: geteuid()) */
	unsigned uk_major;	/* a UK driver of another version (0: the generation's own) */
	bool r5p0_02rel0;	/* the Midgard fake's kbase_cpu_mmap as in the r5p0-02rel0 copies
				 * (write-combine with CPU_RD or CPU_WR), not manta's (CPU_WR only) */
};

/* Mali-T628 MP6 (Exynos 5420): 6 cores in 2 core groups (4 + 2), so
 * L2_PRESENT 0x11 (one L2 per core group), 1 L2 slice reported, v4 layout, UK
 * dump interface unless changed. */
void fake_kbase_cfg_t628mp6(struct fake_kbase_cfg *c);
/* Mali-G71 MP8: 8 cores, 2 L2 slices, v5 layout, ioctl interface. */
void fake_kbase_cfg_g71mp8(struct fake_kbase_cfg *c);

void fake_kbase_reset(const struct fake_kbase_cfg *c);
/* The fake's clock (ns) when !real_clock. */
void fake_kbase_set_time(uint64_t ns);
uint64_t fake_kbase_now(void);
/* count events of (block, instance, word) spread evenly over (t0, t1];
 * instance -1: every instance present (each gets count). */
int fake_kbase_activity(uint64_t t0, uint64_t t1, unsigned block, int instance, unsigned word,
			uint64_t count);
/* Hold periodic dumps back (they are taken on time, with their timestamps,
 * but not handed out) until released: a dump that arrives late. */
void fake_kbase_hold_dumps(bool hold);
/* Counters of the calls the fake served. */
struct fake_kbase_stats {
	unsigned opens, dumps, clears, setups, gets, puts, dropped;
	unsigned disables;	 /* HWCNT_SETUP with a zero buffer */
	unsigned forgot_disable; /* contexts closed with the counters on (the driver's warning) */
	unsigned faults;	 /* dumps that faulted (buffer not GPU-writable at dump_va) */
	unsigned wedged;	 /* contexts closed stuck in setup (setup_in_progress, never complete) */
	unsigned efaults;	 /* UK calls answered -EFAULT */
	uint32_t interval_ns;	 /* the reader's dump interval, as the driver keeps it */
	uint32_t set_interval_arg; /* the last SET_INTERVAL argument, read as the driver reads it */
};
struct fake_kbase_stats fake_kbase_stats(void);
/* Read a script (preload): "gpu t628mp6|g71mp8", "iface ioctl|uk-reader|uk-dump|t6xx", "compat32",
 * "path P", "refuse ERRNO", "missing", "rate BLOCK INSTANCE|* WORD PER_SECOND" (from open on). */
int fake_kbase_load_script(const char *file);

/* The calls, as the device node's driver would answer them. fake_kbase_is_ours
 * says whether an fd is one of the fake's. */
int fake_kbase_open(const char *path, int flags);
int fake_kbase_ioctl(int fd, unsigned long req, void *arg);
void *fake_kbase_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int fake_kbase_close(int fd);
/* munmap of a mapping the fake handed out: 0, or -1 when addr is not one. */
int fake_kbase_munmap(void *addr, size_t len);
/* Whether the open device file is stuck in setup (r3p0-r5p0 kbase_dispatch:
 * setup_in_progress set, SET_FLAGS never accepted). */
bool fake_kbase_wedged(void);
bool fake_kbase_is_ours(int fd);
bool fake_kbase_path_is_ours(const char *path);

/* struct kbase_sys (agent/gpu/kbase_dev.h) on the fake, for unit tests. */
struct kbase_sys;
extern const struct kbase_sys fake_kbase_sys;

#endif
