/* Unit tests of agent/gpu (kbase device, dump layouts, sampling rows) on the
 * fake kbase device (tests/lib/fake_kbase.c), of common/gpu_attrib.c (per
 * kernel attribution) and of proto/validate_gpu.c. Scripted counts are
 * spread evenly over their spans, so every expected value below is exact. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include "fake_kbase.h"
#include "gpu/gpu_sampler.h"
#include "gpu/kbase_abi.h"
#include "gpu/kbase_dev.h"
#include "gpu/mali_gpu.h"
#include "gpu_attrib.h"
#include "validate_gpu.h"

#define MS 1000000ull
#define BASE (1000 * MS) /* the fake clock starts here */

/* Column of a counter by name in the sampler's rows. */
static size_t col(const struct gpu_sampler *g, const char *name)
{
	for (size_t c = 0;; c++) {
		const struct mali_counter *m = gpu_sampler_column(g, c);
		assert_non_null(m);
		if (!strcmp(m->name, name))
			return c;
	}
}

static uint64_t cell(const struct gpu_sampler *g, size_t row, const char *name)
{
	const struct gpu_rows *r = gpu_sampler_rows(g);
	assert_true(row < r->nrows);
	return r->values[row * r->ncols + col(g, name)];
}

static struct gpu_sampler *open_sampler(const struct fake_kbase_cfg *cfg, uint32_t interval_ns)
{
	fake_kbase_reset(cfg);
	fake_kbase_set_time(BASE);
	struct gpu_sampler *g = NULL;
	char err[320];
	struct gpu_sampler_opts o = {
	    .device = "/dev/mali0", .interval_ns = interval_ns, .sys = &fake_kbase_sys};
	int rc = gpu_sampler_open(&g, &o, err, sizeof(err));
	if (rc < 0)
		fail_msg("open: %s", err);
	return g;
}

static void test_gpu_layout_v4_t628mp6(void **state)
{
	(void)state;
	struct mali_layout l;
	const uint64_t groups[2] = {0x0f, 0x30};
	assert_int_equal(mali_layout_build(&l, 4, 0x3f, 1, groups, 2), 0);
	assert_int_equal(l.words, 2 * 8 * 64);
	unsigned sc = 0, l2 = 0, jm = 0, ti = 0;
	for (size_t b = 0; b < l.nblocks; b++) {
		const struct mali_block_loc *k = &l.blocks[b];
		if (k->type == MALI_BLOCK_SC) {
			sc++;
			/* cores 4, 5 are group 1's first two blocks */
			if (k->instance == 4)
				assert_int_equal(k->word, 8 * 64);
			if (k->instance == 5)
				assert_int_equal(k->word, 9 * 64);
		}
		if (k->type == MALI_BLOCK_JM)
			jm++, assert_int_equal(k->word, 7 * 64);
		if (k->type == MALI_BLOCK_TILER)
			ti++, assert_int_equal(k->word, 4 * 64);
		l2 += k->type == MALI_BLOCK_L2;
	}
	assert_int_equal(sc, 6);
	assert_int_equal(jm, 1);
	assert_int_equal(ti, 1);
	assert_int_equal(l2, 2);
	/* v5 with a hole in the core mask: a block per bit up to the highest */
	assert_int_equal(mali_layout_build(&l, 5, 0x15, 2, NULL, 0), 0);
	assert_int_equal(l.words, (2 + 2 + 5) * 64);
	assert_int_equal(mali_layout_build(&l, 3, 0x1, 1, NULL, 0), -EINVAL);
	assert_int_equal(mali_layout_build(&l, 5, 0, 1, NULL, 0), -EINVAL);
}

static void test_gpu_family_lookup(void **state)
{
	(void)state;
	assert_string_equal(mali_family_find(0x06201000)->name, "T62x");
	assert_string_equal(mali_family_find(0x07500000)->name, "T76x");
	assert_string_equal(mali_family_find(0x60000010)->name, "G71");
	assert_string_equal(mali_family_find(0x60a00002)->name, "G71"); /* arch_minor/rev masked */
	assert_string_equal(mali_family_find(0x70000000)->name, "G51");
	assert_string_equal(mali_family_find(0x08800000)->name, "T88x");
	assert_null(mali_family_find(0x72120000)); /* G52: no table */
	assert_int_equal(mali_bus_bytes_from_l2_features(0x07120206), 16);
	assert_int_equal(mali_bus_bytes_from_l2_features(0x08000000), 32);
	assert_int_equal(mali_bus_bytes_from_l2_features(0), 0);
}

struct capture {
	uint32_t buf[16 * 64];
	size_t words;
	uint64_t t0, t1;
	int n;
};

static int capture(void *ctx, uint64_t t0, uint64_t t1, const uint32_t *delta)
{
	struct capture *c = ctx;
	memcpy(c->buf, delta, c->words * 4);
	c->t0 = t0, c->t1 = t1;
	c->n++;
	return 0;
}

static uint32_t block_word(const struct kbase_dev *d, const struct capture *c, unsigned type, unsigned inst,
			   unsigned word)
{
	for (size_t b = 0; b < d->layout.nblocks; b++)
		if (d->layout.blocks[b].type == type && d->layout.blocks[b].instance == inst)
			return c->buf[d->layout.blocks[b].word + word];
	fail_msg("no block %u/%u", type, inst);
	return 0;
}

/* T628 MP6 on the UK dump buffer: exact increments per block. */
static void test_gpu_t628_uk_dump_block_deltas(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_t628mp6(&cfg);
	fake_kbase_reset(&cfg);
	fake_kbase_set_time(BASE);
	fake_kbase_activity(BASE, BASE + MS, FAKE_SC, 0, 27, 1000); /* ARITH_WORDS core 0 */
	fake_kbase_activity(BASE, BASE + MS, FAKE_SC, 5, 27, 500);  /* core 5: group 1 */
	fake_kbase_activity(BASE, BASE + MS, FAKE_L2, 0, 31, 300);  /* L2_EXT_READ_BEATS */
	fake_kbase_activity(BASE, BASE + MS, FAKE_L2, 0, 30, 100);  /* L2_EXT_WRITE_BEATS */
	fake_kbase_activity(BASE, BASE + MS, FAKE_JM, 0, 6, 600);   /* GPU_ACTIVE */
	struct kbase_dev d;
	char err[320];
	assert_int_equal(kbase_dev_open(&d, "/dev/mali0", &fake_kbase_sys, MS, err, sizeof(err)), 0);
	assert_int_equal(d.iface, KBASE_IFACE_UK_DUMP);
	assert_int_equal(d.hw_version, 4);
	assert_int_equal(d.bus_bytes, 16);
	assert_string_equal(d.fam->name, "T62x");
	assert_non_null(strstr(d.desc, "6 cores"));
	assert_int_equal(kbase_dev_poll_fd(&d), -1);
	static struct capture c;
	c.words = d.layout.words;
	fake_kbase_set_time(BASE + MS);
	assert_int_equal(kbase_dev_dump(&d, capture, &c), 1);
	assert_int_equal(c.t0, BASE);
	assert_int_equal(c.t1, BASE + MS);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_SC, 0, 27), 1000);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_SC, 5, 27), 500);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_SC, 1, 27), 0);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_L2, 0, 31), 300);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_L2, 0, 30), 100);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_L2, 1, 31), 0);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_JM, 0, 6), 600);
	/* a second dump: the counts since the first (the GPU reset its counters then) */
	fake_kbase_activity(BASE + MS, BASE + 2 * MS, FAKE_SC, 0, 27, 7);
	fake_kbase_set_time(BASE + 2 * MS);
	assert_int_equal(kbase_dev_dump(&d, capture, &c), 1);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_SC, 0, 27), 7);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_L2, 0, 31), 0);
	assert_int_equal(fake_kbase_stats().clears, 1);
	kbase_dev_close(&d);
}

/* G71 MP8 on the ioctl interface + reader: sampler rows and per-kernel
 * increments for a scripted kernel sequence. */
static void test_gpu_g71_reader_per_kernel(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	struct gpu_sampler *g = open_sampler(&cfg, MS);
	const struct kbase_dev *d = gpu_sampler_dev(g);
	assert_int_equal(d->iface, KBASE_IFACE_IOCTL);
	assert_int_equal(d->hw_version, 5);
	assert_int_equal(d->drv_major, 11);
	assert_int_equal(fake_kbase_stats().interval_ns, MS);
	/* kernel A [1, 3) ms, kernel B [3, 4) ms */
	fake_kbase_activity(BASE + 1 * MS, BASE + 3 * MS, FAKE_SC, -1, 28,
			    2000); /* EXEC_INSTR_COUNT, each core */
	fake_kbase_activity(BASE + 1 * MS, BASE + 3 * MS, FAKE_L2, -1, 32,
			    400); /* L2_EXT_READ_BEATS, each slice */
	fake_kbase_activity(BASE + 3 * MS, BASE + 4 * MS, FAKE_SC, -1, 28, 1000);
	fake_kbase_activity(BASE + 3 * MS, BASE + 4 * MS, FAKE_L2, -1, 47, 100); /* L2_EXT_WRITE_BEATS */
	for (int t = 1; t <= 5; t++) {
		fake_kbase_set_time(BASE + (uint64_t)t * MS);
		assert_int_equal(gpu_sampler_poll(g), 1);
	}
	const struct gpu_rows *r = gpu_sampler_rows(g);
	assert_int_equal(r->nrows, 5);
	assert_int_equal(r->t0[0], BASE);
	for (size_t i = 0; i < 5; i++)
		assert_int_equal(r->t1[i], BASE + (i + 1) * MS);
	assert_int_equal(cell(g, 0, "EXEC_INSTR_COUNT"), 0);
	assert_int_equal(cell(g, 1, "EXEC_INSTR_COUNT"), 8 * 1000);
	assert_int_equal(cell(g, 2, "EXEC_INSTR_COUNT"), 8 * 1000);
	assert_int_equal(cell(g, 3, "EXEC_INSTR_COUNT"), 8 * 1000);
	assert_int_equal(cell(g, 1, "L2_EXT_READ_BEATS"), 2 * 200);
	assert_int_equal(cell(g, 3, "L2_EXT_WRITE_BEATS"), 2 * 100);
	const uint64_t k0[] = {BASE + 1 * MS, BASE + 3 * MS}, k1[] = {BASE + 3 * MS, BASE + 4 * MS};
	double *out = calloc(2 * r->ncols, sizeof(double));
	double *un = calloc(r->ncols, sizeof(double));
	assert_int_equal(gpu_attrib(r->t0, r->t1, r->values, r->nrows, r->ncols, k0, k1, 2, out, un), 0);
	size_t ci = col(g, "EXEC_INSTR_COUNT"), cr = col(g, "L2_EXT_READ_BEATS"),
	       cw = col(g, "L2_EXT_WRITE_BEATS");
	assert_true(out[ci] == 16000.0);
	assert_true(out[cr] == 800.0);
	assert_true(out[cw] == 0.0);
	assert_true(out[r->ncols + ci] == 8000.0);
	assert_true(out[r->ncols + cw] == 200.0);
	assert_true(un[ci] == 0.0);
	free(out), free(un);
	gpu_sampler_close(g);
	assert_int_equal(fake_kbase_stats().gets, fake_kbase_stats().puts);
}

/* Two kernels inside one 1 ms dump: split by their overlaps. */
static void test_gpu_kernel_shorter_than_dump(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	struct gpu_sampler *g = open_sampler(&cfg, MS);
	uint64_t a0 = BASE + 200000, a1 = BASE + 400000, b0 = BASE + 600000, b1 = BASE + 700000;
	fake_kbase_activity(a0, a1, FAKE_SC, -1, 28, 100);
	fake_kbase_activity(b0, b1, FAKE_SC, -1, 28, 50);
	fake_kbase_set_time(BASE + MS);
	assert_int_equal(gpu_sampler_poll(g), 1);
	const struct gpu_rows *r = gpu_sampler_rows(g);
	assert_int_equal(r->nrows, 1);
	assert_int_equal(cell(g, 0, "EXEC_INSTR_COUNT"), 8 * 150);
	const uint64_t k0[] = {a0, b0}, k1[] = {a1, b1};
	double out[2 * 64];
	assert_int_equal(gpu_attrib(r->t0, r->t1, r->values, r->nrows, r->ncols, k0, k1, 2, out, NULL), 0);
	size_t c = col(g, "EXEC_INSTR_COUNT");
	assert_true(out[c] == 800.0);
	assert_true(out[r->ncols + c] == 400.0);
	gpu_sampler_close(g);
}

/* Every UK dump-buffer generation: the agent opens it in the order the
 * driver expects, reads per-dump counts (the GPU resets its counters at each
 * dump), and disables the counters before it closes. */
struct uk_case {
	const char *what;
	enum fake_iface iface;
	bool compat32;
	unsigned major;
};
static const struct uk_case uk_cases[] = {
    {"t6xx r3p0", FAKE_IFACE_T6XX, false, 3},
    {"midgard r5p0, 32-bit process", FAKE_IFACE_UK_DUMP, true, 7},
    {"midgard r5p0, this process (64-bit: SAME_VA)", FAKE_IFACE_UK_DUMP, false, 7},
};

/* Steady load: the scripted rate in every dump (not 0). Falling load: each
 * dump its own smaller count (no 2^32 - x values). Per kernel: the exact
 * increments of two kernels, one per load phase. */
static void test_gpu_uk_dump_steady_and_falling_load(void **state)
{
	(void)state;
	for (size_t k = 0; k < sizeof(uk_cases) / sizeof(uk_cases[0]); k++) {
		const struct uk_case *u = &uk_cases[k];
		struct fake_kbase_cfg cfg;
		fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = u->iface;
		cfg.compat32 = u->compat32;
		struct gpu_sampler *g = open_sampler(&cfg, MS);
		const struct kbase_dev *d = gpu_sampler_dev(g);
		assert_int_equal(d->iface, KBASE_IFACE_UK_DUMP);
		assert_int_equal(d->drv_major, u->major);
		assert_int_equal(fake_kbase_stats().opens, 1); /* the UK check answered at once */
		/* r5p0: the one refused call is the asked-for reader ("unknown ioctl") */
		assert_int_equal(fake_kbase_stats().efaults, u->iface == FAKE_IFACE_UK_DUMP ? 1 : 0);
		assert_false(fake_kbase_wedged());
		/* steady: 4 ms at 1000 ARITH_WORDS per ms per core, 300 read beats per ms */
		fake_kbase_activity(BASE, BASE + 4 * MS, FAKE_SC, -1, 27, 4000);
		fake_kbase_activity(BASE, BASE + 4 * MS, FAKE_L2, 0, 31, 1200);
		/* falling: 3 ms of 500, 250, 0 per ms per core */
		fake_kbase_activity(BASE + 4 * MS, BASE + 5 * MS, FAKE_SC, -1, 27, 500);
		fake_kbase_activity(BASE + 5 * MS, BASE + 6 * MS, FAKE_SC, -1, 27, 250);
		for (int t = 1; t <= 7; t++) {
			fake_kbase_set_time(BASE + (uint64_t)t * MS);
			int rc = gpu_sampler_poll(g);
			if (rc != 1)
				fail_msg("%s: poll %d: %d (faults %u)", u->what, t, rc, fake_kbase_stats().faults);
		}
		const struct gpu_rows *r = gpu_sampler_rows(g);
		if (r->nrows != 7)
			fail_msg("%s: %zu rows", u->what, r->nrows);
		const uint64_t want[7] = {6000, 6000, 6000, 6000, 3000, 1500, 0};
		for (size_t i = 0; i < 7; i++) {
			if (cell(g, i, "ARITH_WORDS") != want[i])
				fail_msg("%s: dump %zu: %llu ARITH_WORDS, want %llu", u->what, i,
					 (unsigned long long)cell(g, i, "ARITH_WORDS"), (unsigned long long)want[i]);
			assert_int_equal(cell(g, i, "L2_EXT_READ_BEATS"), i < 4 ? 300 : 0);
		}
		const uint64_t k0[] = {BASE, BASE + 4 * MS}, k1[] = {BASE + 4 * MS, BASE + 6 * MS};
		double out[2 * 64];
		assert_int_equal(gpu_attrib(r->t0, r->t1, r->values, r->nrows, r->ncols, k0, k1, 2, out, NULL), 0);
		size_t ca = col(g, "ARITH_WORDS");
		assert_true(out[ca] == 24000.0);
		assert_true(out[r->ncols + ca] == 4500.0);
		assert_int_equal(fake_kbase_stats().faults, 0);
		gpu_sampler_close(g);
		/* disabled before close: the driver has nothing to warn about */
		assert_int_equal(fake_kbase_stats().disables, 1);
		assert_int_equal(fake_kbase_stats().forgot_disable, 0);
	}
}

/* A raw UK call as the agent would make it. */
static int uk(int fd, void *arg, uint32_t id, size_t size)
{
	union kbase_uk_header *h = arg;
	h->id = id;
	return fake_kbase_ioctl(fd, KBASE_UK_CMD(id, size), arg) < 0 ? -errno : (int)h->ret;
}

/* The probe order that wedges the r3p0..r5p0 drivers: the ioctl interface's
 * VERSION_CHECK first reads as UK id 11 before SET_FLAGS; kbase_dispatch
 * then keeps setup_in_progress and SET_FLAGS fails for the life of the file.
 * The fake refuses it as the drivers do; the agent never does it. */
static void test_gpu_wrong_probe_order_wedges_uk(void **state)
{
	(void)state;
	const enum fake_iface wedging[] = {FAKE_IFACE_T6XX, FAKE_IFACE_UK_DUMP};
	const uint32_t set_flags[] = {KBASE_T6XX_FUNC_SET_FLAGS, KBASE_FUNC_SET_FLAGS};
	for (size_t k = 0; k < 2; k++) {
		struct fake_kbase_cfg cfg;
		fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = wedging[k];
		fake_kbase_reset(&cfg);
		int fd = fake_kbase_open("/dev/mali0", O_RDWR);
		assert_true(fd >= 0);
		struct kbase_ioctl_version_check v = {11, 0};
		assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_VERSION_CHECK, &v), -1);
		assert_int_equal(errno, EFAULT); /* "SET_FLAGS (UK): Bad address" to come */
		struct kbase_uk_version_check u = {.major = 10};
		assert_int_equal(uk(fd, &u, UKP_FUNC_ID_CHECK_VERSION, sizeof(u)), 0);
		struct kbase_uk_set_flags f = {0};
		assert_int_equal(uk(fd, &f, set_flags[k], sizeof(f)), -EFAULT);
		assert_true(fake_kbase_wedged());
		fake_kbase_close(fd);
		assert_int_equal(fake_kbase_stats().wedged, 1);
		/* a fresh open is a fresh context: the right order works */
		fd = fake_kbase_open("/dev/mali0", O_RDWR);
		assert_int_equal(uk(fd, &u, UKP_FUNC_ID_CHECK_VERSION, sizeof(u)), 0);
		assert_int_equal(uk(fd, &f, set_flags[k], sizeof(f)), 0);
		assert_false(fake_kbase_wedged());
		fake_kbase_close(fd);
	}
	/* the vinstr UK drivers gate calls before the handshake without touching setup */
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	cfg.iface = FAKE_IFACE_UK_READER;
	fake_kbase_reset(&cfg);
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	struct kbase_ioctl_version_check v = {11, 0};
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_VERSION_CHECK, &v), -1);
	assert_int_equal(errno, EFAULT); /* kbase_legacy_ioctl: any dispatch failure */
	assert_false(fake_kbase_wedged());
	fake_kbase_close(fd);
	/* and the agent, on every generation, leaves no context wedged */
	const enum fake_iface all[] = {FAKE_IFACE_T6XX, FAKE_IFACE_UK_DUMP, FAKE_IFACE_UK_READER, FAKE_IFACE_IOCTL};
	const enum kbase_iface got[] = {KBASE_IFACE_UK_DUMP, KBASE_IFACE_UK_DUMP, KBASE_IFACE_UK_READER,
					KBASE_IFACE_IOCTL};
	for (size_t k = 0; k < 4; k++) {
		if (all[k] == FAKE_IFACE_UK_READER || all[k] == FAKE_IFACE_IOCTL)
			fake_kbase_cfg_g71mp8(&cfg);
		else
			fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = all[k];
		fake_kbase_reset(&cfg);
		struct kbase_dev d;
		char err[320];
		if (kbase_dev_open(&d, "/dev/mali0", &fake_kbase_sys, MS, err, sizeof(err)) < 0)
			fail_msg("generation %zu: %s", k, err);
		assert_int_equal(d.iface, got[k]);
		kbase_dev_close(&d);
		assert_int_equal(fake_kbase_stats().wedged, 0);
		assert_int_equal(fake_kbase_stats().forgot_disable, 0);
		/* the ioctl drivers take a second open: the UK check is refused first */
		assert_int_equal(fake_kbase_stats().opens, all[k] == FAKE_IFACE_IOCTL ? 2 : 1);
	}
}

/* A context of the UK fake after the version check and SET_FLAGS (flags). */
static int uk_open_setup(const struct fake_kbase_cfg *cfg, uint32_t flags, int *set_flags_ret)
{
	fake_kbase_reset(cfg);
	fake_kbase_set_time(BASE);
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	assert_true(fd >= 0);
	struct kbase_uk_version_check v = {.major = 10};
	assert_int_equal(uk(fd, &v, UKP_FUNC_ID_CHECK_VERSION, sizeof(v)), 0);
	struct kbase_uk_set_flags f = {.create_flags = flags};
	*set_flags_ret =
	    uk(fd, &f, cfg->iface == FAKE_IFACE_T6XX ? KBASE_T6XX_FUNC_SET_FLAGS : KBASE_FUNC_SET_FLAGS,
	       sizeof(f));
	return fd;
}

/* The fakes' details against the drivers' code (issue 38):
 *  - SET_FLAGS with flags the driver refuses: t6xx r3p0 and Midgard r5p0
 *    answer failure and stay stuck in setup (every later call EFAULT); the
 *    handshake (vinstr UK) drivers' kbase_legacy_dispatch answers failure and
 *    completes the setup all the same (GPU_PROPS then works);
 *  - HWCNT_SETUP 0 (disable) without owning the counters fails
 *    (kbase_instr_hwcnt_disable), and after enabling it succeeds once;
 *  - a call over CALL_MAX_SIZE is ENOTTY: 528 in t6xx r3p0, 536 in Midgard;
 *  - the Midgard tracking page may be of any size, and only one;
 *  - the T628's core groups are derived the driver's way: one per L2_PRESENT
 *    bit (0x11: cores 0-3 and 4-5). */
static void test_gpu_fake_uk_driver_details(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	int ret;
	/* bad SET_FLAGS */
	const enum fake_iface stuck[] = {FAKE_IFACE_T6XX, FAKE_IFACE_UK_DUMP};
	for (size_t k = 0; k < 2; k++) {
		fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = stuck[k];
		int fd = uk_open_setup(&cfg, 1, &ret);
		assert_int_equal(ret, 3); /* MALI_ERROR_FUNCTION_FAILED */
		assert_true(fake_kbase_wedged());
		struct kbase_uk_hwcnt_simple h = {0};
		assert_int_equal(uk(fd, &h, KBASE_UK_FUNC_ID + 11, sizeof(h)), -EFAULT);
		fake_kbase_close(fd);
	}
	fake_kbase_cfg_g71mp8(&cfg);
	cfg.iface = FAKE_IFACE_UK_READER;
	int fd = uk_open_setup(&cfg, 1, &ret);
	assert_int_equal(ret, 3);
	assert_false(fake_kbase_wedged());
	static struct kbase_uk_gpuprops props;
	memset(&props, 0, sizeof(props));
	assert_int_equal(uk(fd, &props, KBASE_FUNC_GPU_PROPS_REG_DUMP, sizeof(props)), 0);
	assert_int_equal(props.raw.shader_present, 0xff);
	fake_kbase_close(fd);

	/* disable without owning; CALL_MAX_SIZE; tracking page; core groups */
	const enum fake_iface gens[] = {FAKE_IFACE_T6XX, FAKE_IFACE_UK_DUMP};
	const uint32_t setup_id[] = {KBASE_T6XX_FUNC_HWCNT_SETUP, KBASE_FUNC_HWCNT_SETUP};
	const uint32_t call_max[] = {528, 536};
	for (size_t k = 0; k < 2; k++) {
		fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = gens[k];
		cfg.compat32 = true;
		cfg.euid = 0;
		fd = uk_open_setup(&cfg, 0, &ret);
		assert_int_equal(ret, 0);
		struct kbase_uk_hwcnt_setup off = {0};
		assert_int_equal(uk(fd, &off, setup_id[k], sizeof(off)), 3);
		assert_int_equal(fake_kbase_stats().disables, 0);
		/* CALL_MAX_SIZE: one byte more is ENOTTY; at the limit the unknown id
		 * reaches kbase_dispatch ("unknown ioctl": EFAULT) */
		static uint64_t big[80];
		memset(big, 0, sizeof(big));
		assert_int_equal(uk(fd, big, 999, call_max[k] + 1), -ENOTTY);
		assert_int_equal(uk(fd, big, 999, call_max[k]), -EFAULT);
		/* a tracking page of two pages is taken; a second one is refused */
		void *t = fake_kbase_mmap(NULL, 8192, PROT_NONE, MAP_SHARED, fd,
					  (off_t)BASE_MEM_MAP_TRACKING_HANDLE);
		assert_true(t != MAP_FAILED);
		assert_true(fake_kbase_mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd,
					    (off_t)BASE_MEM_MAP_TRACKING_HANDLE) == MAP_FAILED);
		assert_int_equal(errno, EFAULT);
		fake_kbase_close(fd);
	}
	/* core groups from L2_PRESENT, as the UK props and the agent read them */
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.iface = FAKE_IFACE_UK_DUMP;
	fd = uk_open_setup(&cfg, 0, &ret);
	memset(&props, 0, sizeof(props));
	assert_int_equal(uk(fd, &props, KBASE_FUNC_GPU_PROPS_REG_DUMP, sizeof(props)), 0);
	assert_int_equal(props.raw.l2_present, 0x11);
	assert_int_equal(props.coh.num_core_groups, 2); /* hweight64(l2_present) */
	assert_int_equal(props.coh.num_groups, 2);
	assert_int_equal(props.coh.group[0].core_mask, 0x0f);
	assert_int_equal(props.coh.group[1].core_mask, 0x30);
	assert_int_equal(props.num_l2_slices, 1);
	fake_kbase_close(fd);
	struct kbase_dev d;
	char err[320];
	fake_kbase_reset(&cfg);
	assert_int_equal(kbase_dev_open(&d, "/dev/mali0", &fake_kbase_sys, MS, err, sizeof(err)), 0);
	assert_int_equal(d.ngroups, 2);
	assert_int_equal(d.group_mask[0], 0x0f);
	assert_int_equal(d.group_mask[1], 0x30);
	kbase_dev_close(&d);
}

/* On a 64-bit kernel MEM_ALLOC answers an mmap cookie: given as the dump
 * buffer, every dump faults. The agent gives the mapping's address. */
static void test_gpu_same_va_cookie_faults(void **state)
{
	(void)state;
	if (sizeof(void *) != 8)
		fprintf(stderr, "skipped: a 32-bit process never gets SAME_VA\n");
	if (sizeof(void *) != 8)
		skip();
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_t628mp6(&cfg);
	fake_kbase_reset(&cfg);
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	struct kbase_uk_version_check u = {.major = 10};
	struct kbase_uk_set_flags f = {0};
	assert_int_equal(uk(fd, &u, UKP_FUNC_ID_CHECK_VERSION, sizeof(u)), 0);
	assert_int_equal(uk(fd, &f, KBASE_FUNC_SET_FLAGS, sizeof(f)), 0);
	struct kbase_uk_mem_alloc a = {.va_pages = 4, .commit_pages = 4};
	a.flags = BASE_MEM_PROT_CPU_RD | BASE_MEM_PROT_GPU_WR;
	assert_int_equal(uk(fd, &a, KBASE_FUNC_MEM_ALLOC, sizeof(a)), 0);
	assert_true(a.flags & BASE_MEM_SAME_VA);
	assert_int_equal(a.gpu_va, 0x41000);
	/* no mmap before the tracking page (r5p0 kbase_mmap) */
	assert_true(fake_kbase_mmap(NULL, 4 * 4096, PROT_READ, MAP_SHARED, fd, 0x41000) == MAP_FAILED);
	void *t = fake_kbase_mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, 0x3000);
	assert_true(t != MAP_FAILED);
	void *m = fake_kbase_mmap(NULL, 4 * 4096, PROT_READ, MAP_SHARED, fd, 0x41000);
	assert_true(m != MAP_FAILED);
	struct kbase_uk_hwcnt_setup s = {.dump_buffer = a.gpu_va};
	assert_int_equal(uk(fd, &s, KBASE_FUNC_HWCNT_SETUP, sizeof(s)), 0);
	struct kbase_uk_hwcnt_simple h = {0};
	assert_int_equal(uk(fd, &h, KBASE_FUNC_HWCNT_DUMP, sizeof(h)), 3); /* the page fault */
	assert_int_equal(fake_kbase_stats().faults, 1);
	memset(&s, 0, sizeof(s));
	assert_int_equal(uk(fd, &s, KBASE_FUNC_HWCNT_SETUP, sizeof(s)), 0); /* disable */
	s.dump_buffer = (uint64_t)(uintptr_t)m;
	assert_int_equal(uk(fd, &s, KBASE_FUNC_HWCNT_SETUP, sizeof(s)), 0);
	assert_int_equal(uk(fd, &h, KBASE_FUNC_HWCNT_DUMP, sizeof(h)), 0);
	assert_int_equal(fake_kbase_stats().faults, 1);
	fake_kbase_close(fd);
	assert_int_equal(fake_kbase_stats().forgot_disable, 1); /* this raw client forgot */
	fake_kbase_munmap(m, 4 * 4096);
	fake_kbase_munmap(t, 4096);
}

/* t6xx r3p0: TMEM regions live above 2^33 on the GPU and are mapped at their
 * GPU page number, after the tracking page (KBASE_REG_COOKIE_MTP). */
static void test_gpu_t6xx_tmem_and_tracking_page(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.iface = FAKE_IFACE_T6XX;
	fake_kbase_reset(&cfg);
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	struct kbase_uk_version_check u = {.major = 10};
	struct kbase_uk_set_flags f = {0};
	assert_int_equal(uk(fd, &u, UKP_FUNC_ID_CHECK_VERSION, sizeof(u)), 0);
	assert_int_equal(u.major, 3);
	assert_int_equal(uk(fd, &f, KBASE_T6XX_FUNC_SET_FLAGS, sizeof(f)), 0);
	/* the Midgard MEM_ALLOC struct at the same id is the wrong size here */
	struct kbase_uk_mem_alloc wrong = {.va_pages = 1, .commit_pages = 1};
	assert_int_equal(uk(fd, &wrong, KBASE_T6XX_FUNC_TMEM_ALLOC, sizeof(wrong)), -EFAULT);
	struct kbase_uk_t6xx_tmem_alloc t = {.vsize = 2, .psize = 2};
	t.flags = BASE_MEM_PROT_CPU_RD | BASE_MEM_PROT_GPU_WR;
	assert_int_equal(uk(fd, &t, KBASE_T6XX_FUNC_TMEM_ALLOC, sizeof(t)), 0);
	assert_true(t.gpu_addr >= 1ull << 33);
	assert_true(fake_kbase_mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)t.gpu_addr) == MAP_FAILED);
	assert_int_equal(errno, EINVAL);
	void *mtp = fake_kbase_mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, 0x3000);
	assert_true(mtp != MAP_FAILED);
	assert_true(fake_kbase_mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, 0x3000) == MAP_FAILED);
	assert_int_equal(errno, EFAULT);
	void *m = fake_kbase_mmap(NULL, 8192, PROT_READ, MAP_SHARED, fd, (off_t)t.gpu_addr);
	assert_true(m != MAP_FAILED);
	/* the Midgard ids mean other calls here: 526 is no GPU_PROPS */
	struct kbase_uk_t6xx_gpuprops p;
	assert_int_equal(uk(fd, &p, KBASE_FUNC_GPU_PROPS_REG_DUMP, sizeof(p)), -EFAULT);
	assert_int_equal(uk(fd, &p, KBASE_T6XX_FUNC_GPU_PROPS_REG_DUMP, sizeof(p)), 0);
	assert_int_equal(p.raw.gpu_id, 0x06201000);
	assert_int_equal(p.coh.group[1].core_mask, 0x30);
	fake_kbase_munmap(m, 8192);
	fake_kbase_munmap(mtp, 4096);
	fake_kbase_close(fd);
}

/* v4 shader blocks by bit position: a group with a hole in its mask. */
static void test_gpu_v4_noncontiguous_core_mask(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.shader_present = 0x3b; /* cores 0, 1, 3 | 4, 5: the groups 0x0b and 0x30 (L2_PRESENT 0x11) */
	fake_kbase_reset(&cfg);
	fake_kbase_set_time(BASE);
	fake_kbase_activity(BASE, BASE + MS, FAKE_SC, 3, 27, 777);
	struct kbase_dev d;
	char err[320];
	assert_int_equal(kbase_dev_open(&d, "/dev/mali0", &fake_kbase_sys, MS, err, sizeof(err)), 0);
	static struct capture c;
	c.words = d.layout.words;
	fake_kbase_set_time(BASE + MS);
	assert_int_equal(kbase_dev_dump(&d, capture, &c), 1);
	assert_int_equal(block_word(&d, &c, MALI_BLOCK_SC, 3, 27), 777);
	assert_int_equal(c.buf[3 * 64 + 27], 777); /* slot 3 of group 0, not slot 2 */
	kbase_dev_close(&d);
}

static void expect_open_error(const struct fake_kbase_cfg *cfg, int rc, const char *what)
{
	fake_kbase_reset(cfg);
	struct kbase_dev d;
	char err[320] = "";
	assert_int_equal(kbase_dev_open(&d, "/dev/mali0", &fake_kbase_sys, MS, err, sizeof(err)), rc);
	if (!strstr(err, what))
		fail_msg("error '%s' does not say '%s'", err, what);
	assert_null(strchr(err, '\n'));
	/* a second open for the ioctl probe: ioctl drivers, unknown UK versions */
	assert_int_equal(fake_kbase_stats().opens,
			 cfg->open_errno ? 0 : cfg->iface == FAKE_IFACE_IOCTL || cfg->uk_major ? 2 : 1);
}

static void test_gpu_driver_refuses_setup(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	cfg.refuse_setup_errno = EPERM;
	expect_open_error(&cfg, -EPERM, "refused counter setup");
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.refuse_setup_errno = EBUSY;
	expect_open_error(&cfg, -EINVAL, "another process (gatord, a vendor tool) holds the counters");
	/* HWCNT_SETUP is root-only (kbasep_am_i_root): the message says so */
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.euid = 1000;
	expect_open_error(&cfg, -EINVAL, "root only; run the agent as root");
	cfg.iface = FAKE_IFACE_T6XX;
	expect_open_error(&cfg, -EINVAL, "root only");
	/* a UK version this agent does not implement: one clear line */
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.uk_major = 2;
	expect_open_error(&cfg, -EPROTONOSUPPORT, "UK 2.0 driver, which this agent does not implement");
	fake_kbase_cfg_t628mp6(&cfg);
	cfg.open_errno = ENOENT;
	expect_open_error(&cfg, -ENOENT, "does not exist");
	cfg.open_errno = EACCES;
	expect_open_error(&cfg, -EACCES, "permission denied");
	fake_kbase_cfg_g71mp8(&cfg);
	cfg.gpu_id = 0x72120000; /* a G52: no counter table */
	expect_open_error(&cfg, -ENODEV, "unknown GPU id 0x72120000");
}

/* Dumps held back by the driver and handed out late keep their own
 * timestamps: the rows and the attribution are as if they had come on time. */
static void test_gpu_late_dump(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	cfg.iface = FAKE_IFACE_UK_READER; /* the UK interface with the reader, too */
	struct gpu_sampler *g = open_sampler(&cfg, MS);
	assert_int_equal(gpu_sampler_dev(g)->iface, KBASE_IFACE_UK_READER);
	fake_kbase_activity(BASE + MS, BASE + 2 * MS, FAKE_SC, 3, 28, 900);
	fake_kbase_hold_dumps(true);
	fake_kbase_set_time(BASE + 3 * MS);
	assert_int_equal(gpu_sampler_poll(g), 0);
	fake_kbase_hold_dumps(false);
	fake_kbase_set_time(BASE + 3 * MS + 400000); /* they arrive 0.4 ms after the last was taken */
	assert_int_equal(gpu_sampler_poll(g), 3);
	const struct gpu_rows *r = gpu_sampler_rows(g);
	assert_int_equal(r->nrows, 3);
	assert_int_equal(r->t1[0], BASE + MS);
	assert_int_equal(r->t1[1], BASE + 2 * MS);
	assert_int_equal(r->t1[2], BASE + 3 * MS);
	assert_int_equal(cell(g, 1, "EXEC_INSTR_COUNT"), 900);
	const uint64_t k0[] = {BASE + MS}, k1[] = {BASE + 2 * MS};
	double out[64];
	assert_int_equal(gpu_attrib(r->t0, r->t1, r->values, r->nrows, r->ncols, k0, k1, 1, out, NULL), 0);
	assert_true(out[col(g, "EXEC_INSTR_COUNT")] == 900.0);
	assert_int_equal(gpu_sampler_dev(g)->late_dumps, 0);
	gpu_sampler_close(g);
}

/* The reader's interval goes by value (every vinstr release:
 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval(cli, (u32)arg)): the fake
 * reads the argument as the driver does, so the interval it keeps is the one
 * the agent states, and the dumps come at that rate: 10 rows of 2 ms in 20 ms,
 * each with its 2 ms of a steady 1 count/us. Below the first vinstr's 500 us
 * resolution the agent asks for 500 us and says so (the driver would raise
 * it anyway, and dump less often than the agent stated). */
static void test_gpu_reader_interval_by_value(void **state)
{
	(void)state;
	const enum fake_iface ifaces[] = {FAKE_IFACE_IOCTL, FAKE_IFACE_UK_READER};
	for (size_t k = 0; k < 2; k++) {
		struct fake_kbase_cfg cfg;
		fake_kbase_cfg_g71mp8(&cfg);
		cfg.iface = ifaces[k];
		struct gpu_sampler *g = open_sampler(&cfg, 2 * MS);
		const struct kbase_dev *d = gpu_sampler_dev(g);
		assert_int_equal(d->interval_ns, 2 * MS);
		assert_int_equal(fake_kbase_stats().set_interval_arg, 2 * MS);
		assert_int_equal(fake_kbase_stats().interval_ns, d->interval_ns);
		fake_kbase_activity(BASE, BASE + 20 * MS, FAKE_JM, 0, 6, 20000); /* GPU_ACTIVE */
		int got = 0;
		for (uint64_t t = BASE + 250000; t <= BASE + 20 * MS; t += 250000) {
			fake_kbase_set_time(t);
			int n = gpu_sampler_poll(g);
			assert_true(n >= 0);
			got += n;
		}
		assert_int_equal(got, 10);
		const struct gpu_rows *r = gpu_sampler_rows(g);
		assert_int_equal(r->nrows, 10);
		for (size_t i = 0; i < r->nrows; i++) {
			assert_int_equal(r->t1[i] - r->t0[i], 2 * MS);
			assert_int_equal(cell(g, i, "GPU_ACTIVE"), 2000);
		}
		gpu_sampler_close(g);

		g = open_sampler(&cfg, 200000);
		d = gpu_sampler_dev(g);
		assert_int_equal(d->interval_ns, KBASE_READER_MIN_INTERVAL_NS);
		assert_int_equal(fake_kbase_stats().set_interval_arg, KBASE_READER_MIN_INTERVAL_NS);
		assert_int_equal(fake_kbase_stats().interval_ns, KBASE_READER_MIN_INTERVAL_NS);
		gpu_sampler_close(g);
	}
}

/* The fake's reader raises a short interval to its release's minimum, as
 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval does (2011-2015: 500 us,
 * 2011-2019: 100 us), and takes the argument itself, never through it. */
static void test_gpu_fake_reader_set_interval(void **state)
{
	(void)state;
	const enum fake_iface ifaces[] = {FAKE_IFACE_IOCTL, FAKE_IFACE_UK_READER};
	const uint32_t min[] = {100000, 500000};
	for (size_t k = 0; k < 2; k++) {
		struct fake_kbase_cfg cfg;
		fake_kbase_cfg_g71mp8(&cfg);
		cfg.iface = ifaces[k];
		struct gpu_sampler *g = open_sampler(&cfg, MS);
		int rfd = kbase_dev_poll_fd(gpu_sampler_dev(g));
		assert_true(rfd >= 0);
		assert_int_equal(
		    fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_SET_INTERVAL, (void *)(uintptr_t)50000), 0);
		assert_int_equal(fake_kbase_stats().set_interval_arg, 50000);
		assert_int_equal(fake_kbase_stats().interval_ns, min[k]);
		assert_int_equal(
		    fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_SET_INTERVAL, (void *)(uintptr_t)3000000), 0);
		assert_int_equal(fake_kbase_stats().interval_ns, 3000000);
		gpu_sampler_close(g);
	}
}

/* A UK call straight to the fake (id in the header, size in the request). */
static int ukc(int fd, void *arg, uint32_t id, size_t size)
{
	union kbase_uk_header *h = arg;
	h->id = id;
	if (fake_kbase_ioctl(fd, KBASE_UK_CMD(id, size), arg) < 0)
		return -errno;
	return h->ret ? -EINVAL : 0;
}

/* One dump of 777 GPU_ACTIVE into a UK dump buffer allocated with flags, as
 * the CPU reads it through its mapping (T628 v4: JM is block 7, word 6). */
static uint32_t raw_dump_gpu_active(const struct fake_kbase_cfg *cfg, uint32_t flags)
{
	fake_kbase_reset(cfg);
	fake_kbase_set_time(BASE);
	bool t6xx = cfg->iface == FAKE_IFACE_T6XX;
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	assert_true(fd >= 0);
	struct kbase_uk_version_check v = {.major = 10};
	assert_int_equal(ukc(fd, &v, UKP_FUNC_ID_CHECK_VERSION, sizeof(v)), 0);
	struct kbase_uk_set_flags f = {0};
	assert_int_equal(ukc(fd, &f, t6xx ? KBASE_T6XX_FUNC_SET_FLAGS : KBASE_FUNC_SET_FLAGS, sizeof(f)), 0);
	void *track =
	    fake_kbase_mmap(NULL, 4096, PROT_NONE, MAP_SHARED, fd, (off_t)BASE_MEM_MAP_TRACKING_HANDLE);
	assert_true(track != MAP_FAILED);
	uint64_t off, out_flags = 0;
	if (t6xx) {
		struct kbase_uk_t6xx_tmem_alloc a = {0};
		a.vsize = a.psize = 1;
		a.flags = flags;
		assert_int_equal(ukc(fd, &a, KBASE_T6XX_FUNC_TMEM_ALLOC, sizeof(a)), 0);
		off = a.gpu_addr;
	} else {
		struct kbase_uk_mem_alloc a = {0};
		a.va_pages = a.commit_pages = 1;
		a.flags = flags;
		assert_int_equal(ukc(fd, &a, KBASE_FUNC_MEM_ALLOC, sizeof(a)), 0);
		off = a.gpu_va;
		out_flags = a.flags;
	}
	const uint32_t *m = fake_kbase_mmap(NULL, 4096, PROT_READ, MAP_SHARED, fd, (off_t)off);
	assert_true(m != MAP_FAILED);
	struct kbase_uk_hwcnt_setup hs = {0};
	hs.dump_buffer = (out_flags & BASE_MEM_SAME_VA) ? (uint64_t)(uintptr_t)m : off;
	hs.jm_bm = hs.shader_bm = hs.tiler_bm = hs.mmu_l2_bm = ~0u;
	uint32_t setup = t6xx ? KBASE_T6XX_FUNC_HWCNT_SETUP : KBASE_FUNC_HWCNT_SETUP;
	assert_int_equal(ukc(fd, &hs, setup, sizeof(hs)), 0);
	fake_kbase_activity(BASE, BASE + MS, FAKE_JM, 0, 6, 777);
	fake_kbase_set_time(BASE + MS);
	struct kbase_uk_hwcnt_simple h = {0};
	assert_int_equal(ukc(fd, &h, t6xx ? KBASE_T6XX_FUNC_HWCNT_DUMP : KBASE_FUNC_HWCNT_DUMP, sizeof(h)),
			 0);
	assert_int_equal(fake_kbase_stats().dumps, 1);
	uint32_t got = m[7 * 64 + 6];
	struct kbase_uk_hwcnt_setup off_s = {0};
	assert_int_equal(ukc(fd, &off_s, setup, sizeof(off_s)), 0);
	fake_kbase_close(fd);
	return got;
}

/* Dump buffers the CPU reads fresh on every generation. The fakes map a
 * region the way each driver's kbase_cpu_mmap does (write-combine, or
 * cacheable: the CPU then keeps its stale lines, here never refreshed): a
 * CPU-read-only buffer reads stale on manta's Midgard r5p0 (write-combine
 * only with CPU_WR) and fresh on the r5p0-02rel0 copies and t6xx r3p0; the
 * agent's flags (CPU_RD | CPU_WR | GPU_WR) read fresh on all; a cache
 * flag (t6xx: both CPU hints; Midgard: BASE_MEM_CACHED_CPU) reads stale on
 * all. Then the agent itself on the r5p0-02rel0 copy (manta's and t6xx are
 * test_gpu_uk_dump_steady_and_falling_load). */
static void test_gpu_dump_buffer_coherent(void **state)
{
	(void)state;
	const uint32_t rd = BASE_MEM_PROT_CPU_RD | BASE_MEM_PROT_GPU_WR;
	const uint32_t agent = rd | BASE_MEM_PROT_CPU_WR;
	struct {
		enum fake_iface iface;
		bool compat32, r02rel0;
		uint32_t cached_flags; /* the generation's way to ask for a CPU-cached mapping */
		uint32_t rd_only;      /* what a CPU-read-only buffer reads */
	} gens[] = {
	    {FAKE_IFACE_T6XX, false, false, (1u << 5) | (1u << 6), 777},
	    {FAKE_IFACE_UK_DUMP, true, false, 1u << 12, 0},
	    {FAKE_IFACE_UK_DUMP, false, false, 1u << 12, 0},
	    {FAKE_IFACE_UK_DUMP, true, true, 1u << 12, 777},
	    {FAKE_IFACE_UK_DUMP, false, true, 1u << 12, 777},
	};
	for (size_t k = 0; k < sizeof(gens) / sizeof(gens[0]); k++) {
		struct fake_kbase_cfg cfg;
		fake_kbase_cfg_t628mp6(&cfg);
		cfg.iface = gens[k].iface;
		cfg.compat32 = gens[k].compat32;
		cfg.r5p0_02rel0 = gens[k].r02rel0;
		cfg.euid = 0;
		assert_int_equal(raw_dump_gpu_active(&cfg, rd), gens[k].rd_only);
		assert_int_equal(raw_dump_gpu_active(&cfg, agent), 777);
		assert_int_equal(raw_dump_gpu_active(&cfg, agent | gens[k].cached_flags), 0);
		if (gens[k].iface == FAKE_IFACE_T6XX || !gens[k].r02rel0)
			continue;
		struct gpu_sampler *g = open_sampler(&cfg, MS);
		fake_kbase_activity(BASE, BASE + 3 * MS, FAKE_JM, 0, 6, 3000);
		for (int t = 1; t <= 3; t++) {
			fake_kbase_set_time(BASE + (uint64_t)t * MS);
			assert_int_equal(gpu_sampler_poll(g), 1);
		}
		for (size_t i = 0; i < 3; i++)
			assert_int_equal(cell(g, i, "GPU_ACTIVE"), 1000);
		gpu_sampler_close(g);
	}
}

/* The reader and the ioctl interface as the drivers answer them: GET_BUFFER
 * with a buffer still out is EBUSY, PUT_BUFFER with none out EPERM and with
 * another index EINVAL, an unknown reader request EINVAL
 * (kbasep_vinstr_hwcnt_reader_ioctl); HWCNT_READER_SETUP with 0 or 33
 * buffers EINVAL (kbase_vinstr_hwcnt_reader_setup); every call but the
 * version check before the handshake EPERM, a second version check or
 * SET_FLAGS EPERM, the minor the lower of the two (kbase_api_handshake). */
static void test_gpu_fake_reader_ioctl_details(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	fake_kbase_reset(&cfg);
	fake_kbase_set_time(BASE);
	int fd = fake_kbase_open("/dev/mali0", O_RDWR);
	struct kbase_ioctl_set_flags f = {0};
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_SET_FLAGS, &f), -1);
	assert_int_equal(errno, EPERM);
	struct kbase_ioctl_version_check v = {11, 40};
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_VERSION_CHECK, &v), 0);
	assert_int_equal(v.major, 11);
	assert_int_equal(v.minor, 13);
	v = (struct kbase_ioctl_version_check){11, 2};
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_VERSION_CHECK, &v), -1);
	assert_int_equal(errno, EPERM);
	struct kbase_ioctl_hwcnt_reader_setup rs = {16, ~0u, ~0u, ~0u, ~0u};
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_HWCNT_READER_SETUP, &rs), -1);
	assert_int_equal(errno, EPERM); /* no context yet */
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_SET_FLAGS, &f), 0);
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_SET_FLAGS, &f), -1);
	assert_int_equal(errno, EPERM);
	rs.buffer_count = 0;
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_HWCNT_READER_SETUP, &rs), -1);
	assert_int_equal(errno, EINVAL);
	rs.buffer_count = 33;
	assert_int_equal(fake_kbase_ioctl(fd, KBASE_IOCTL_HWCNT_READER_SETUP, &rs), -1);
	assert_int_equal(errno, EINVAL);
	rs.buffer_count = 16;
	int rfd = fake_kbase_ioctl(fd, KBASE_IOCTL_HWCNT_READER_SETUP, &rs);
	assert_true(rfd >= 0);
	uint32_t sz = 0;
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_GET_BUFFER_SIZE, &sz), 0);
	assert_true(fake_kbase_mmap(NULL, 16 * (size_t)sz, PROT_READ, MAP_PRIVATE, rfd, 0) != MAP_FAILED);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_SET_INTERVAL, (void *)(uintptr_t)MS), 0);
	struct kbase_hwcnt_reader_metadata m = {0}, m2 = {0};
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_GET_BUFFER, &m), -1);
	assert_int_equal(errno, EAGAIN);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m), -1);
	assert_int_equal(errno, EPERM);
	fake_kbase_set_time(BASE + 3 * MS);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_GET_BUFFER, &m), 0);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_GET_BUFFER, &m2), -1);
	assert_int_equal(errno, EBUSY);
	m2 = m;
	m2.buffer_idx = m.buffer_idx + 1;
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m2), -1);
	assert_int_equal(errno, EINVAL);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m), 0);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_GET_BUFFER, &m), 0);
	assert_int_equal(fake_kbase_ioctl(rfd, KBASE_HWCNT_READER_PUT_BUFFER, &m), 0);
	assert_int_equal(fake_kbase_ioctl(rfd, _IOW(KBASE_HWCNT_READER, 0x40, uint32_t), &sz), -1);
	assert_int_equal(errno, EINVAL);
	fake_kbase_close(rfd);
	fake_kbase_close(fd);
}

/* Idle dumps merge into one row; the final manual dump takes the tail. */
static void test_gpu_idle_rows_merge(void **state)
{
	(void)state;
	struct fake_kbase_cfg cfg;
	fake_kbase_cfg_g71mp8(&cfg);
	struct gpu_sampler *g = open_sampler(&cfg, MS);
	fake_kbase_activity(BASE + 5 * MS, BASE + 5 * MS + 500000, FAKE_JM, 0, 6, 42);
	fake_kbase_set_time(BASE + 5 * MS + 500000);
	assert_int_equal(gpu_sampler_poll(g), 5);
	assert_true(gpu_sampler_final_dump(g) >= 1);
	const struct gpu_rows *r = gpu_sampler_rows(g);
	assert_int_equal(r->nrows, 2);
	assert_int_equal(r->t0[0], BASE);
	assert_int_equal(r->t1[0], BASE + 5 * MS);
	assert_int_equal(r->t1[1], BASE + 5 * MS + 500000);
	assert_int_equal(cell(g, 1, "GPU_ACTIVE"), 42);
	gpu_sampler_close(g);
}

static void test_gpu_attrib_conservation(void **state)
{
	(void)state;
	/* rows: (0,10] (10,20] (25,30]; kernels overlapping each other and a gap */
	const uint64_t t0[] = {0, 10, 25}, t1[] = {10, 20, 30}, v[] = {100, 7, 50, 0, 9, 9};
	const uint64_t k0[] = {2, 5, 18, 40}, k1[] = {8, 12, 22, 50};
	double out[8], un[2];
	assert_int_equal(gpu_attrib(t0, t1, v, 3, 2, k0, k1, 4, out, un), 0);
	double s0 = un[0], s1 = un[1];
	for (int k = 0; k < 4; k++)
		s0 += out[2 * k], s1 += out[2 * k + 1];
	assert_true(s0 > 158.999 && s0 < 159.001);
	assert_true(s1 > 15.999 && s1 < 16.001);
	assert_true(un[0] == 9.0); /* (25,30]: no kernel */
	assert_true(out[6] == 0.0);
	/* row 1: kernel time 6 + 5 (concurrent [2,8) and [5,12)); kernel 0 overlaps 6 */
	assert_true(out[0] > 100.0 * 6 / 11 - 1e-9 && out[0] < 100.0 * 6 / 11 + 1e-9);
	const uint64_t bad0[] = {0, 5}, bad1[] = {10, 20};
	assert_int_equal(gpu_attrib(bad0, bad1, v, 2, 2, k0, k1, 4, out, un), -EINVAL);
}

/* A GPU session without OpenCL kernels (agent stat --gpu): no spans to sort
 * (the caller passes no kernel arrays), every count is unattributed. Under
 * UBSan, qsort(NULL, 0, ...) aborted here (issue 25 item 9). */
static void test_gpu_attrib_no_kernels(void **state)
{
	(void)state;
	const uint64_t t0[] = {0, 10}, t1[] = {10, 20}, v[] = {5, 6, 7, 8};
	double un[2] = {-1, -1};
	assert_int_equal(gpu_attrib(t0, t1, v, 2, 2, NULL, NULL, 0, NULL, un), 0);
	assert_true(un[0] == 12.0 && un[1] == 14.0);
	assert_int_equal(gpu_attrib(NULL, NULL, NULL, 0, 2, NULL, NULL, 0, NULL, un), 0); /* no rows either */
	assert_true(un[0] == 0.0 && un[1] == 0.0);
}

static void test_validate_gpu_shapes(void **state)
{
	(void)state;
	char err[256];
	uint32_t ids[2] = {1, 2};
	uint64_t lens[2] = {1000, 2000}, vals[4] = {1, 2, 3, 4};
	Prof__GpuCounterDesc d1 = PROF__GPU_COUNTER_DESC__INIT, d2 = PROF__GPU_COUNTER_DESC__INIT;
	d1.id = 1, d1.name = "GPU_ACTIVE", d1.block = 0, d1.index = 6;
	d2.id = 2, d2.name = "L2_EXT_READ_BEATS", d2.block = 2, d2.index = 31, d2.role = 7;
	Prof__GpuCounterDesc *descs[2] = {&d1, &d2};
	Prof__GpuInfo info = PROF__GPU_INFO__INIT;
	info.family = "T62x", info.bus_bytes = 16;
	Prof__GpuCounters g = PROF__GPU_COUNTERS__INIT;
	g.n_counter_ids = 2, g.counter_ids = ids, g.n_t_ns = 2, g.t_ns = lens, g.n_values = 4,
	g.values = vals;
	g.n_new_counters = 2, g.new_counters = descs, g.info = &info;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), 0);
	g.n_values = 3;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
	g.n_values = 4;
	lens[1] = 0;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
	lens[1] = 2000;
	d2.index = 2; /* a header word */
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
	d2.index = 31;
	ids[1] = 1;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
	ids[1] = 2;
	g.info = NULL;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
	g.info = &info;
	info.bus_bytes = 0;
	assert_int_equal(validate_gpu_counters(&g, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gpu_layout_v4_t628mp6),
	    cmocka_unit_test(test_gpu_family_lookup),
	    cmocka_unit_test(test_gpu_t628_uk_dump_block_deltas),
	    cmocka_unit_test(test_gpu_g71_reader_per_kernel),
	    cmocka_unit_test(test_gpu_kernel_shorter_than_dump),
	    cmocka_unit_test(test_gpu_uk_dump_steady_and_falling_load),
	    cmocka_unit_test(test_gpu_wrong_probe_order_wedges_uk),
	    cmocka_unit_test(test_gpu_fake_uk_driver_details),
	    cmocka_unit_test(test_gpu_same_va_cookie_faults),
	    cmocka_unit_test(test_gpu_t6xx_tmem_and_tracking_page),
	    cmocka_unit_test(test_gpu_v4_noncontiguous_core_mask),
	    cmocka_unit_test(test_gpu_driver_refuses_setup),
	    cmocka_unit_test(test_gpu_late_dump),
	    cmocka_unit_test(test_gpu_reader_interval_by_value),
	    cmocka_unit_test(test_gpu_fake_reader_set_interval),
	    cmocka_unit_test(test_gpu_dump_buffer_coherent),
	    cmocka_unit_test(test_gpu_fake_reader_ioctl_details),
	    cmocka_unit_test(test_gpu_idle_rows_merge),
	    cmocka_unit_test(test_gpu_attrib_conservation),
	    cmocka_unit_test(test_gpu_attrib_no_kernels),
	    cmocka_unit_test(test_validate_gpu_shapes),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
