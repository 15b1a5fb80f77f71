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

#include "gpu/kbase_abi.h"
#include "gpu/kbase_dev.h"

#define MAX_ACT 256
#define NBUF 16
#define MAX_WORDS (64 * 64)

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
	uint64_t now;
	struct act act[MAX_ACT];
	size_t nact;
	int dev_fd, reader_fd;
	bool ioctl_ok; /* the ioctl interface answered VERSION_CHECK */
	/* reader */
	uint8_t *ring;
	size_t ring_len;
	uint32_t buf_bytes;
	uint32_t interval_ns;
	uint64_t last_dump, next_dump;
	struct kbase_hwcnt_reader_metadata ready[NBUF];
	unsigned nready, head; /* queue of filled buffers */
	bool busy[NBUF];
	bool hold;
	/* UK dump buffer */
	uint8_t *dumpbuf;
	size_t dumpbuf_len;
	uint64_t gpu_va;
	uint64_t clear_time;
	bool setup;
	uint64_t open_time;
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

void fake_kbase_cfg_t628mp6(struct fake_kbase_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->iface = FAKE_IFACE_UK_DUMP;
	c->path = "/dev/mali0";
	c->gpu_id = 0x06201000; /* T62x r1p0 */
	c->shader_present = 0x3f;
	c->num_l2 = 1;
	c->ngroups = 2;
	c->group_mask[0] = 0x0f;
	c->group_mask[1] = 0x30;
	c->l2_features = 0x07120206; /* bus width 2^7 = 128 bits */
	c->hw_version = 4;
}

void fake_kbase_cfg_g71mp8(struct fake_kbase_cfg *c)
{
	memset(c, 0, sizeof(*c));
	c->iface = FAKE_IFACE_IOCTL;
	c->path = "/dev/mali0";
	c->gpu_id = 0x60000010; /* tMIx r0p1 */
	c->shader_present = 0xff;
	c->num_l2 = 2;
	c->ngroups = 1;
	c->group_mask[0] = 0xff;
	c->l2_features = 0x07130206;
	c->hw_version = 5;
}

void fake_kbase_reset(const struct fake_kbase_cfg *c)
{
	if (F.ring)
		free(F.ring);
	if (F.dumpbuf)
		free(F.dumpbuf);
	if (F.dev_fd >= 0)
		close(F.dev_fd);
	if (F.reader_fd >= 0)
		close(F.reader_fd);
	memset(&F, 0, sizeof(F));
	F.cfg = *c;
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

/* ---- the counter model: cumulative value of a counter at time t */
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

/* Block placement, per the driver sources (independent of agent/gpu/mali_gpu.c). */
static size_t nblocks_total(void)
{
	if (F.cfg.hw_version == 4)
		return (size_t)F.cfg.ngroups * 8;
	return 2 + F.cfg.num_l2 + (size_t)(64 - __builtin_clzll(F.cfg.shader_present));
}

/* Fill buf with the counters' values as (cumulative(t) - cumulative(t_prev)),
 * or cumulative since clear when t_prev == UINT64_MAX (mod 2^32). */
static void fill(uint32_t *buf, uint64_t t_prev, uint64_t t)
{
	size_t nb = nblocks_total();
	memset(buf, 0, nb * 256);
	for (size_t b = 0; b < nb; b++) {
		unsigned type, inst;
		bool present = true;
		if (F.cfg.hw_version == 4) {
			unsigned g = (unsigned)(b / 8), slot = (unsigned)(b % 8);
			if (slot < 4) {
				/* slot-th set bit of the group's mask */
				uint64_t m = F.cfg.group_mask[g];
				int core = -1;
				for (unsigned k = 0, seen = 0; k < 64; k++)
					if (m >> k & 1) {
						if (seen++ == slot) {
							core = (int)k;
							break;
						}
					}
				if (core < 0)
					present = false;
				type = FAKE_SC;
				inst = core < 0 ? 0 : (unsigned)core;
			} else if (slot == 4) {
				type = FAKE_TILER, inst = 0, present = g == 0;
			} else if (slot == 5) {
				type = FAKE_L2, inst = g;
			} else if (slot == 7) {
				type = FAKE_JM, inst = 0, present = g == 0;
			} else {
				present = false, type = 0, inst = 0;
			}
		} else {
			if (b == 0)
				type = FAKE_JM, inst = 0;
			else if (b == 1)
				type = FAKE_TILER, inst = 0;
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
			double prev = t_prev == UINT64_MAX
					  ? floor(cumulative(type, inst, w, F.clear_time) + 1e-6)
					  : floor(cumulative(type, inst, w, t_prev) + 1e-6);
			uint64_t d = (uint64_t)(cur - prev);
			blk[w] = (uint32_t)d;
		}
	}
}

/* Periodic dumps up to now: into free ring buffers, with their timestamps. */
static void produce(void)
{
	if (!F.setup || !F.ring || F.interval_ns == 0)
		return;
	uint64_t now = fake_kbase_now();
	while (F.next_dump && F.next_dump <= now) {
		unsigned idx = NBUF;
		for (unsigned i = 0; i < NBUF; i++)
			if (!F.busy[i]) {
				idx = i;
				break;
			}
		if (idx == NBUF) { /* ring full: the driver drops the dump, counts carry to the next */
			F.st.dropped++;
			F.next_dump += F.interval_ns;
			continue;
		}
		fill((uint32_t *)(F.ring + (size_t)idx * F.buf_bytes), F.last_dump, F.next_dump);
		F.busy[idx] = true;
		F.ready[(F.head + F.nready) % NBUF] =
		    (struct kbase_hwcnt_reader_metadata){F.next_dump, 1, idx};
		F.nready++;
		F.st.dumps++;
		F.last_dump = F.next_dump;
		F.next_dump += F.interval_ns;
	}
}

static int manual_dump(void)
{
	uint64_t now = fake_kbase_now();
	if (now <= F.last_dump)
		return 0;
	uint32_t saved = F.interval_ns;
	uint64_t saved_next = F.next_dump;
	F.next_dump = now;
	F.interval_ns = 1;
	produce();
	F.interval_ns = saved;
	F.next_dump = saved_next > now ? saved_next : now + saved;
	return 0;
}

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
	if (F.dev_fd >= 0) {
		errno = EBUSY;
		return -1;
	}
	F.dev_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	F.st.opens++;
	F.open_time = fake_kbase_now();
	F.ioctl_ok = false;
	return F.dev_fd;
}

static void put_prop(uint8_t *b, size_t *n, uint32_t key, unsigned szcode, uint64_t v)
{
	uint32_t k = key << 2 | szcode;
	if (b) {
		memcpy(b + *n, &k, 4);
		memcpy(b + *n + 4, &v, (size_t)1 << szcode);
	}
	*n += 4 + ((size_t)1 << szcode);
}

static size_t props(uint8_t *b)
{
	size_t n = 0;
	put_prop(b, &n, KBASE_GPUPROP_PRODUCT_ID, 2, F.cfg.gpu_id >> 16);
	put_prop(b, &n, KBASE_GPUPROP_RAW_GPU_ID, 2, F.cfg.gpu_id);
	put_prop(b, &n, KBASE_GPUPROP_RAW_SHADER_PRESENT, 3, F.cfg.shader_present);
	put_prop(b, &n, KBASE_GPUPROP_L2_NUM_L2_SLICES, 0, F.cfg.num_l2);
	put_prop(b, &n, KBASE_GPUPROP_RAW_L2_FEATURES, 2, F.cfg.l2_features);
	put_prop(b, &n, KBASE_GPUPROP_COHERENCY_NUM_CORE_GROUPS, 2, F.cfg.ngroups);
	for (unsigned g = 0; g < F.cfg.ngroups; g++)
		put_prop(b, &n, KBASE_GPUPROP_COHERENCY_GROUP_0 + g, 3, F.cfg.group_mask[g]);
	return n;
}

static int make_reader(void)
{
	if (F.cfg.refuse_setup_errno)
		return -F.cfg.refuse_setup_errno;
	if (F.reader_fd >= 0)
		return -EBUSY;
	F.reader_fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC | TFD_NONBLOCK);
	F.buf_bytes = (uint32_t)(nblocks_total() * 256);
	F.ring_len = (size_t)NBUF * F.buf_bytes;
	F.setup = true;
	F.last_dump = fake_kbase_now();
	F.st.setups++;
	return F.reader_fd;
}

static int reader_ioctl(unsigned long req, void *arg)
{
	produce();
	switch (req) {
	case KBASE_HWCNT_READER_GET_API_VERSION:
		*(uint32_t *)arg = KBASE_HWCNT_READER_API;
		return 0;
	case KBASE_HWCNT_READER_GET_HWVER:
		*(uint32_t *)arg = F.cfg.hw_version;
		return 0;
	case KBASE_HWCNT_READER_GET_BUFFER_SIZE:
		*(uint32_t *)arg = F.buf_bytes;
		return 0;
	case KBASE_HWCNT_READER_SET_INTERVAL: {
		uint32_t iv = *(uint32_t *)arg;
		F.interval_ns = iv;
		F.next_dump = iv ? F.last_dump + iv : 0;
		if (F.cfg.real_clock && iv) {
			struct itimerspec its = {{0, iv}, {0, iv}};
			its.it_interval.tv_sec = its.it_value.tv_sec = iv / 1000000000u;
			its.it_interval.tv_nsec = its.it_value.tv_nsec = iv % 1000000000u;
			timerfd_settime(F.reader_fd, 0, &its, NULL);
		}
		return 0;
	}
	case KBASE_HWCNT_READER_DUMP:
		return manual_dump();
	case KBASE_HWCNT_READER_CLEAR:
		F.last_dump = fake_kbase_now();
		return 0;
	case KBASE_HWCNT_READER_GET_BUFFER:
		if (F.nready == 0 || F.hold) {
			uint64_t junk;
			if (F.cfg.real_clock)
				while (read(F.reader_fd, &junk, sizeof(junk)) > 0) {
				}
			return -EAGAIN;
		}
		*(struct kbase_hwcnt_reader_metadata *)arg = F.ready[F.head];
		F.head = (F.head + 1) % NBUF;
		F.nready--;
		F.st.gets++;
		return 0;
	case KBASE_HWCNT_READER_PUT_BUFFER: {
		const struct kbase_hwcnt_reader_metadata *m = arg;
		if (m->buffer_idx >= NBUF || !F.busy[m->buffer_idx])
			return -EINVAL;
		F.busy[m->buffer_idx] = false;
		F.st.puts++;
		return 0;
	}
	default:
		return -ENOTTY;
	}
}

static int uk_ioctl(unsigned long req, void *arg)
{
	size_t size = (req >> 16) & 0x3fff;
	union kbase_uk_header *h = arg;
	if (size < sizeof(*h) || (req >> 30) != 3)
		return -EINVAL;
	uint32_t id = h->id;
	uint32_t ret = 0;
	switch (id) {
	case UKP_FUNC_ID_CHECK_VERSION: {
		struct kbase_uk_version_check *v = arg;
		v->major = 10, v->minor = 4;
		break;
	}
	case KBASE_FUNC_SET_FLAGS:
		break;
	case KBASE_FUNC_GPU_PROPS_REG_DUMP: {
		if (size != sizeof(struct kbase_uk_gpuprops))
			return -EINVAL;
		struct kbase_uk_gpuprops *p = arg;
		memset((char *)p + sizeof(*h), 0, sizeof(*p) - sizeof(*h));
		p->product_id = F.cfg.gpu_id >> 16;
		p->gpu_id = F.cfg.gpu_id;
		p->shader_present = F.cfg.shader_present;
		p->l2_present = (1ull << F.cfg.num_l2) - 1;
		p->num_l2_slices = (uint8_t)F.cfg.num_l2;
		p->l2_features = F.cfg.l2_features;
		p->num_groups = p->num_core_groups = F.cfg.ngroups;
		for (unsigned g = 0; g < F.cfg.ngroups; g++) {
			p->group[g].core_mask = F.cfg.group_mask[g];
			p->group[g].num_cores = (uint16_t)__builtin_popcountll(F.cfg.group_mask[g]);
		}
		break;
	}
	case KBASE_FUNC_HWCNT_READER_SETUP: {
		struct kbase_uk_hwcnt_reader_setup *s = arg;
		if (F.cfg.iface != FAKE_IFACE_UK_READER) { /* a driver before vinstr: no such function */
			ret = 3;
			break;
		}
		int fd = make_reader();
		if (fd < 0)
			ret = 3;
		s->fd = fd;
		break;
	}
	case KBASE_FUNC_MEM_ALLOC: {
		struct kbase_uk_mem_alloc *a = arg;
		F.gpu_va = 0x41000000ull;
		a->gpu_va = F.gpu_va;
		break;
	}
	case KBASE_FUNC_HWCNT_SETUP: {
		struct kbase_uk_hwcnt_setup *s = arg;
		if (F.cfg.refuse_setup_errno || s->dump_buffer != F.gpu_va || !F.dumpbuf)
			ret = 3;
		else
			F.setup = true, F.st.setups++;
		break;
	}
	case KBASE_FUNC_HWCNT_CLEAR:
		F.clear_time = fake_kbase_now();
		F.st.clears++;
		break;
	case KBASE_FUNC_HWCNT_DUMP:
		if (!F.setup) {
			ret = 3;
			break;
		}
		fill((uint32_t *)F.dumpbuf, UINT64_MAX, fake_kbase_now());
		F.st.dumps++;
		break;
	default:
		return -EINVAL;
	}
	h->ret = ret;
	return 0;
}

int fake_kbase_ioctl(int fd, unsigned long req, void *arg)
{
	int rc;
	if (fd == F.reader_fd && fd >= 0)
		rc = reader_ioctl(req, arg);
	else if (fd != F.dev_fd || fd < 0)
		rc = -EBADF;
	else if (req == KBASE_IOCTL_VERSION_CHECK && F.cfg.iface == FAKE_IFACE_IOCTL) {
		struct kbase_ioctl_version_check *v = arg;
		v->major = 11, v->minor = 13;
		F.ioctl_ok = true;
		rc = 0;
	} else if (F.cfg.iface == FAKE_IFACE_IOCTL) {
		if (!F.ioctl_ok)
			rc = -EPERM;
		else if (req == KBASE_IOCTL_SET_FLAGS)
			rc = 0;
		else if (req == KBASE_IOCTL_GET_GPUPROPS) {
			struct kbase_ioctl_get_gpuprops *g = arg;
			size_t need = props(NULL);
			if (g->size == 0)
				rc = (int)need;
			else if (g->size < need)
				rc = -EINVAL;
			else
				rc = (int)props((uint8_t *)(uintptr_t)g->buffer);
		} else if (req == KBASE_IOCTL_HWCNT_READER_SETUP)
			rc = make_reader();
		else
			rc = -ENOTTY;
	} else
		rc = uk_ioctl(req, arg); /* a UK driver reads any 0x80 call as a UK call */
	if (rc < 0) {
		errno = -rc;
		return -1;
	}
	return rc;
}

void *fake_kbase_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	(void)addr, (void)prot, (void)flags;
	if (fd == F.reader_fd && fd >= 0 && off == 0 && len == F.ring_len && !F.ring) {
		F.ring = calloc(1, len);
		return F.ring ? (void *)F.ring : MAP_FAILED;
	}
	if (fd == F.dev_fd && fd >= 0 && F.gpu_va && (uint64_t)off == F.gpu_va && !F.dumpbuf &&
	    len >= nblocks_total() * 256) {
		F.dumpbuf = calloc(1, len);
		F.dumpbuf_len = len;
		return F.dumpbuf ? (void *)F.dumpbuf : MAP_FAILED;
	}
	errno = EINVAL;
	return MAP_FAILED;
}

static int fake_munmap(void *addr, size_t len)
{
	(void)len;
	if (addr && addr == F.ring) {
		free(F.ring);
		F.ring = NULL;
		return 0;
	}
	if (addr && addr == F.dumpbuf) {
		free(F.dumpbuf);
		F.dumpbuf = NULL;
		return 0;
	}
	return munmap(addr, len);
}

int fake_kbase_close(int fd)
{
	if (fd == F.reader_fd && fd >= 0) {
		F.reader_fd = -1;
		F.setup = false;
		F.nready = 0;
		memset(F.busy, 0, sizeof(F.busy));
	} else if (fd == F.dev_fd && fd >= 0) {
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

const struct kbase_sys fake_kbase_sys = {sys_open, sys_ioctl,	     fake_kbase_mmap, fake_munmap,
					 sys_poll, fake_kbase_close, fake_mono,	      fake_kbase_now};

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
			bool t628 = !strcmp(b, "t628mp6");
			if (t628)
				fake_kbase_cfg_t628mp6(&c);
			else
				fake_kbase_cfg_g71mp8(&c);
			c.iface = keep == FAKE_IFACE_UK_DUMP && !t628 ? FAKE_IFACE_IOCTL : keep;
		} else if (!strcmp(a, "iface")) {
			c.iface = !strcmp(b, "ioctl")	    ? FAKE_IFACE_IOCTL
				  : !strcmp(b, "uk-reader") ? FAKE_IFACE_UK_READER
							    : FAKE_IFACE_UK_DUMP;
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
