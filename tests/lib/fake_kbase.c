/* The fake kbase device's core: the GPU (counter activity, the dump it writes
 * at a dump request, the hwcnt reader's ring), the device-wide
 * instrumentation state, the open file and the ways in (struct kbase_sys for
 * unit tests, fake_kbase_open/ioctl/mmap/munmap/close for the LD_PRELOAD and
 * --wrap faces). Each driver generation's dispatch is in its own file
 * (fake_kbase_int.h). */
#include "fake_kbase.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "fake_kbase_int.h"
#include "gpu/kbase_abi.h"
#include "gpu/kbase_dev.h"

#define MAX_ACT 256
#define NBUF 16

struct act {
	uint64_t t0, t1;
	unsigned block;
	int instance;
	unsigned word;
	uint64_t count;
	double rate; /* per ns from t0 on (script "rate"), count unused */
};

static struct {
	struct fake_kbase_cfg cfg;
	const struct fake_gen *gen;
	uint64_t now;
	struct act act[MAX_ACT];
	size_t nact;
	int dev_fd, reader_fd;
	struct fake_ctx ctx; /* the open file's context */
	/* the GPU's counters: counting since the last reset (clear or dump) */
	uint64_t last_reset;
	/* device-wide instrumentation (kbase_device.hwcnt) */
	enum fake_hwcnt_state hwcnt;
	struct fake_ctx *hwcnt_kctx;
	uint64_t hwcnt_addr;
	/* reader */
	uint8_t *ring;
	size_t ring_len;
	uint32_t buf_bytes;
	uint32_t interval_ns;
	uint64_t next_dump;
	struct kbase_hwcnt_reader_metadata ready[NBUF];
	unsigned nready, head;
	bool busy[NBUF];
	bool taken; /* a buffer handed out by GET_BUFFER, not yet put back */
	uint32_t taken_idx;
	bool hold, reader_on, manual;
	/* mappings handed out */
	struct {
		void *p;
		size_t len;
	} maps[32];
	struct fake_kbase_stats st;
} F = {.dev_fd = -1, .reader_fd = -1};

static uint64_t clk(clockid_t c)
{
	struct timespec ts;
	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

uint64_t fake_kbase_now(void)
{
	return F.cfg.real_clock ? clk(CLOCK_MONOTONIC_RAW) : F.now;
}
static uint64_t fake_mono(void)
{
	return F.cfg.real_clock ? clk(CLOCK_MONOTONIC) : F.now;
}

void fake_kbase_set_time(uint64_t ns)
{
	F.now = ns;
}

const struct fake_kbase_cfg *fake_cfg(void)
{
	return &F.cfg;
}

uid_t fake_euid(void)
{
	return F.cfg.euid >= 0 ? (uid_t)F.cfg.euid : geteuid();
}

struct fake_kbase_stats *fake_stats(void)
{
	return &F.st;
}

void fake_kbase_cfg_t628mp6(struct fake_kbase_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->iface = FAKE_IFACE_UK_DUMP;
	c->path = "/dev/mali0";
	c->gpu_id = 0x06201000; /* T62x r1p0 */
	c->shader_present = 0x3f;
	/* kbase_gpuprops_construct_coherent_groups: one core group per L2_PRESENT
	 * bit; with the L2 bits at 0 and 4 the groups are cores 0-3 and 4-5 */
	c->l2_present = 0x11;
	c->num_l2 = 1;		     /* kbase_gpuprops_calculate_props: num_l2_slices 1 but on T76x */
	c->l2_features = 0x07120206; /* bus width 2^7 = 128 bits */
	c->hw_version = 4;
	c->euid = -1;
}

void fake_kbase_cfg_g71mp8(struct fake_kbase_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->iface = FAKE_IFACE_IOCTL;
	c->path = "/dev/mali0";
	c->gpu_id = 0x60000010; /* tMIx r0p1 */
	c->shader_present = 0xff;
	c->l2_present = 0x1; /* one core group */
	c->num_l2 = 2;	     /* later drivers: num_l2_slices = MEM_FEATURES[11:8] + 1 */
	c->l2_features = 0x07130206;
	c->hw_version = 5;
	c->euid = -1;
}

static const struct fake_gen *gen_of(enum fake_iface i)
{
	switch (i) {
	case FAKE_IFACE_T6XX:
		return &fake_gen_t6xx;
	case FAKE_IFACE_UK_DUMP:
		return &fake_gen_midgard_uk;
	case FAKE_IFACE_UK_READER:
		return &fake_gen_vinstr_uk;
	default:
		return &fake_gen_ioctl;
	}
}

static void unmap_all(void)
{
	for (size_t i = 0; i < sizeof(F.maps) / sizeof(F.maps[0]); i++)
		if (F.maps[i].p) {
			void *p = F.maps[i].p; /* cleared first: munmap may be the interposed one */
			F.maps[i].p = NULL;
			munmap(p, F.maps[i].len);
		}
}

void fake_kbase_reset(const struct fake_kbase_cfg *c)
{
	unmap_all();
	if (F.dev_fd >= 0)
		close(F.dev_fd);
	if (F.reader_fd >= 0)
		close(F.reader_fd);
	memset(&F, 0, sizeof(F));
	F.cfg = *c;
	F.gen = gen_of(c->iface);
	F.dev_fd = F.reader_fd = -1;
}

int fake_kbase_activity(uint64_t t0, uint64_t t1, unsigned block, int instance, unsigned word, uint64_t count)
{
	if (F.nact >= MAX_ACT || t1 <= t0 || word >= 64 || block > FAKE_SC)
		return -EINVAL;
	F.act[F.nact++] = (struct act){t0, t1, block, instance, word, count, 0};
	return 0;
}

void fake_kbase_hold_dumps(bool hold)
{
	F.hold = hold;
}

struct fake_kbase_stats fake_kbase_stats(void)
{
	F.st.interval_ns = F.interval_ns;
	return F.st;
}

bool fake_kbase_wedged(void)
{
	return F.dev_fd >= 0 && F.ctx.setup_in_progress && !F.ctx.setup_complete;
}

/* ---- fake memory */
void *fake_pages(size_t len)
{
	for (size_t i = 0; i < sizeof(F.maps) / sizeof(F.maps[0]); i++)
		if (!F.maps[i].p) {
			void *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
			if (p == MAP_FAILED)
				return NULL;
			F.maps[i].p = p;
			F.maps[i].len = len;
			return p;
		}
	return NULL;
}

int fake_kbase_munmap(void *addr, size_t len)
{
	(void)len;
	for (size_t i = 0; i < sizeof(F.maps) / sizeof(F.maps[0]); i++)
		if (addr && F.maps[i].p == addr) {
			F.maps[i].p = NULL; /* first: munmap may be the interposed one */
			munmap(addr, F.maps[i].len);
			/* the CPU mapping of a region is gone (the GPU's stays until free) */
			for (unsigned r = 0; r < F.ctx.nreg; r++)
				if (F.ctx.reg[r].cpu == addr) {
					F.ctx.reg[r].cpu = NULL;
					fake_kbase_munmap(F.ctx.reg[r].mem, 0);
					F.ctx.reg[r].mem = NULL;
				}
			if (F.ctx.tracking == addr)
				F.ctx.tracking = NULL;
			if (F.ring == addr)
				F.ring = NULL;
			return 0;
		}
	return -1;
}

void *fake_region_map(struct fake_region *r, size_t len, bool cpu_cached, int *err)
{
	(void)len; /* the whole region is mapped (the fakes check len against it) */
	r->cpu = fake_pages(r->pages * 4096);
	r->mem = r->cpu && cpu_cached ? fake_pages(r->pages * 4096) : NULL;
	if (!r->cpu || (cpu_cached && !r->mem)) {
		*err = ENOMEM;
		return NULL;
	}
	return r->cpu;
}

/* ---- the counter model: value of a counter accumulated over (t0, t] */
static double cumulative(unsigned block, unsigned inst, unsigned word, uint64_t t)
{
	double v = 0;
	for (size_t i = 0; i < F.nact; i++) {
		const struct act *a = &F.act[i];
		if (a->block != block || a->word != word ||
		    (a->instance >= 0 && (unsigned)a->instance != inst))
			continue;
		if (t <= a->t0)
			continue;
		if (a->rate > 0) {
			v += a->rate * (double)(t - a->t0);
			continue;
		}
		uint64_t end = t < a->t1 ? t : a->t1;
		v += (double)a->count * (double)(end - a->t0) / (double)(a->t1 - a->t0);
	}
	return v;
}

/* The core groups the driver reports: kbase_gpuprops_construct_coherent_groups
 * (mali_kbase_gpuprops.c, the t6xx tree's src/common/ and the Midgard ones):
 * num_core_groups = hweight64(l2_present); with GROUPS_L2_COHERENT (the job
 * manager GPUs here) group n holds the shader_present bits from the nth
 * L2_PRESENT bit up to the next: group_mask = (first_set - 1) &
 * ~(first_set_prev - 1), core_mask = group_mask & shader_present. */
unsigned fake_core_groups(uint64_t mask[FAKE_MAX_GROUPS])
{
	uint64_t present = F.cfg.l2_present;
	uint64_t first = present & ~(present - 1);
	unsigned n = 0;
	while (present && n < FAKE_MAX_GROUPS) {
		present -= first;
		uint64_t prev = first;
		first = present & ~(present - 1);
		mask[n++] = (first - 1) & ~(prev - 1) & F.cfg.shader_present;
	}
	return n;
}

/* Block placement, per the driver sources (independent of agent/gpu/mali_gpu.c). */
static size_t nblocks_total(void)
{
	uint64_t groups[FAKE_MAX_GROUPS];
	if (F.cfg.hw_version == 4)
		return (size_t)fake_core_groups(groups) * 8;
	return 2 + F.cfg.num_l2 + (size_t)(64 - __builtin_clzll(F.cfg.shader_present));
}

/* The dump the GPU writes at a dump request: each block's counters since the
 * previous reset, which the request then resets (mali_kbase_vinstr.c: "The
 * GPU resets the counter block every time there is a request to dump it").
 * The counters are 32 bits wide. v4 (mali_kbase_vinstr.c
 * patch_dump_buffer_hdr_v4): 8 blocks per core group, shader core c of group
 * g in slot c % 4 (its position, absent cores' slots stay zero), tiler 4,
 * MMU/L2 5, JM 7. v5: JM, tiler, L2 slices, a block per core bit up to the
 * highest. */
static void fill(uint32_t *buf, uint64_t t_prev, uint64_t t)
{
	size_t nb = nblocks_total();
	uint64_t groups[FAKE_MAX_GROUPS];
	fake_core_groups(groups);
	memset(buf, 0, nb * 256);
	for (size_t b = 0; b < nb; b++) {
		unsigned type = 0, inst = 0;
		bool present = true;
		if (F.cfg.hw_version == 4) {
			unsigned g = (unsigned)(b / 8), slot = (unsigned)(b % 8);
			if (slot < 4) {
				type = FAKE_SC;
				present = false;
				for (unsigned k = 0; k < 64; k++)
					if ((groups[g] >> k & 1) && k % 4 == slot)
						present = true, inst = k;
			} else if (slot == 4) {
				type = FAKE_TILER, present = g == 0;
			} else if (slot == 5) {
				type = FAKE_L2, inst = g;
			} else if (slot == 7) {
				type = FAKE_JM, present = g == 0;
			} else {
				present = false;
			}
		} else {
			if (b == 0)
				type = FAKE_JM;
			else if (b == 1)
				type = FAKE_TILER;
			else if (b < 2 + F.cfg.num_l2)
				type = FAKE_L2, inst = (unsigned)(b - 2);
			else {
				type = FAKE_SC, inst = (unsigned)(b - 2 - F.cfg.num_l2);
				present = F.cfg.shader_present >> inst & 1;
			}
		}
		uint32_t *blk = buf + b * 64;
		blk[2] = 0xffffffffu; /* enable mask word */
		if (!present)
			continue;
		for (unsigned w = 4; w < 64; w++) {
			double cur = floor(cumulative(type, inst, w, t) + 1e-6);
			double prev = floor(cumulative(type, inst, w, t_prev) + 1e-6);
			blk[w] = (uint32_t)(uint64_t)(cur - prev);
		}
	}
}

/* ---- device-wide instrumentation (Midgard r5p0 mali_kbase_instr.c; the
 * t6xx r3p0 driver's kbase_instr.c has the same entry points) */
int fake_hwcnt_enable(struct fake_ctx *c, uint64_t dump_va)
{
	/* kbase_instr_hwcnt_enable: kbase_security_has_capability(kctx,
	 * KBASE_SEC_INSTR_HW_COUNTERS_COLLECT) -> kbasep_am_i_root */
	if (fake_euid() != 0)
		return -1;
	if (F.cfg.refuse_setup_errno)
		return -1; /* scripted: the counters are held elsewhere */
	/* kbase_instr_hwcnt_enable_internal: "alignment failure" */
	if (dump_va == 0 || (dump_va & (KBASE_HWCNT_DUMP_ALIGN - 1)))
		return -1;
	/* "Instrumentation is already enabled" (another context holds it) */
	if (F.hwcnt != FAKE_HWCNT_DISABLED)
		return -1;
	F.hwcnt = FAKE_HWCNT_IDLE;
	F.hwcnt_kctx = c;
	F.hwcnt_addr = dump_va;
	F.st.setups++;
	return 0;
}

int fake_hwcnt_disable(struct fake_ctx *c)
{
	/* kbase_instr_hwcnt_disable (manta r5p0 mali_kbase_instr.c): "Instrumentation
	 * is not enabled" / "Instrumentation has been setup for another context":
	 * goto out with err = MALI_ERROR_FUNCTION_FAILED */
	if (F.hwcnt == FAKE_HWCNT_DISABLED || F.hwcnt_kctx != c)
		return -1;
	F.hwcnt = FAKE_HWCNT_DISABLED;
	F.hwcnt_kctx = NULL;
	F.hwcnt_addr = 0;
	F.st.disables++;
	return 0;
}

/* The GPU writes the dump at hwcnt.addr through the context's GPU mapping:
 * an address no GPU-writable region covers is a page fault
 * (KBASE_INSTR_STATE_FAULT in kbase_instr_hwcnt_dump). */
static uint8_t *gpu_target(struct fake_ctx *c, uint64_t va, size_t bytes)
{
	for (unsigned r = 0; r < c->nreg; r++) {
		const struct fake_region *g = &c->reg[r];
		if (!g->gpu_va || !g->gpu_wr || va < g->gpu_va || va + bytes > g->gpu_va + g->pages * 4096)
			continue;
		if (!g->cpu)
			return NULL;
		/* memory, which the CPU sees only through an uncached mapping */
		return (g->mem ? g->mem : g->cpu) + (va - g->gpu_va);
	}
	return NULL;
}

int fake_hwcnt_dump(struct fake_ctx *c)
{
	/* kbase_instr_hwcnt_dump_irq: "The instrumentation has been setup for
	 * another context" / "HW counters are disabled" */
	if (F.hwcnt_kctx != c || F.hwcnt != FAKE_HWCNT_IDLE)
		return -1;
	size_t bytes = nblocks_total() * 256;
	uint8_t *dst = gpu_target(c, F.hwcnt_addr, bytes);
	uint64_t now = fake_kbase_now();
	if (!dst) {
		F.st.faults++;
		return -1;
	}
	fill((uint32_t *)dst, F.last_reset, now);
	F.last_reset = now;
	F.st.dumps++;
	return 0;
}

int fake_hwcnt_clear(struct fake_ctx *c)
{
	/* kbase_instr_hwcnt_clear: only the owner, only when idle */
	if (F.hwcnt_kctx != c || F.hwcnt != FAKE_HWCNT_IDLE)
		return -1;
	F.last_reset = fake_kbase_now();
	F.st.clears++;
	return 0;
}

/* ---- the hwcnt reader (mali_kbase_vinstr.c): periodic dumps into a ring;
 * each buffer's metadata: the dump's timestamp (CLOCK_MONOTONIC_RAW:
 * kbasep_vinstr_timestamp_ns -> getrawmonotonic), event PERIODIC (1) or
 * MANUAL (0, the DUMP request), the buffer index */
static void produce(void)
{
	if (!F.reader_on || !F.ring || F.interval_ns == 0)
		return;
	uint64_t now = fake_kbase_now();
	while (F.next_dump && F.next_dump <= now) {
		unsigned idx = NBUF;
		for (unsigned i = 0; i < NBUF; i++)
			if (!F.busy[i]) {
				idx = i;
				break;
			}
		/* kbasep_vinstr_client_dump: "Check if there is a place to copy HWC
		 * block into" (-EBUSY, 2011-2019; the 2011-2015 update_client the
		 * same): no buffer, and the counts stay in the client's accumulator
		 * for its next dump */
		if (idx == NBUF) {
			F.st.dropped++;
			F.next_dump += F.interval_ns;
			continue;
		}
		fill((uint32_t *)(F.ring + (size_t)idx * F.buf_bytes), F.last_reset, F.next_dump);
		F.busy[idx] = true;
		F.ready[(F.head + F.nready) % NBUF] =
		    (struct kbase_hwcnt_reader_metadata){F.next_dump, F.manual ? 0u : 1u, idx};
		F.nready++;
		F.st.dumps++;
		F.last_reset = F.next_dump;
		F.next_dump += F.interval_ns;
	}
}

/* kbasep_vinstr_hwcnt_reader_ioctl_dump: a dump now, event
 * BASE_HWCNT_READER_EVENT_MANUAL (0). Not modelled: a dump at the very time
 * of the last one (the driver hands out a buffer of zeros; the fake none). */
static int manual_dump(void)
{
	uint64_t now = fake_kbase_now();
	if (now <= F.last_reset)
		return 0;
	F.manual = true;
	uint32_t saved = F.interval_ns;
	uint64_t saved_next = F.next_dump;
	F.next_dump = now;
	F.interval_ns = 1;
	produce();
	F.manual = false;
	F.interval_ns = saved;
	F.next_dump = saved_next > now ? saved_next : now + saved;
	return 0;
}

int fake_reader_create(uint32_t buffer_count)
{
	if (F.cfg.refuse_setup_errno)
		return -F.cfg.refuse_setup_errno;
	/* kbase_vinstr_hwcnt_reader_setup: "(setup->buffer_count == 0) ||
	 * (setup->buffer_count > MAX_BUFFER_COUNT)" (32): -EINVAL. The fake's
	 * ring has NBUF buffers whatever the count (the agent asks for 16). */
	if (buffer_count == 0 || buffer_count > 32)
		return -EINVAL;
	if (F.reader_fd >= 0) /* one reader at a time in this fake (the drivers take several) */
		return -EBUSY;
	F.reader_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	F.buf_bytes = (uint32_t)(nblocks_total() * 256);
	F.ring_len = (size_t)NBUF * F.buf_bytes;
	F.reader_on = true;
	F.last_reset = fake_kbase_now();
	F.st.setups++;
	return F.reader_fd;
}

/* kbasep_vinstr_hwcnt_reader_ioctl (mali_kbase_vinstr.c, (C) 2011-2015 and
 * 2011-2019 alike where not said). */
static int reader_ioctl(unsigned long req, void *arg)
{
	produce();
	switch (req) {
	case KBASE_HWCNT_READER_GET_API_VERSION: /* put_user(HWCNT_READER_API, ..) */
		*(uint32_t *)arg = KBASE_HWCNT_READER_API;
		return 0;
	case KBASE_HWCNT_READER_GET_HWVER: /* kbasep_vinstr_hwcnt_reader_ioctl_get_hwver: 4 or 5 */
		*(uint32_t *)arg = F.cfg.hw_version;
		return 0;
	case KBASE_HWCNT_READER_GET_BUFFER_SIZE: /* put_user(dump_size / dump_buf_bytes, ..) */
		*(uint32_t *)arg = F.buf_bytes;
		return 0;
	case KBASE_HWCNT_READER_SET_INTERVAL: {
		/* kbasep_vinstr_hwcnt_reader_ioctl: "case KBASE_HWCNT_READER_SET_INTERVAL:
		 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval(cli, (u32)arg)": the
		 * argument is the interval itself, never read through */
		uint32_t iv = (uint32_t)(uintptr_t)arg;
		F.st.set_interval_arg = iv;
		/* kbasep_vinstr_hwcnt_reader_ioctl_set_interval: a non-zero interval
		 * under the release's minimum is raised to it (2011-2015:
		 * DUMPING_RESOLUTION 500 us; 2011-2019: DUMP_INTERVAL_MIN_NS 100 us);
		 * the first dump one interval from now ("dump_time =
		 * kbasep_vinstr_get_timestamp() + cli->dump_interval") */
		if (iv && iv < F.gen->reader_min_interval_ns)
			iv = F.gen->reader_min_interval_ns;
		F.interval_ns = iv;
		F.next_dump = iv ? F.last_reset + iv : 0;
		if (F.cfg.real_clock && iv) {
			struct itimerspec its;
			its.it_interval.tv_sec = its.it_value.tv_sec = iv / 1000000000u;
			its.it_interval.tv_nsec = its.it_value.tv_nsec = iv % 1000000000u;
			timerfd_settime(F.reader_fd, 0, &its, NULL);
		}
		return 0;
	}
	case KBASE_HWCNT_READER_DUMP: /* a manual dump into the next free buffer */
		return manual_dump();
	case KBASE_HWCNT_READER_CLEAR: /* the client's counts start again from now */
		F.last_reset = fake_kbase_now();
		return 0;
	case KBASE_HWCNT_READER_GET_BUFFER:
		/* kbasep_vinstr_hwcnt_reader_ioctl_get_buffer: "Check if there is any
		 * buffer available" (-EAGAIN), "Check if previously taken buffer was
		 * put back" (-EBUSY) */
		if (F.nready == 0 || F.hold) {
			uint64_t junk;
			if (F.cfg.real_clock)
				while (read(F.reader_fd, &junk, sizeof(junk)) > 0) {
				}
			return -EAGAIN;
		}
		if (F.taken)
			return -EBUSY;
		*(struct kbase_hwcnt_reader_metadata *)arg = F.ready[F.head];
		F.taken = true;
		F.taken_idx = F.ready[F.head].buffer_idx;
		F.head = (F.head + 1) % NBUF;
		F.nready--;
		F.st.gets++;
		return 0;
	case KBASE_HWCNT_READER_PUT_BUFFER: {
		/* kbasep_vinstr_hwcnt_reader_ioctl_put_buffer: "Check if any buffer
		 * was taken" (-EPERM), "Check if correct buffer is put back" (-EINVAL) */
		const struct kbase_hwcnt_reader_metadata *m = arg;
		if (!F.taken)
			return -EPERM;
		if (m->buffer_idx != F.taken_idx)
			return -EINVAL;
		F.taken = false;
		F.busy[m->buffer_idx] = false;
		F.st.puts++;
		return 0;
	}
	default: /* "default: rcode = -EINVAL" */
		return -EINVAL;
	}
}

/* ---- GPU properties */
static void put_prop(uint8_t *b, size_t *n, uint32_t key, unsigned szcode, uint64_t v)
{
	uint32_t k = key << 2 | szcode;
	if (b) {
		memcpy(b + *n, &k, 4);
		memcpy(b + *n + 4, &v, (size_t)1 << szcode);
	}
	*n += 4 + ((size_t)1 << szcode);
}

size_t fake_props_kv(uint8_t *b)
{
	size_t n = 0;
	put_prop(b, &n, KBASE_GPUPROP_PRODUCT_ID, 2, F.cfg.gpu_id >> 16);
	put_prop(b, &n, KBASE_GPUPROP_RAW_GPU_ID, 2, F.cfg.gpu_id);
	put_prop(b, &n, KBASE_GPUPROP_RAW_SHADER_PRESENT, 3, F.cfg.shader_present);
	put_prop(b, &n, KBASE_GPUPROP_L2_NUM_L2_SLICES, 0, F.cfg.num_l2);
	put_prop(b, &n, KBASE_GPUPROP_RAW_L2_FEATURES, 2, F.cfg.l2_features);
	put_prop(b, &n, KBASE_GPUPROP_RAW_L2_PRESENT, 3, F.cfg.l2_present);
	uint64_t groups[FAKE_MAX_GROUPS];
	unsigned ng = fake_core_groups(groups);
	put_prop(b, &n, KBASE_GPUPROP_COHERENCY_NUM_CORE_GROUPS, 2, ng);
	for (unsigned g = 0; g < ng; g++)
		put_prop(b, &n, KBASE_GPUPROP_COHERENCY_GROUP_0 + g, 3, groups[g]);
	return n;
}

static void fill_raw(struct kbase_uk_raw_props *r, struct kbase_uk_coherent_info *c)
{
	r->gpu_id = F.cfg.gpu_id;
	r->shader_present = F.cfg.shader_present;
	r->l2_present = F.cfg.l2_present;
	r->l2_features = F.cfg.l2_features;
	uint64_t groups[FAKE_MAX_GROUPS];
	unsigned ng = fake_core_groups(groups);
	/* num_core_groups = hweight64(l2_present); num_groups = the groups built */
	c->num_core_groups = (uint32_t)__builtin_popcountll(F.cfg.l2_present);
	c->num_groups = ng;
	for (unsigned g = 0; g < ng; g++) {
		c->group[g].core_mask = groups[g];
		c->group[g].num_cores = (uint16_t)__builtin_popcountll(groups[g]);
	}
}

/* kbase_gpuprops_uk_get_props: the whole struct after the header. */
void fake_props_uk(void *props, bool t6xx)
{
	if (t6xx) {
		struct kbase_uk_t6xx_gpuprops *p = props;
		memset((char *)p + 8, 0, sizeof(*p) - 8);
		p->core.product_id = F.cfg.gpu_id >> 16;
		p->num_l2_slices = (uint8_t)F.cfg.num_l2;
		fill_raw(&p->raw, &p->coh);
	} else {
		struct kbase_uk_gpuprops *p = props;
		memset((char *)p + 8, 0, sizeof(*p) - 8);
		p->core.product_id = F.cfg.gpu_id >> 16;
		p->num_l2_slices = (uint8_t)F.cfg.num_l2;
		fill_raw(&p->raw, &p->coh);
	}
}

/* ---- the UK calling convention (kbase_ioctl of the UK drivers: t6xx
 * src/linux/mali_kbase_core_linux.c, CALL_MAX_SIZE 528; midgard/
 * mali_kbase_core_linux.c, 536; kbase_legacy_ioctl of the handshake drivers,
 * 536) */
#define FAKE_CALL_MAX 536
int fake_uk_call(struct fake_ctx *c, unsigned long req, void *arg,
		 int (*dispatch)(struct fake_ctx *c, void *msg, uint32_t size))
{
	uint64_t msg[(FAKE_CALL_MAX + 7) >> 3];
	uint32_t size = (uint32_t)(req >> 16) & 0x3fff; /* _IOC_SIZE */
	if (size > F.gen->uk_call_max || size > FAKE_CALL_MAX)
		return -ENOTTY; /* "if (size > CALL_MAX_SIZE) return -ENOTTY" */
	for (size_t i = 0; i < sizeof(msg) / 8; i++)
		msg[i] = 0xdeadbeefdeadbeefull; /* "alignment fixup" prefill */
	memcpy(msg, arg, size);
	/* "if (MALI_ERROR_NONE != kbase_dispatch(..)) return -EFAULT"; the
	 * handshake drivers' "if (kbase_legacy_dispatch(kctx, &msg, size) != 0)
	 * return -EFAULT" too: their -EINVAL reaches the caller as EFAULT */
	if (dispatch(c, msg, size) != 0) {
		F.st.efaults++;
		return -EFAULT;
	}
	memcpy(arg, msg, size);
	return 0;
}

/* ---- the files */
bool fake_kbase_path_is_ours(const char *path)
{
	return path && F.cfg.path && strcmp(path, F.cfg.path) == 0;
}

bool fake_kbase_is_ours(int fd)
{
	return fd >= 0 && (fd == F.dev_fd || fd == F.reader_fd);
}

int fake_kbase_open(const char *path, int flags)
{
	(void)flags;
	if (!fake_kbase_path_is_ours(path) || F.cfg.open_errno) {
		errno = F.cfg.open_errno ? F.cfg.open_errno : ENOENT;
		return -1;
	}
	if (F.dev_fd >= 0) { /* one context at a time in this fake */
		errno = EBUSY;
		return -1;
	}
	if (!F.gen)
		F.gen = gen_of(F.cfg.iface);
	F.dev_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	/* kbase_open -> kbase_create_context: a fresh context per open */
	memset(&F.ctx, 0, sizeof(F.ctx));
	F.ctx.next_gpu_pfn = 0x41000; /* the GPU VA zone's first free page (32-bit) */
	F.ctx.next_cookie = 1;
	F.st.opens++;
	return F.dev_fd;
}

int fake_kbase_ioctl(int fd, unsigned long req, void *arg)
{
	int rc;
	if (fd == F.reader_fd && fd >= 0)
		rc = reader_ioctl(req, arg);
	else if (fd != F.dev_fd || fd < 0)
		rc = -EBADF;
	else
		rc = F.gen->ioctl(&F.ctx, req, arg);
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

void *fake_kbase_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	(void)addr;
	if (fd == F.reader_fd && fd >= 0) {
		/* kbasep_vinstr_hwcnt_reader_mmap: more than the buffers is refused
		 * (2011-2015: -ENOMEM; 2011-2019: -EINVAL). The fake serves only the
		 * whole ring from offset 0, once (the agent's one mapping); the
		 * drivers also map part of it, or again. */
		if (len > F.ring_len) {
			errno = F.gen == &fake_gen_vinstr_uk ? ENOMEM : EINVAL;
			return MAP_FAILED;
		}
		if (off != 0 || len != F.ring_len || F.ring) {
			errno = EINVAL;
			return MAP_FAILED;
		}
		F.ring = fake_pages(len);
		if (!F.ring) {
			errno = ENOMEM;
			return MAP_FAILED;
		}
		return F.ring;
	}
	if (fd != F.dev_fd || fd < 0) {
		errno = EBADF;
		return MAP_FAILED;
	}
	int err = 0;
	void *p = F.gen->mmap(&F.ctx, len, prot, flags, off, &err);
	if (!p) {
		errno = err ? err : EINVAL;
		return MAP_FAILED;
	}
	return p;
}

int fake_kbase_close(int fd)
{
	if (fd == F.reader_fd && fd >= 0) {
		F.reader_fd = -1;
		F.reader_on = false;
		F.taken = false;
		F.nready = 0;
		memset(F.busy, 0, sizeof(F.busy));
	} else if (fd == F.dev_fd && fd >= 0) {
		/* kbase_destroy_context: "The privileged process asking for
		 * instrumentation forgot to disable it before exiting" */
		if (F.hwcnt_kctx == &F.ctx) {
			F.st.forgot_disable++;
			fake_hwcnt_disable(&F.ctx);
		}
		if (F.ctx.setup_in_progress && !F.ctx.setup_complete)
			F.st.wedged++;
		F.dev_fd = -1;
	}
	return close(fd);
}

static int sys_open(const char *p, int f)
{
	return fake_kbase_open(p, f);
}
static int sys_ioctl(int fd, unsigned long r, void *a)
{
	return fake_kbase_ioctl(fd, r, a);
}
static int sys_munmap(void *addr, size_t len)
{
	return fake_kbase_munmap(addr, len) == 0 ? 0 : munmap(addr, len);
}
static int sys_poll(struct pollfd *p, nfds_t n, int t)
{
	(void)t;
	produce();
	int ready = 0;
	for (nfds_t i = 0; i < n; i++) {
		p[i].revents = (p[i].fd == F.reader_fd && F.nready && !F.hold) ? POLLIN : 0;
		ready += p[i].revents != 0;
	}
	return ready;
}

const struct kbase_sys fake_kbase_sys = {sys_open,	   sys_ioctl, fake_kbase_mmap, sys_munmap, sys_poll,
					 fake_kbase_close, fake_mono, fake_kbase_now,  fake_euid};

int fake_kbase_load_script(const char *file)
{
	FILE *f = fopen(file, "r");
	if (!f)
		return -errno;
	struct fake_kbase_cfg c;
	fake_kbase_cfg_t628mp6(&c);
	char line[256];
	struct act rates[32];
	size_t nr = 0;
	static char path[200];
	while (fgets(line, sizeof(line), f)) {
		char a[64] = "", b[64] = "", cc[64] = "", d[64] = "", e[64] = "";
		if (sscanf(line, "%63s %63s %63s %63s %63s", a, b, cc, d, e) < 1 || a[0] == '#')
			continue;
		if (!strcmp(a, "gpu")) {
			enum fake_iface keep = c.iface;
			bool c32 = c.compat32;
			bool t628 = !strcmp(b, "t628mp6");
			if (t628)
				fake_kbase_cfg_t628mp6(&c);
			else
				fake_kbase_cfg_g71mp8(&c);
			c.iface = keep == FAKE_IFACE_UK_DUMP && !t628 ? FAKE_IFACE_IOCTL : keep;
			c.compat32 = c32;
		} else if (!strcmp(a, "iface")) {
			c.iface = !strcmp(b, "ioctl")	    ? FAKE_IFACE_IOCTL
				  : !strcmp(b, "uk-reader") ? FAKE_IFACE_UK_READER
				  : !strcmp(b, "t6xx")	    ? FAKE_IFACE_T6XX
							    : FAKE_IFACE_UK_DUMP;
		} else if (!strcmp(a, "compat32")) {
			c.compat32 = true;
		} else if (!strcmp(a, "path")) {
			snprintf(path, sizeof(path), "%s", b);
		} else if (!strcmp(a, "refuse")) {
			c.refuse_setup_errno = atoi(b);
		} else if (!strcmp(a, "missing")) {
			c.open_errno = ENOENT;
		} else if (!strcmp(a, "rate") && nr < 32) {
			unsigned blk = !strcmp(b, "jm")	     ? FAKE_JM
				       : !strcmp(b, "tiler") ? FAKE_TILER
				       : !strcmp(b, "l2")    ? FAKE_L2
							     : FAKE_SC;
			rates[nr++] = (struct act){
			    0, UINT64_MAX,   blk, strcmp(cc, "*") ? atoi(cc) : -1, (unsigned)atoi(d),
			    0, atof(e) / 1e9};
		}
	}
	fclose(f);
	if (path[0])
		c.path = path;
	c.real_clock = true;
	fake_kbase_reset(&c);
	uint64_t t0 = fake_kbase_now();
	for (size_t i = 0; i < nr; i++) {
		rates[i].t0 = t0;
		F.act[F.nact++] = rates[i];
	}
	return 0;
}
