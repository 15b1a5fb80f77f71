/* Mapping records from a dummy perf event per CPU (mmap_watch.h). */
#include "mmap_watch.h"

#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "log.h"

#define WATCH_PAGES 32 /* data pages per CPU (128 KiB with 4 KiB pages: a burst of thousands of execs) */
#define WATCH_MAX_CPUS 1024

struct wring {
	int fd;
	uint8_t *base;
	bool hup; /* POLLHUP (the target exited): drained on the sampler's timer only */
	uint64_t head, tail; /* while draining */
};

struct mmap_watch {
	struct wring *r;
	size_t n;
	size_t polled[WATCH_MAX_CPUS]; /* ring of each pollfd handed out */
	size_t npolled;
	size_t page, data_size;
	uint64_t seen;
	uint64_t lost; /* records the kernel could not write (PERF_RECORD_LOST) */
	bool timed;    /* records end with their time (sample_id_all) */
	bool mono;     /* ... on CLOCK_MONOTONIC (use_clockid, Linux 4.1): the BPF back end's process start times */
	struct task_names *names; /* COMM records go here (NULL: dropped) */
	uint8_t tmp[4096 + 256]; /* a record that wraps around the ring's end */
};

void mmap_watch_close(struct mmap_watch *w)
{
	if (!w)
		return;
	for (size_t i = 0; i < w->n; i++) {
		if (w->r[i].base)
			munmap(w->r[i].base, w->page + w->data_size);
		close(w->r[i].fd);
	}
	free(w->r);
	free(w);
}

int mmap_watch_open(struct mmap_watch **out, enum perf_target_kind kind, pid_t pid, char *err, size_t errlen)
{
	*out = NULL;
	struct mmap_watch *w = calloc(1, sizeof(*w));
	int cpus[WATCH_MAX_CPUS];
	int ncpu = perf_online_cpus(cpus, WATCH_MAX_CPUS);
	if (!w || ncpu <= 0 || !(w->r = calloc((size_t)ncpu, sizeof(*w->r)))) {
		snprintf(err, errlen, "mmap watch: %s", ncpu <= 0 ? "cannot list online CPUs" : "out of memory");
		mmap_watch_close(w);
		return ncpu <= 0 ? -ENOENT : -ENOMEM;
	}
	w->page = (size_t)sysconf(_SC_PAGESIZE);
	w->data_size = WATCH_PAGES * w->page;
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_DUMMY;
	a.sample_period = 1;
	a.mmap = 1;
	a.mmap2 = 1;
	a.comm = 1; /* COMM records: a program's name at its exec, a thread's at prctl(PR_SET_NAME) */
	a.comm_exec = 1; /* ... marked PERF_RECORD_MISC_COMM_EXEC at exec (Linux 3.16) */
	a.task = 1; /* FORK and EXIT records: names inherited at fork, what exited is evicted */
	/* every record ends with its time (sample_id_all, Linux 2.6.38): the rings are read
	 * in time order, as perf orders them (a task's exec on one CPU and its next exec, or
	 * its children's forks, on others) */
	a.sample_id_all = 1;
	a.sample_type = PERF_SAMPLE_TIME;
	a.exclude_kernel = 1;
	a.inherit = kind != PERF_TARGET_SYSTEM;
	a.enable_on_exec = kind == PERF_TARGET_EXEC;
	a.disabled = kind == PERF_TARGET_EXEC;
	a.watermark = 1;
	a.wakeup_watermark = (uint32_t)(w->data_size / 2);
	/* times on CLOCK_MONOTONIC, the clock of a task's start_time (the BPF back end's samples tell a
	 * pid's processes apart by it: pid reuse, w44a) */
	a.use_clockid = 1;
	a.clockid = CLOCK_MONOTONIC;
	pid_t target = kind == PERF_TARGET_SYSTEM ? -1 : pid;
	int rc = 0;
	for (int c = 0; c < ncpu; c++) {
		long fd = perf_event_open_cloexec(&a, target, cpus[c], -1, 0);
		if (fd < 0 && (errno == EINVAL || errno == E2BIG) && a.use_clockid) {
			a.use_clockid = 0; /* Linux < 4.1: the perf clock */
			a.clockid = 0;
			fd = perf_event_open_cloexec(&a, target, cpus[c], -1, 0);
		}
		if (fd < 0 && errno == EINVAL && a.mmap2) {
			a.mmap2 = 0; /* Linux < 3.16: MMAP records, no comm_exec bit */
			a.comm_exec = 0;
			fd = perf_event_open_cloexec(&a, target, cpus[c], -1, 0);
		}
		if (fd < 0 && errno == EINVAL && a.sample_id_all) {
			a.sample_id_all = 0; /* a kernel that refuses it: the rings one after the other */
			a.sample_type = 0;
			fd = perf_event_open_cloexec(&a, target, cpus[c], -1, 0);
		}
		if (fd < 0 && errno == ENOENT && a.config == PERF_COUNT_SW_DUMMY) {
			/* Linux < 3.12 (the Arndale's 3.4) has no dummy event: a counting (never
			 * sampling) context-switches event carries the MMAP records instead */
			a.config = PERF_COUNT_SW_CONTEXT_SWITCHES;
			a.sample_period = 0;
			log_info("mmap watch: no dummy event (PERF_COUNT_SW_DUMMY is Linux 3.12): "
				 "watching mappings through a counting context-switches event");
			fd = perf_event_open_cloexec(&a, target, cpus[c], -1, 0);
		}
		if (fd < 0) {
			rc = -errno;
			break;
		}
		struct wring *r = &w->r[w->n++];
		r->fd = (int)fd;
		void *m = mmap(NULL, w->page + w->data_size, PROT_READ | PROT_WRITE, MAP_SHARED, r->fd, 0);
		if (m == MAP_FAILED) {
			rc = -errno;
			break;
		}
		r->base = m;
	}
	w->timed = a.sample_id_all;
	w->mono = a.use_clockid && a.sample_id_all;
	if (rc < 0) {
		snprintf(err, errlen, "mmap watch: perf_event_open/mmap of a dummy event: %s", strerror(-rc));
		mmap_watch_close(w);
		return rc;
	}
	*out = w;
	return 0;
}

int mmap_watch_fds(struct mmap_watch *w, struct pollfd *pfd, int max)
{
	int n = 0;
	w->npolled = 0;
	for (size_t i = 0; i < w->n && n < max; i++) {
		if (w->r[i].hup)
			continue;
		pfd[n++] = (struct pollfd){.fd = w->r[i].fd, .events = POLLIN};
		w->polled[w->npolled++] = i;
	}
	return n;
}

void mmap_watch_revents(struct mmap_watch *w, const struct pollfd *pfd, int n)
{
	for (int i = 0; i < n && (size_t)i < w->npolled; i++)
		if (pfd[i].revents & (POLLHUP | POLLERR))
			w->r[w->polled[i]].hup = true;
}

/* One MMAP or MMAP2 record body (after the header). */
static int handle(struct mmap_watch *w, struct proc_maps *pm, uint32_t type, const uint8_t *p, size_t len)
{
	uint32_t pid, tid;
	uint64_t addr, mlen, pgoff;
	size_t off = type == PERF_RECORD_MMAP2 ? 8 + 3 * 8 + 4 + 4 + 8 + 8 + 4 + 4 : 8 + 3 * 8;
	if (len < off + 1)
		return 0;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	memcpy(&addr, p + 8, 8);
	memcpy(&mlen, p + 16, 8);
	memcpy(&pgoff, p + 24, 8);
	if (type == PERF_RECORD_MMAP2) {
		uint32_t prot;
		memcpy(&prot, p + off - 8, 4);
		if (!(prot & 0x4 /* PROT_EXEC */))
			return 0;
	}
	char path[4096];
	size_t plen = strnlen((const char *)p + off, len - off);
	if (plen == 0 || plen >= sizeof(path))
		return 0;
	memcpy(path, p + off, plen);
	path[plen] = '\0';
	w->seen++;
	if (path[0] != '/' && strcmp(path, "[vdso]") != 0)
		return 0; /* anonymous JIT code: nothing to symbolize with */
	int rc = proc_maps_add(pm, (pid_t)pid, addr, addr + mlen, pgoff, path);
	if (rc > 0)
		log_debug("mapping of pid %u: %s at 0x%llx", pid, path, (unsigned long long)addr);
	return rc < 0 ? 0 : rc;
}

/* One COMM record body: u32 pid, tid; char comm[] (the kernel's perf_event_comm_output). */
static void handle_comm(struct task_names *tn, const uint8_t *p, size_t len)
{
	uint32_t pid, tid;
	if (!tn || len < 9)
		return;
	memcpy(&pid, p, 4);
	memcpy(&tid, p + 4, 4);
	char comm[TASK_NAME_LEN];
	size_t n = strnlen((const char *)p + 8, len - 8);
	if (n >= sizeof(comm))
		n = sizeof(comm) - 1;
	memcpy(comm, p + 8, n);
	comm[n] = 0;
	task_names_set(tn, (int32_t)pid, (int32_t)tid, comm);
}

/* One FORK or EXIT record body: u32 pid, ppid, tid, ptid; u64 time (the
 * kernel's perf_event_task_output, kernel/events/core.c). */
static void handle_task(struct task_names *tn, struct proc_maps *pm, uint32_t type, const uint8_t *p, size_t len)
{
	uint32_t pid, ppid, tid, ptid;
	uint64_t t;
	if (len < 24)
		return;
	memcpy(&pid, p, 4);
	memcpy(&ppid, p + 4, 4);
	memcpy(&tid, p + 8, 4);
	memcpy(&ptid, p + 12, 4);
	memcpy(&t, p + 16, 8);
	if (type == PERF_RECORD_FORK) {
		if (tn)
			tn->next_map_id = pm->next_id + 1; /* a new process's mappings: ids from here (next_id: the last given) */
		if (tn)
			task_names_fork(tn, (int32_t)pid, (int32_t)tid, (int32_t)ppid, (int32_t)ptid, t);
		if (pid == tid)
			proc_maps_fork(pm, (pid_t)pid, (pid_t)ppid, t);
	} else {
		if (tn)
			task_names_exit(tn, (int32_t)pid, (int32_t)tid, t);
		if (pid == tid)
			proc_maps_exit(pm, (pid_t)pid, t);
	}
}

void mmap_watch_set_names(struct mmap_watch *w, struct task_names *tn)
{
	if (w)
		w->names = tn;
}

/* The time of ring r's next record (its sample_id's last u64; records are 8-byte
 * aligned, so it never wraps), or false when the ring has none pending. */
static bool next_time(struct mmap_watch *w, struct wring *r, uint64_t *t)
{
	size_t mask = w->data_size - 1;
	const uint8_t *data = r->base + w->page;
	if (r->tail >= r->head)
		return false;
	struct perf_event_header h;
	memcpy(&h, data + (r->tail & mask), sizeof(h));
	if (h.size < sizeof(h) + (w->timed ? 8 : 0) || h.size > r->head - r->tail) {
		r->tail = r->head; /* corrupt: skip what is pending */
		return false;
	}
	*t = 0; /* untimed: one ring after the other */
	if (w->timed)
		memcpy(t, data + ((r->tail + h.size - 8) & mask), 8);
	return true;
}

/* Ring r's next record, then past it. Returns mappings added. */
static int take(struct mmap_watch *w, struct wring *r, struct proc_maps *pm)
{
	size_t mask = w->data_size - 1;
	uint8_t *data = r->base + w->page;
	struct perf_event_header h;
	size_t off = (size_t)(r->tail & mask);
	memcpy(&h, data + off, sizeof(h));
	r->tail += h.size;
	const uint8_t *rec = data + off;
	if (off + h.size > w->data_size) {
		if (h.size > sizeof(w->tmp))
			return 0;
		size_t first = w->data_size - off;
		memcpy(w->tmp, data + off, first);
		memcpy(w->tmp + first, data, h.size - first);
		rec = w->tmp;
	}
	int added = 0;
	if (h.type == PERF_RECORD_MMAP2 || h.type == PERF_RECORD_MMAP)
		added = handle(w, pm, h.type, rec + sizeof(h), h.size - sizeof(h));
	else if (h.type == PERF_RECORD_COMM)
		handle_comm(w->names, rec + sizeof(h), h.size - sizeof(h));
	else if (h.type == PERF_RECORD_FORK || h.type == PERF_RECORD_EXIT)
		handle_task(w->names, pm, h.type, rec + sizeof(h), h.size - sizeof(h));
	else if (h.type == PERF_RECORD_LOST && h.size >= sizeof(h) + 16) {
		uint64_t n; /* u64 id, lost (perf_event_lost) */
		memcpy(&n, rec + sizeof(h) + 8, 8);
		w->lost += n;
	}
	return added;
}

int mmap_watch_drain(struct mmap_watch *w, struct proc_maps *pm)
{
	int added = 0;
	for (size_t i = 0; i < w->n; i++) {
		struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)w->r[i].base;
		w->r[i].head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE);
		w->r[i].tail = mp->data_tail;
	}
	/* what is pending in every ring, oldest first (each ring is in time order: a merge) */
	for (;;) {
		struct wring *first = NULL;
		uint64_t tmin = 0, t;
		for (size_t i = 0; i < w->n; i++)
			if (next_time(w, &w->r[i], &t) && (!first || t < tmin)) {
				first = &w->r[i];
				tmin = t;
			}
		if (!first)
			break;
		added += take(w, first, pm);
	}
	for (size_t i = 0; i < w->n; i++) {
		struct perf_event_mmap_page *mp = (struct perf_event_mmap_page *)w->r[i].base;
		__atomic_store_n(&mp->data_tail, w->r[i].tail, __ATOMIC_RELEASE);
	}
	return added;
}

bool mmap_watch_monotonic(const struct mmap_watch *w)
{
	return w && w->mono;
}

uint64_t mmap_watch_seen(const struct mmap_watch *w)
{
	return w ? w->seen : 0;
}

uint64_t mmap_watch_lost(const struct mmap_watch *w)
{
	return w ? w->lost : 0;
}
