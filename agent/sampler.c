#include "sampler.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated/config.h"
#include "log.h"
#include "pmu_events.h"
#include "net.h"
#include "sampler_priv.h"

#define MAPS_RESCAN_GAP_NS 200000000ull /* rescan a process's maps at most every 200 ms */

const char *sampler_backend_name(enum sampler_backend b)
{
	switch (b) {
	case SAMPLER_BPF: return "bpf";
	case SAMPLER_RING: return "ring";
	default: return "auto";
	}
}

int sampler_parse_backend(const char *s, enum sampler_backend *out)
{
	if (strcmp(s, "bpf") == 0)
		*out = SAMPLER_BPF;
	else if (strcmp(s, "ring") == 0)
		*out = SAMPLER_RING;
	else if (strcmp(s, "auto") == 0)
		*out = SAMPLER_AUTO;
	else
		return -EINVAL;
	return 0;
}

bool sampler_bpf_compiled(void)
{
#ifdef SAMPLER_HAVE_BPF
	return true;
#else
	return false;
#endif
}

enum sampler_backend sampler_backend(const struct sampler *s)
{
	return s->ops->id;
}

const struct event_desc *sampler_event(const struct sampler *s)
{
	return &s->ev;
}

void sampler_fill_attr(const struct sampler *s, struct perf_event_attr *a, uint64_t sample_type)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = s->ev.type;
	a->config = s->ev.config;
	if (s->by_freq) {
		a->freq = 1;
		a->sample_freq = s->o.freq_hz;
	} else {
		a->sample_period = s->period;
	}
	a->sample_type = sample_type;
	a->disabled = 1;
}

/* perf_event_open refuses attr.freq with sample_freq above
 * /proc/sys/kernel/perf_event_max_sample_rate with a bare EINVAL (kernel/events/core.c,
 * perf_event_open: "if (attr.sample_freq > sysctl_perf_event_sample_rate)"), and the
 * kernel lowers that limit itself after "perf: interrupt took too long" (slow emulated
 * or small cores): sample at the limit instead, and say so (issue 30, 3). */
static void clamp_to_max_rate(struct sampler *s)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_max_sample_rate", "re");
	unsigned long max = 0;
	if (!f)
		return;
	if (fscanf(f, "%lu", &max) != 1)
		max = 0;
	fclose(f);
	if (max == 0 || s->o.freq_hz <= max)
		return;
	log_warn("-F %u is above the kernel's perf_event_max_sample_rate (%lu; the kernel lowers it after "
		 "'perf: interrupt took too long', see dmesg): sampling at %lu Hz. To keep -F %u, as root: sysctl "
		 "kernel.perf_event_max_sample_rate=%u, then kernel.perf_cpu_time_max_percent=0 (no more lowering)",
		 s->o.freq_hz, max, max, s->o.freq_hz, s->o.freq_hz);
	s->o.freq_hz = (unsigned)max;
}

/* The sampled event: the user's, else hardware cycles, else cpu-clock. */
static int choose_event(struct sampler *s, char *err, size_t errlen)
{
	int probe_cpu = s->o.kind == PERF_TARGET_SYSTEM ? 0 : -1;
	pid_t probe_pid = s->o.kind == PERF_TARGET_SYSTEM ? -1 : s->o.pid;
	if (s->o.event) {
		size_t n;
		if (events_parse_here(s->o.event, &s->ev, 1, &n, err, errlen) < 0)
			return -EINVAL; /* err: unknown name (valid names listed) or not in this CPU's PMU table */
		char why[512];
		int rc = perf_probe_event_why(&s->ev, probe_pid, probe_cpu, why, sizeof(why));
		if (rc < 0) {
			bool hw = events_is_hardware(&s->ev) && rc != -EOPNOTSUPP;
			snprintf(err, errlen, "cannot sample '%s' here (%s)%s", s->ev.name, why,
				 !hw ? "; try -e cpu-clock"
				 : perf_probe_hw(probe_pid, probe_cpu) < 0
					 ? "; the hardware PMU is missing (cycles does not open either): try -e cpu-clock"
					 : "; cycles opens: this core or its kernel driver lacks this event");
			return rc;
		}
	} else {
		int rc = perf_probe_hw(probe_pid, probe_cpu);
		if (rc == 0) {
			events_lookup("cycles", &s->ev);
		} else {
			events_lookup("cpu-clock", &s->ev);
			log_warn("hardware counters unsupported (perf_event_open cycles: %s), sampling the software "
				 "event cpu-clock (a timer) instead",
				 strerror(-rc));
		}
	}
	/* Timer events sample by period (the kernel converts a frequency to a
	 * period for them anyway); counting events by frequency. */
	if (events_is_time(&s->ev)) {
		s->by_freq = false;
		s->period = 1000000000ull / s->o.freq_hz;
		/* 1/128 longer (0.8 % fewer samples; the record says the period): one CPU's timer at
		 * 500 Hz is phase-locked to a 250 Hz tick, and the time slices a loaded CPU ends at
		 * its ticks then hold the timer's expiry always or never, so a process got 0.64-1.22x
		 * its CPU time in samples (bpf back end: per-CPU timers; 16 runs at load 6-12); off the
		 * tick's lattice the phase moves 1/128 of the period per sample and the error averages
		 * out: 0.93-1.07x in 16 runs at load 6-10 (issue 43). A per-task timer (ring, a pid)
		 * restarts with the time left at each switch-in and never locked. */
		s->period += s->period / 128;
	} else {
		s->by_freq = true;
		clamp_to_max_rate(s);
	}
	return 0;
}

static int try_backend(struct sampler *s, const struct sampler_ops *ops, char *err, size_t errlen)
{
	s->ops = ops;
	int rc = ops->open(s, err, errlen);
	if (rc < 0)
		s->ops = NULL;
	return rc;
}

int sampler_open(struct sampler **out, const struct sampler_opts *o, char *err, size_t errlen)
{
	*out = NULL;
	if (o->freq_hz == 0 || o->freq_hz > 100000) {
		snprintf(err, errlen, "sampling frequency must be 1..100000 Hz (got %u)", o->freq_hz);
		return -EINVAL;
	}
	if (!o->emit || o->interval_ns == 0) {
		snprintf(err, errlen, "sampler: no record sink or interval");
		return -EINVAL;
	}
	struct sampler *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->o = *o;
	proc_maps_init(&s->maps);
	perf_maps_init(&s->jit);
	task_names_init(&s->tasks, NULL);
	int rc = sample_agg_init(&s->agg);
	if (rc == 0)
		rc = stack_table_init(&s->stacks);
	if (rc < 0) {
		snprintf(err, errlen, "out of memory");
		goto fail;
	}
	rc = choose_event(s, err, errlen);
	if (rc < 0)
		goto fail;
	/* The mapping watch first: every process started once the back end samples has its FORK, COMM and
	 * MMAP records (one started in between was read from /proc only at its first drain, the bpf
	 * back end's at the interval's end: gone by then, its samples unsymbolized; w45c) */
	{
		char why[512];
		if (mmap_watch_open(&s->mw, o->kind, o->pid, why, sizeof(why)) < 0)
			log_warn("%s: mappings are read from /proc when first sampled (a program that ends first "
				 "stays unsymbolized)",
				 why);
		mmap_watch_set_names(s->mw, &s->tasks); /* names at exec, before the program can end */
		if (s->mw && o->kind != PERF_TARGET_EXEC) /* what runs already: named now, as perf does */
			log_debug("task names: %zu tasks alive at the start",
				  task_names_snapshot(&s->tasks, o->kind == PERF_TARGET_SYSTEM ? 0 : o->pid));
	}
	switch (o->backend) {
	case SAMPLER_BPF:
#ifdef SAMPLER_HAVE_BPF
		rc = try_backend(s, &sampler_bpf_ops, err, errlen);
#else
		snprintf(err, errlen, "the bpf back end is not compiled in (CONFIG_AGENT_BPF): use --backend ring");
		rc = -ENOTSUP;
#endif
		break;
	case SAMPLER_RING:
		rc = try_backend(s, &sampler_ring_ops, err, errlen);
		break;
	default: {
#ifdef SAMPLER_HAVE_BPF
		char why[512];
		rc = try_backend(s, &sampler_bpf_ops, why, sizeof(why));
		if (rc < 0)
			log_warn("bpf back end unavailable (%s): using the perf ring back end", why);
#else
		rc = -ENOTSUP;
		log_info("bpf back end not compiled in: using the perf ring back end");
#endif
		if (rc < 0)
			rc = try_backend(s, &sampler_ring_ops, err, errlen);
	}
	}
	if (rc < 0)
		goto fail;
	s->last_emit_ns = clock_mono_ns();
	loop_timer_start(&s->timer, o->interval_ns, s->last_emit_ns);
	log_info("sampling %s at %u Hz with the %s back end%s", s->ev.name, s->o.freq_hz, sampler_backend_name(s->ops->id),
		 o->callgraph ? " (user call chains)" : "");
	*out = s;
	return 0;
fail:
	sampler_close(s);
	return rc;
}

int sampler_add_task_time(struct sampler *s, int32_t pid, int32_t tid, uint64_t on_ns, uint64_t off_ns,
			  uint64_t switches)
{
	if (s->ntt == s->captt) {
		size_t ncap = s->captt ? s->captt * 2 : 64;
		if (ncap > 16384)
			return -ENOSPC;
		Prof__TaskTime *n = realloc(s->tt, ncap * sizeof(*n));
		if (!n)
			return -ENOMEM;
		s->tt = n;
		s->captt = ncap;
	}
	Prof__TaskTime *t = &s->tt[s->ntt++];
	prof__task_time__init(t);
	t->pid = pid;
	t->tid = tid;
	t->on_cpu_ns = on_ns;
	t->off_cpu_ns = off_ns;
	t->switches = switches;
	return 0;
}

static bool anon_at(const struct sampler *s, int32_t pid, uint64_t ip)
{
	const struct proc_mapping *m = proc_maps_find(&s->maps, pid, ip);
	return !m || perf_map_anon(m->path);
}

/* The sample's user IP, or a user frame of its call chain not sent yet, in anonymous memory
 * (JIT code): the process's perf map is read then (perf_map.h). */
static bool jit_frame(const struct sampler *s, const struct sample_key *k)
{
	if (k->ip && anon_at(s, k->pid, k->ip))
		return true;
	if (!k->stack_id || stack_table_declared(&s->stacks, k->stack_id))
		return false;
	size_t n, i = 0;
	const uint64_t *ips = stack_table_get(&s->stacks, k->stack_id, &n);
	for (size_t j = 0; ips && j < n; j++)
		if (ips[j] == SAMPLE_CHAIN_USER_MARK)
			i = j + 1; /* kernel frames before the mark */
	for (; ips && i < n; i++)
		if (ips[i] && anon_at(s, k->pid, ips[i]))
			return true;
	return false;
}

uint32_t sampler_inc_of(struct sampler *s, int32_t pid, uint64_t stamp_ns)
{
	if (pid > 0 && !task_names_find(&s->tasks, pid, pid))
		task_names_ensure(&s->tasks, pid, pid); /* a process first seen here: its incarnation now */
	return task_names_inc_of(&s->tasks, pid, stamp_ns);
}

int sampler_add(struct sampler *s, const struct sample_key *k, uint64_t count, uint64_t now_ns)
{
	int rc = sample_agg_add(&s->agg, k, count);
	if (rc == -ENOSPC) {
		sampler_emit_record(s, now_ns); /* full: send what we have, start a new record */
		rc = sample_agg_add(&s->agg, k, count);
	}
	if (rc < 0) {
		s->lost += count;
		return rc;
	}
	if (rc == 1 && k->ip)
		proc_maps_ensure(&s->maps, k->pid, k->ip, now_ns, MAPS_RESCAN_GAP_NS);
	if (rc == 1 && jit_frame(s, k))
		perf_maps_check(&s->jit, k->pid, now_ns, s->o.emit, s->o.ctx);
	if (rc == 1)
		task_names_ensure(&s->tasks, k->pid, k->tid); /* no name is not an error */
	return 0;
}

int sampler_flush(struct sampler *s, uint64_t now_ns)
{
	if (s->mw)
		mmap_watch_drain(s->mw, &s->maps); /* mappings first: samples then find them */
	int rc = s->ops->drain(s, now_ns);
	if (rc < 0)
		log_warn("reading samples: %s", strerror(-rc));
	if (s->mw) /* the records of tasks those samples saw start meanwhile (their FORK, COMM): named in this record */
		mmap_watch_drain(s->mw, &s->maps);
	rc = sampler_emit_record(s, now_ns);
	/* Sent: what exited before this interval's drain has had its last samples sent. Once per interval,
	 * not per record (an early one of a full table, a pid's two processes split in two): a task whose
	 * EXIT is read after the drain has samples in the next drain (the bpf back end's map), and its entry
	 * must still say which process they are (task_names_reap: the second reap after its EXIT). */
	if (rc >= 0) {
		proc_maps_reap(&s->maps);
		task_names_reap(&s->tasks);
	}
	return rc;
}

void sampler_keep_up(void *ctx)
{
	struct sampler *s = ctx;
	if (!s)
		return;
	if (s->mw)
		mmap_watch_drain(s->mw, &s->maps);
	if (s->ops->id == SAMPLER_RING)
		s->ops->drain(s, clock_mono_ns()); /* a read error comes back at the interval's drain */
}

static int src_prepare(void *ctx, struct pollfd *pfd, int max, uint64_t now_ns, int *timeout_ms)
{
	struct sampler *s = ctx;
	loop_timer_timeout(&s->timer, now_ns, timeout_ms);
	int n = s->ops->fds ? s->ops->fds(s, pfd, max, now_ns, timeout_ms) : 0;
	s->mw_first = n;
	s->mw_n = s->mw && n >= 0 ? mmap_watch_fds(s->mw, pfd + n, max - n) : 0;
	return n < 0 ? n : n + s->mw_n;
}

static int src_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now_ns)
{
	struct sampler *s = ctx;
	bool ready = false;
	if (s->mw) {
		if (s->mw_first < n)
			mmap_watch_revents(s->mw, pfd + s->mw_first, n - s->mw_first);
		mmap_watch_drain(s->mw, &s->maps);
		n = s->mw_first < n ? s->mw_first : n; /* the back end's own fds */
	}
	for (int i = 0; i < n; i++)
		ready |= pfd[i].revents != 0;
	if (loop_timer_expired(&s->timer, now_ns)) {
		sampler_flush(s, now_ns);
	} else if (ready) {
		if (s->ops->revents)
			s->ops->revents(s, pfd, n, now_ns);
		int rc = s->ops->drain(s, now_ns);
		if (rc < 0)
			log_warn("reading samples: %s", strerror(-rc));
	}
	return 0; /* sampling problems never stop the agent (or the target) */
}

void sampler_loop_source(struct sampler *s, struct loop_source *src)
{
	memset(src, 0, sizeof(*src));
	src->name = "sampler";
	src->prepare = src_prepare;
	src->dispatch = src_dispatch;
	src->ctx = s;
}

void sampler_get_stats(const struct sampler *s, struct sampler_stats *st)
{
	*st = s->st;
	st->freq_hz = s->o.freq_hz;
}

void sampler_close(struct sampler *s)
{
	if (!s)
		return;
	if (s->ops && s->ops->close)
		s->ops->close(s);
	if (s->drop_warned)
		log_warn("tracking dropped in this session: %llu mappings, %llu task names, %llu kernel records",
			 (unsigned long long)s->maps.dropped, (unsigned long long)s->tasks.dropped,
			 (unsigned long long)mmap_watch_lost(s->mw));
	log_debug("tracking: %zu processes, %zu mappings (%zu KiB) held; %llu mappings and %llu names evicted",
		  s->maps.nprocs, s->maps.nmaps, s->maps.bytes >> 10, (unsigned long long)s->maps.evicted,
		  (unsigned long long)s->tasks.evicted);
	if (s->jit.syms || s->jit.refused || s->jit.capped)
		log_info("perf maps: %llu JIT symbols sent; %llu files refused (a symlink, not a regular file, or neither "
			 "the process's user's nor root's), %llu read only up to %u MiB",
			 (unsigned long long)s->jit.syms, (unsigned long long)s->jit.refused,
			 (unsigned long long)s->jit.capped, PERF_MAP_FILE_MAX >> 20);
	perf_maps_free(&s->jit);
	mmap_watch_close(s->mw);
	sample_agg_free(&s->agg);
	stack_table_free(&s->stacks);
	proc_maps_free(&s->maps);
	task_names_free(&s->tasks);
	free(s->tt);
	free(s);
}
