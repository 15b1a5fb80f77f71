/* Sampling back end "bpf": bpf/sample.bpf.c attached to one perf_event per
 * CPU counts samples in a kernel hash map (filtered to the target's tgid),
 * bpf/sched.bpf.c accounts on/off-CPU time per task at sched_switch. Every
 * interval the agent drains and resets the map (lookup-and-delete batches,
 * or one key at a time on older kernels) and feeds the same aggregation as
 * the ring back end; map reads are raw bpf(2) calls (bpf_sys.h). Loading:
 * sampler_bpf_load.c. Needs CONFIG_AGENT_BPF, BTF and root (CAP_BPF +
 * CAP_PERFMON). A command target is followed by tgid: its own children are
 * not sampled by this back end (use --backend ring for that). */
#include "generated/config.h"

#ifdef CONFIG_AGENT_BPF
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/perf_event.h>
#include <linux/types.h>

#include "../bpf/sample_shared.h"
#include "bpf_sys.h"
#include "log.h"
#include "perf.h"
#include "sampler_bpf_load.h"
#include "sampler_priv.h"

#define MAX_CPUS 1024
#define BATCH 256
#define PREV_SLOTS 16384 /* 2 x TASK_MAP_ENTRIES */

struct prev_time {
	uint32_t tid; /* 0 = free */
	uint64_t on_ns, off_ns, switches;
};

struct bpf_state {
	struct sampler_bpf_progs p;
	int *pfds;
	size_t ncpu;
	bool batch_ok;
	uint64_t dropped_seen;
	struct prev_time *prev;
	struct sample_map_key keys[BATCH];
	uint64_t vals[BATCH];
};

static void bpf_close(struct sampler *s)
{
	struct bpf_state *b = s->be;
	if (!b)
		return;
	for (size_t i = 0; i < b->ncpu; i++)
		if (b->pfds[i] >= 0)
			close(b->pfds[i]); /* detaches the program */
	free(b->pfds);
	sampler_bpf_unload(&b->p);
	free(b->prev);
	free(b);
	s->be = NULL;
}

static int bpf_open(struct sampler *s, char *err, size_t errlen)
{
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		snprintf(err, errlen, "the kernel has no BTF (/sys/kernel/btf/vmlinux): CO-RE programs cannot load");
		return -ENOTSUP;
	}
	struct bpf_state *b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	s->be = b;
	uint32_t tgid = s->o.kind == PERF_TARGET_SYSTEM ? 0 : (uint32_t)s->o.pid;
	int rc = sampler_bpf_load(&b->p, tgid, s->o.callgraph, err, errlen);
	if (rc < 0) {
		free(b);
		s->be = NULL;
		return rc;
	}
	int cpus[MAX_CPUS];
	int n = perf_online_cpus(cpus, MAX_CPUS);
	if (n <= 0) {
		rc = -ENOENT;
		snprintf(err, errlen, "cannot list online CPUs");
		goto fail;
	}
	b->pfds = malloc((size_t)n * sizeof(int));
	if (!b->pfds) {
		rc = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < n; i++)
		b->pfds[i] = -1;
	b->ncpu = (size_t)n;
	struct perf_event_attr a;
	sampler_fill_attr(s, &a, PERF_SAMPLE_IP);
	for (int i = 0; i < n; i++) {
		long fd = perf_event_open_cloexec(&a, -1, cpus[i], -1, 0);
		if (fd < 0) {
			rc = -errno;
			snprintf(err, errlen, "perf_event_open on CPU %d: %s%s", cpus[i], strerror(-rc),
				 rc == -EACCES || rc == -EPERM ? " (run as root)" : "");
			goto fail;
		}
		b->pfds[i] = (int)fd;
		if (ioctl((int)fd, PERF_EVENT_IOC_SET_BPF, b->p.sample_prog) < 0) {
			rc = -errno;
			snprintf(err, errlen, "attaching the BPF program to CPU %d: %s", cpus[i], strerror(-rc));
			goto fail;
		}
	}
	b->prev = calloc(PREV_SLOTS, sizeof(*b->prev));
	if (!b->prev) {
		rc = -ENOMEM;
		goto fail;
	}
	/* System-wide from now, filtered to the target's tgid in the program. */
	for (size_t i = 0; i < b->ncpu; i++) {
		if (ioctl(b->pfds[i], PERF_EVENT_IOC_ENABLE, 0) < 0) {
			rc = -errno;
			snprintf(err, errlen, "enabling the sampling event on CPU %d: %s", cpus[i], strerror(-rc));
			goto fail;
		}
	}
	b->batch_ok = true;
	log_debug("bpf back end: %zu CPU(s), target tgid %u%s", b->ncpu, tgid,
		  b->p.task_times_map >= 0 ? ", sched_switch accounting" : "");
	return 0;
fail:
	bpf_close(s);
	return rc < 0 ? rc : -EIO;
}

/* Frames of stack id in the stack map (innermost first, up to max); 0 if gone. */
static size_t stack_frames(struct bpf_state *b, __s32 id, uint64_t *out, size_t max)
{
	uint64_t ips[SAMPLE_STACK_DEPTH];
	if (id < 0 || bpf_sys_map_lookup(b->p.stacks_map, &id, ips) < 0)
		return 0;
	size_t n = 0;
	while (n < SAMPLE_STACK_DEPTH && n < max && ips[n])
		n++;
	memcpy(out, ips, n * sizeof(*out));
	return n;
}

static void add_key(struct sampler *s, const struct sample_map_key *k, uint64_t v, uint64_t now)
{
	struct bpf_state *b = s->be;
	struct sample_key sk = {.pid = (int32_t)k->pid, .tid = (int32_t)k->tid, .ip = k->ip, .kip = k->kip};
	/* which of the pid's processes: its start against the previous one's exit (pid reuse) */
	sk.inc = sampler_inc_of(s, sk.pid, mmap_watch_monotonic(s->mw) ? k->start : 0);
	if (k->stack_id >= 0 || k->kstack_id >= 0) {
		/* [kernel frames, SAMPLE_CHAIN_USER_MARK,] user frames, as the ring back end's
		 * chains (sample_agg.h) */
		uint64_t chain[SAMPLE_STACK_MAX_DEPTH + 1];
		size_t nk = stack_frames(b, k->kstack_id, chain, SAMPLE_KSTACK_MAX_DEPTH);
		if (nk)
			chain[nk++] = SAMPLE_CHAIN_USER_MARK;
		size_t n = nk + stack_frames(b, k->stack_id, chain + nk, SAMPLE_STACK_MAX_DEPTH - nk);
		if (n)
			sk.stack_id = stack_table_intern(&s->stacks, chain, n);
	}
	sampler_add(s, &sk, v, now);
}

static int drain_counts(struct sampler *s, uint64_t now)
{
	struct bpf_state *b = s->be;
	int fd = b->p.counts_map;
	if (b->batch_ok) {
		__u32 out_batch = 0;
		void *in = NULL;
		for (;;) {
			uint32_t count = BATCH;
			int rc = bpf_sys_map_lookup_and_delete_batch(fd, in, &out_batch, b->keys, b->vals, &count);
			int e = rc < 0 ? -rc : 0;
			for (uint32_t i = 0; i < count; i++)
				add_key(s, &b->keys[i], b->vals[i], now);
			if (rc < 0 && e == ENOENT)
				return 0; /* done */
			if (rc < 0 && (e == EINVAL || e == ENOTSUP || e == EOPNOTSUPP) && in == NULL && count == 0) {
				log_debug("map batch ops unsupported: draining key by key");
				b->batch_ok = false;
				break;
			}
			if (rc < 0)
				return -e;
			in = &out_batch;
		}
	}
	/* One key at a time: lookup, then delete (a sample landing between the
	 * two is lost; counted as such is not possible, it is rare). */
	struct sample_map_key key, next;
	bool first = true;
	while (bpf_sys_map_next_key(fd, first ? NULL : &key, &next) == 0) {
		uint64_t v;
		if (bpf_sys_map_lookup(fd, &next, &v) == 0) {
			bpf_sys_map_delete(fd, &next);
			add_key(s, &next, v, now);
		}
		key = next;
		first = false;
	}
	return 0;
}

static struct prev_time *prev_slot(struct bpf_state *b, uint32_t tid)
{
	size_t i = (tid * 2654435761u) & (PREV_SLOTS - 1);
	for (size_t probe = 0; probe < PREV_SLOTS; probe++, i = (i + 1) & (PREV_SLOTS - 1))
		if (b->prev[i].tid == tid || b->prev[i].tid == 0)
			return &b->prev[i];
	return NULL;
}

static void drain_task_times(struct sampler *s)
{
	struct bpf_state *b = s->be;
	int fd = b->p.task_times_map;
	if (fd < 0)
		return;
	uint32_t key, next;
	bool first = true;
	while (bpf_sys_map_next_key(fd, first ? NULL : &key, &next) == 0) {
		struct task_time_val v;
		first = false;
		key = next;
		if (bpf_sys_map_lookup(fd, &next, &v) < 0)
			continue;
		struct prev_time *p = prev_slot(b, next);
		if (!p)
			continue;
		if (p->tid == 0)
			*p = (struct prev_time){.tid = next};
		uint64_t on = v.on_ns - p->on_ns, off = v.off_ns - p->off_ns, sw = v.switches - p->switches;
		if (v.on_ns < p->on_ns || v.off_ns < p->off_ns) /* evicted and re-created by the LRU */
			on = v.on_ns, off = v.off_ns, sw = v.switches;
		p->on_ns = v.on_ns;
		p->off_ns = v.off_ns;
		p->switches = v.switches;
		if (on || off || sw)
			sampler_add_task_time(s, (int32_t)v.tgid, (int32_t)next, on, off, sw);
	}
}

static int bpf_drain(struct sampler *s, uint64_t now)
{
	struct bpf_state *b = s->be;
	int rc = drain_counts(s, now);
	drain_task_times(s);
	uint64_t d = *b->p.dropped;
	if (d > b->dropped_seen) {
		s->lost += d - b->dropped_seen;
		b->dropped_seen = d;
	}
	return rc;
}

const struct sampler_ops sampler_bpf_ops = {
	.id = SAMPLER_BPF,
	.open = bpf_open,
	.fds = NULL,
	.drain = bpf_drain,
	.close = bpf_close,
};
#endif
