/* Sampling back end "ring": one perf_event per CPU (and per existing thread
 * for -p, redirected into the CPU's ring with PERF_EVENT_IOC_SET_OUTPUT),
 * PERF_SAMPLE_IP|TID|TIME|PERIOD (+CALLCHAIN with -g), read from the mmap
 * ring buffers on watermark wakeups and aggregated in user space. Works on
 * any kernel with perf_event (Linux 3.4 on the Arndale). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "perf.h"
#include "proc_tasks.h"
#include "sampler_priv.h"

#define RING_PAGES 32    /* data pages per CPU (128 KiB with 4 KiB pages) */
#define HUP_BACKOFF_NS 50000000ull /* don't poll a ring that said POLLHUP for 50 ms */
#define RING_PAGES_CG 64 /* with call chains */
#define MAX_CPUS 1024

struct ring {
	int fd;          /* the fd that owns the mmap */
	uint8_t *base;   /* control page + data */
	size_t data_size;
	int *fds;        /* every fd writing into this ring (fds[0] == fd) */
	size_t nfds;
	uint64_t hup_until_ns; /* POLLHUP (around a command's exec, or after its exit): wait */
};

struct ring_state {
	struct ring *rings;
	size_t nrings;
	size_t page;
	uint8_t *tmp; /* a record that wraps around the end of the ring */
	size_t tmpcap;
};

/* Close a ring's fds (before it is mapped) and forget them. */
static void ring_drop_fds(struct ring *r)
{
	for (size_t j = 0; j < r->nfds; j++)
		close(r->fds[j]);
	free(r->fds);
	r->fds = NULL;
	r->nfds = 0;
}

static void ring_close(struct sampler *s)
{
	struct ring_state *rs = s->be;
	if (!rs)
		return;
	for (size_t i = 0; i < rs->nrings; i++) {
		struct ring *r = &rs->rings[i];
		if (r->base)
			munmap(r->base, rs->page + r->data_size);
		for (size_t j = 0; j < r->nfds; j++)
			close(r->fds[j]);
		free(r->fds);
	}
	free(rs->rings);
	free(rs->tmp);
	free(rs);
	s->be = NULL;
}

static int ring_open(struct sampler *s, char *err, size_t errlen)
{
	struct ring_state *rs = calloc(1, sizeof(*rs));
	if (!rs)
		return -ENOMEM;
	s->be = rs;
	rs->page = (size_t)sysconf(_SC_PAGESIZE);
	int cpus[MAX_CPUS];
	int ncpu = perf_online_cpus(cpus, MAX_CPUS);
	if (ncpu <= 0) {
		snprintf(err, errlen, "cannot list online CPUs");
		ring_close(s);
		return -ENOENT;
	}
	pid_t *tids = NULL;
	size_t ntids = 1;
	pid_t single = s->o.kind == PERF_TARGET_SYSTEM ? -1 : s->o.pid;
	if (s->o.kind == PERF_TARGET_PID) {
		int rc = proc_list_tids(s->o.pid, &tids, &ntids);
		if (rc < 0) {
			snprintf(err, errlen, "process %d not found (/proc/%d/task: %s)", (int)s->o.pid, (int)s->o.pid,
				 strerror(-rc));
			ring_close(s);
			return rc;
		}
	}
	rs->rings = calloc((size_t)ncpu, sizeof(*rs->rings));
	if (!rs->rings) {
		free(tids);
		ring_close(s);
		return -ENOMEM;
	}
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	if (s->o.callgraph)
		st |= PERF_SAMPLE_CALLCHAIN;
	struct perf_event_attr a;
	sampler_fill_attr(s, &a, st);
	a.inherit = s->o.kind != PERF_TARGET_SYSTEM;
	a.enable_on_exec = s->o.kind == PERF_TARGET_EXEC;
	a.watermark = 1;
	a.use_clockid = 1; /* the mapping watch's clock (pid reuse: a sample's time against a process's exit) */
	a.clockid = CLOCK_MONOTONIC;
	size_t pages = s->o.callgraph ? RING_PAGES_CG : RING_PAGES;
	a.wakeup_watermark = (uint32_t)(pages * rs->page / 2);
	/* kernel frames too, where the event may sample the kernel (the chain then holds both;
	 * after a user-only fallback below the kernel records no kernel frames anyway) */
	int rc = 0;
	for (int c = 0; c < ncpu && rc == 0; c++) {
		struct ring *r = &rs->rings[rs->nrings];
		r->fds = malloc(ntids * sizeof(int));
		if (!r->fds) {
			rc = -ENOMEM;
			break;
		}
		for (size_t t = 0; t < ntids; t++) {
			pid_t pid = tids ? tids[t] : single;
			long fd = perf_event_open_cloexec(&a, pid, cpus[c], -1, 0);
			if (fd < 0 && (errno == EINVAL || errno == E2BIG) && a.use_clockid) {
				a.use_clockid = 0; /* Linux < 4.1: the perf clock, as the watch's there */
				a.clockid = 0;
				fd = perf_event_open_cloexec(&a, pid, cpus[c], -1, 0);
			}
			if (fd < 0 && (errno == EACCES || errno == EPERM) && !a.exclude_kernel) {
				a.exclude_kernel = 1; /* paranoid level: user space only */
				fd = perf_event_open_cloexec(&a, pid, cpus[c], -1, 0);
			}
			if (fd < 0) {
				if (errno == ESRCH && tids && ntids > 1)
					continue; /* that thread just exited */
				rc = -errno;
				break;
			}
			if (r->nfds > 0 && ioctl((int)fd, PERF_EVENT_IOC_SET_OUTPUT, r->fds[0]) < 0) {
				rc = -errno;
				close((int)fd);
				break;
			}
			r->fds[r->nfds++] = (int)fd;
		}
		if (rc < 0 || r->nfds == 0) {
			if (rc == 0)
				rc = -ESRCH;
			ring_drop_fds(r);
			break;
		}
		r->fd = r->fds[0];
		r->data_size = pages * rs->page;
		void *m = mmap(NULL, rs->page + r->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			rc = -errno;
			ring_drop_fds(r);
			break;
		}
		r->base = m;
		rs->nrings++;
	}
	free(tids);
	s->ring_mono = a.use_clockid;
	if (rc < 0) {
		perf_open_error(rc, s->o.pid, "perf ring back end", err, errlen);
		ring_close(s);
		return rc;
	}
	if (s->o.kind != PERF_TARGET_EXEC) {
		for (size_t i = 0; i < rs->nrings; i++)
			for (size_t j = 0; j < rs->rings[i].nfds; j++)
				ioctl(rs->rings[i].fds[j], PERF_EVENT_IOC_ENABLE, 0);
	}
	log_debug("ring back end: %zu CPU ring(s) of %zu KiB", rs->nrings, pages * rs->page / 1024);
	return 0;
}

/* One pollfd per ring, always (fd -1 while backing off after POLLHUP, which
 * the kernel reports for a task event around exec and after the task's exit:
 * polling it then would spin). */
static int ring_fds(struct sampler *s, struct pollfd *pfd, int max, uint64_t now_ns, int *timeout_ms)
{
	struct ring_state *rs = s->be;
	int n = 0;
	for (size_t i = 0; i < rs->nrings && n < max; i++) {
		struct ring *r = &rs->rings[i];
		pfd[n].fd = r->hup_until_ns > now_ns ? -1 : r->fd;
		pfd[n].events = POLLIN;
		if (r->hup_until_ns > now_ns) {
			int ms = (int)((r->hup_until_ns - now_ns + 999999) / 1000000);
			if (*timeout_ms < 0 || ms < *timeout_ms)
				*timeout_ms = ms;
		}
		n++;
	}
	return n;
}

static void ring_revents(struct sampler *s, const struct pollfd *pfd, int n, uint64_t now_ns)
{
	struct ring_state *rs = s->be;
	for (int i = 0; i < n && (size_t)i < rs->nrings; i++)
		if (pfd[i].revents & (POLLHUP | POLLERR | POLLNVAL))
			rs->rings[i].hup_until_ns = now_ns + HUP_BACKOFF_NS;
}

/* The part of a callchain after the context marker ctx (PERF_CONTEXT_USER or _KERNEL), up to the next marker. */
static size_t chain_part(const uint64_t *ips, uint64_t nr, uint64_t ctx, uint64_t *out, size_t max)
{
	bool in = false;
	size_t n = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t v = ips[i];
		if (v >= (uint64_t)PERF_CONTEXT_MAX) {
			in = v == ctx;
			continue;
		}
		if (in && n < max)
			out[n++] = v;
	}
	return n;
}

/* [kernel frames, SAMPLE_CHAIN_USER_MARK,] user frames (sample_agg.h). */
static size_t full_chain(const uint64_t *ips, uint64_t nr, uint64_t *out, size_t max)
{
	size_t nk = chain_part(ips, nr, (uint64_t)PERF_CONTEXT_KERNEL, out, SAMPLE_KSTACK_MAX_DEPTH);
	if (nk)
		out[nk++] = SAMPLE_CHAIN_USER_MARK;
	return nk + chain_part(ips, nr, (uint64_t)PERF_CONTEXT_USER, out + nk, max - nk);
}

static void handle_sample(struct sampler *s, const struct perf_event_header *h, const uint8_t *p, uint64_t now)
{
	const uint8_t *end = (const uint8_t *)h + h->size;
	uint64_t ip, t;
	uint32_t pt[2];
	if (end - p < 32)
		return;
	memcpy(&ip, p, 8);
	memcpy(pt, p + 8, 8);
	memcpy(&t, p + 16, 8);
	p += 32; /* ip, pid/tid, time, period */
	struct sample_key k = {.pid = (int32_t)pt[0], .tid = (int32_t)pt[1]};
	/* which of the pid's processes: the sample's time against the previous one's exit (pid reuse),
	 * both on the watch's clock */
	k.inc = sampler_inc_of(s, k.pid, s->mw && s->ring_mono == mmap_watch_monotonic(s->mw) ? t : 0);
	uint16_t mode = h->misc & PERF_RECORD_MISC_CPUMODE_MASK;
	if (mode == PERF_RECORD_MISC_KERNEL || mode == PERF_RECORD_MISC_GUEST_KERNEL)
		k.kip = ip;
	else
		k.ip = ip;
	if (s->o.callgraph && end - p >= 8) {
		uint64_t nr;
		memcpy(&nr, p, 8);
		p += 8;
		if (nr <= (uint64_t)(end - p) / 8) {
			uint64_t chain[SAMPLE_STACK_MAX_DEPTH + 8];
			uint64_t raw[SAMPLE_STACK_MAX_DEPTH + 8];
			size_t take = nr < sizeof(raw) / 8 ? (size_t)nr : sizeof(raw) / 8;
			memcpy(raw, p, take * 8);
			size_t n = full_chain(raw, take, chain, SAMPLE_STACK_MAX_DEPTH);
			k.stack_id = stack_table_intern(&s->stacks, chain, n);
		}
	}
	sampler_add(s, &k, 1, now);
}

static int drain_ring(struct sampler *s, struct ring_state *rs, struct ring *r, uint64_t now)
{
	struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)r->base;
	uint8_t *data = r->base + rs->page;
	uint64_t head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = mp->data_tail;
	size_t mask = r->data_size - 1;
	int rc = 0;
	while (tail < head) {
		struct perf_event_header hdr;
		size_t off = (size_t)(tail & mask);
		memcpy(&hdr, data + off, sizeof(hdr)); /* 8-byte aligned: never wraps */
		if (hdr.size < sizeof(hdr) || hdr.size > head - tail) {
			rc = -EIO; /* corrupt: skip everything pending */
			tail = head;
			break;
		}
		const uint8_t *rec = data + off;
		if (off + hdr.size > r->data_size) {
			if (rs->tmpcap < hdr.size) {
				uint8_t *nt = realloc(rs->tmp, hdr.size);
				if (!nt) {
					tail += hdr.size;
					continue;
				}
				rs->tmp = nt;
				rs->tmpcap = hdr.size;
			}
			size_t first = r->data_size - off;
			memcpy(rs->tmp, data + off, first);
			memcpy(rs->tmp + first, data, hdr.size - first);
			rec = rs->tmp;
		}
		const struct perf_event_header *h = (const struct perf_event_header *)rec;
		if (h->type == PERF_RECORD_SAMPLE) {
			handle_sample(s, h, rec + sizeof(*h), now);
		} else if (h->type == PERF_RECORD_LOST && h->size >= sizeof(*h) + 16) {
			uint64_t lost;
			memcpy(&lost, rec + sizeof(*h) + 8, 8);
			s->lost += lost;
		}
		tail += hdr.size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return rc;
}

static int ring_drain(struct sampler *s, uint64_t now)
{
	struct ring_state *rs = s->be;
	int rc = 0;
	for (size_t i = 0; i < rs->nrings; i++) {
		int r = drain_ring(s, rs, &rs->rings[i], now);
		if (r < 0)
			rc = r;
	}
	return rc;
}

const struct sampler_ops sampler_ring_ops = {
	.id = SAMPLER_RING,
	.open = ring_open,
	.fds = ring_fds,
	.revents = ring_revents,
	.drain = ring_drain,
	.close = ring_close,
};
