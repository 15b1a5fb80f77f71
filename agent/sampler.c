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

static int emit_record(struct sampler *s, uint64_t now_ns);

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
		emit_record(s, now_ns); /* full: send what we have, start a new record */
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

/* ---------------------------------------------------------------- records */

/* Anything ever dropped from tracking is said once, with a count (the session's
 * end says the total). */
static uint64_t dropped_total(const struct sampler *s)
{
	return s->maps.dropped + s->tasks.dropped + mmap_watch_lost(s->mw);
}

static void report_drops(struct sampler *s)
{
	if (s->drop_warned || !dropped_total(s))
		return;
	s->drop_warned = true;
	log_warn("tracking dropped: %llu mappings (over the %zu KiB bound, every process alive), %llu task names "
		 "(%u live tasks), %llu mapping/name records the kernel could not write (ring full): their samples may "
		 "show as [unknown] or 'pid N'",
		 (unsigned long long)s->maps.dropped, s->maps.max_bytes >> 10, (unsigned long long)s->tasks.dropped,
		 TASK_NAMES_MAX, (unsigned long long)mmap_watch_lost(s->mw));
}

/* The TaskName of entry n's task of incarnation inc: its current one, or the one it held before (its id
 * used again: inc is prev_inc). */
static void fill_task_name(Prof__TaskName *tn, struct task_name *n, uint32_t inc)
{
	bool prev = inc != n->inc;
	prof__task_name__init(tn);
	tn->pid = n->pid;
	tn->tid = n->tid;
	tn->comm = prev ? n->prev_comm : n->comm;
	tn->thread = prev ? n->prev_thread : n->thread;
	tn->incarnation = inc;
	tn->first_map_id = !inc ? 0 : prev ? n->prev_first_map_id : n->first_map_id;
}

static int emit_one(struct sampler *s, uint64_t now_ns)
{
	perf_maps_retry(&s->jit, now_ns, s->o.emit, s->o.ctx); /* JIT symbols before the samples naming them */
	if (s->o.generation) {
		uint64_t g = s->o.generation(s->o.ctx);
		if (g != s->gen) {
			s->gen = g;
			s->event_declared = false;
			proc_maps_redeclare(&s->maps);
			task_names_redeclare(&s->tasks);
			stack_table_redeclare(&s->stacks);
			perf_maps_forget(&s->jit); /* the spool dropped records: JIT symbols may be among them */
		}
	}
	size_t n = s->agg.n;
	int rc = -ENOMEM;
	Prof__Envelope env;
	Prof__Samples sm;
	Prof__EventDesc evd, *evp = &evd;
	prof__envelope__init(&env);
	prof__samples__init(&sm);
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &sm;
	sm.backend = s->ops->id;
	sm.t_ns = now_ns > s->o.base_ns ? now_ns - s->o.base_ns : 0;
	sm.interval_ns = now_ns > s->last_emit_ns ? now_ns - s->last_emit_ns : 0;
	sm.event_id = s->o.event_id ? s->o.event_id : 1;
	sm.freq_hz = s->o.freq_hz;
	sm.period = s->by_freq ? 0 : s->period;
	sm.lost = s->lost;
	int32_t *pid = malloc((n + 1) * sizeof(*pid)), *tid = malloc((n + 1) * sizeof(*tid));
	uint64_t *ip = malloc((n + 1) * sizeof(*ip)), *kip = malloc((n + 1) * sizeof(*kip));
	uint64_t *cnt = malloc((n + 1) * sizeof(*cnt));
	uint32_t *sid = malloc((n + 1) * sizeof(*sid));
	Prof__Stack *stk = malloc((n + 1) * sizeof(*stk));
	Prof__Stack **stkp = malloc((n + 1) * sizeof(*stkp));
	Prof__Mapping *mp = malloc((s->maps.nmaps + 1) * sizeof(*mp));
	Prof__Mapping **mpp = malloc((s->maps.nmaps + 1) * sizeof(*mpp));
	Prof__TaskTime **ttp = malloc((s->ntt + 1) * sizeof(*ttp));
	size_t ntn_max = 2 * s->tasks.n + 1; /* at most every known task and the one it held before */
	Prof__TaskName *tn = malloc(ntn_max * sizeof(*tn));
	Prof__TaskName **tnp = malloc(ntn_max * sizeof(*tnp));
	if (!pid || !tid || !ip || !kip || !cnt || !sid || !stk || !stkp || !mp || !mpp || !ttp || !tn || !tnp) {
		rc = -ENOMEM;
		goto out;
	}
	bool retried = false;
rebuild:
	sm.n_new_events = 0;
	if (!s->event_declared) {
		prof__event_desc__init(&evd);
		evd.id = sm.event_id;
		evd.name = s->ev.name;
		evd.type = s->ev.type;
		evd.config = s->ev.config;
		evd.unit = (char *)(s->ev.unit ? s->ev.unit : "");
		sm.n_new_events = 1;
		sm.new_events = &evp;
	}
	size_t k = 0, nst = 0, ntn = 0;
	bool any_kip = false;
	for (size_t i = 0; i < s->agg.cap; i++) {
		const struct sample_entry *e = &s->agg.slots[i];
		if (!e->count)
			continue;
		pid[k] = e->k.pid;
		tid[k] = e->k.tid;
		ip[k] = e->k.ip;
		kip[k] = e->k.kip;
		any_kip |= e->k.kip != 0;
		sid[k] = e->k.stack_id;
		cnt[k] = e->count;
		k++;
		struct task_name *name = task_names_find(&s->tasks, e->k.pid, e->k.tid);
		if (name && name->inc == e->k.inc)
			name->sampled = true;
		else if (name && name->prev_valid && name->prev_inc == e->k.inc)
			name->prev_sampled = true; /* the task the entry held before (pid reuse) */
		if (e->k.stack_id && !stack_table_declared(&s->stacks, e->k.stack_id)) {
			size_t len;
			const uint64_t *ips = stack_table_get(&s->stacks, e->k.stack_id, &len);
			prof__stack__init(&stk[nst]);
			stk[nst].id = e->k.stack_id;
			stk[nst].ips = (uint64_t *)ips;
			stk[nst].n_ips = len;
			for (size_t j = 0; j < len; j++)
				if (ips[j] == SAMPLE_CHAIN_USER_MARK) { /* kernel frames, then the user's */
					stk[nst].kernel_ips = (uint64_t *)ips;
					stk[nst].n_kernel_ips = j;
					stk[nst].ips = (uint64_t *)ips + j + 1;
					stk[nst].n_ips = len - j - 1;
					break;
				}
			stkp[nst] = &stk[nst];
			nst++;
			stack_table_set_declared(&s->stacks, e->k.stack_id);
		}
	}
	/* names of the tasks sampled, now or before: a name a COMM record changed after the
	 * task's last sample (its exec seen late, from another CPU's ring) is declared again */
	for (size_t i = 0; i < s->tasks.cap && ntn < ntn_max; i++) {
		struct task_name *name = &s->tasks.slots[i];
		if (!name->tid)
			continue;
		/* the task the entry held before its id was used again, where its samples are in this record */
		if (name->prev_valid && name->prev_sampled && !name->prev_declared && name->prev_inc != name->inc) {
			fill_task_name(&tn[ntn], name, name->prev_inc);
			tnp[ntn] = &tn[ntn];
			ntn++;
			name->prev_declared = true;
		}
		if (!name->sampled || name->declared || ntn >= ntn_max)
			continue;
		fill_task_name(&tn[ntn], name, name->inc);
		tnp[ntn] = &tn[ntn];
		ntn++;
		name->declared = true;
	}
	size_t nm = 0, pit = 0, mit = 0;
	struct proc_mapping *m;
	while ((m = proc_maps_next(&s->maps, &pit, &mit)) && nm < s->maps.nmaps) {
		if (m->declared)
			continue;
		prof__mapping__init(&mp[nm]);
		mp[nm].id = m->id;
		mp[nm].pid = m->pid;
		mp[nm].start = m->start;
		mp[nm].end = m->end;
		mp[nm].pgoff = m->pgoff;
		mp[nm].path = m->path;
		mp[nm].build_id.data = m->build_id;
		mp[nm].build_id.len = m->build_id_len;
		mpp[nm] = &mp[nm];
		nm++;
		m->declared = true;
	}
	for (size_t i = 0; i < s->ntt; i++)
		ttp[i] = &s->tt[i];
	sm.n_pid = sm.n_tid = sm.n_ip = sm.n_stack_id = sm.n_count = k;
	sm.pid = pid;
	sm.tid = tid;
	sm.ip = ip;
	sm.stack_id = sid;
	sm.count = cnt;
	if (any_kip) {
		sm.n_kip = k;
		sm.kip = kip;
	}
	sm.n_new_stacks = nst;
	sm.new_stacks = stkp;
	sm.n_new_mappings = nm;
	sm.new_mappings = mpp;
	sm.n_task_times = s->ntt;
	sm.task_times = ttp;
	sm.n_new_tasks = ntn;
	sm.new_tasks = tnp;
	rc = s->o.emit(s->o.ctx, &env);
	if (rc == -ESTALE && !retried) {
		/* The sink says this record makes the spool drop older ones, which
		 * may hold declarations: declare everything this record uses. */
		retried = true;
		perf_maps_forget(&s->jit);
		s->event_declared = false;
		proc_maps_redeclare(&s->maps);
		task_names_redeclare(&s->tasks);
		stack_table_redeclare(&s->stacks);
		goto rebuild;
	}
	if (rc < 0) {
		/* Not sent: what it declared must be declared again. */
		log_warn("sending a samples record: %s", strerror(-rc));
		proc_maps_redeclare(&s->maps);
		task_names_redeclare(&s->tasks);
		stack_table_redeclare(&s->stacks);
		s->event_declared = false;
	} else {
		s->event_declared = true;
		report_drops(s);
		s->st.records++;
		s->st.keys += k;
		s->st.samples += s->agg.total;
		s->st.lost += s->lost;
		s->st.mappings += nm;
		s->st.stacks += nst;
	}
out:
	free(tn);
	free(tnp);
	free(pid);
	free(tid);
	free(ip);
	free(kip);
	free(cnt);
	free(sid);
	free(stk);
	free(stkp);
	free(mp);
	free(mpp);
	free(ttp);
	sample_agg_reset(&s->agg);
	s->ntt = 0;
	s->lost = 0;
	s->last_emit_ns = now_ns;
	return rc;
}

/* Is key k one of a current process whose pid's previous process has samples in this record too? */
static bool held_back(struct sampler *s, const struct sample_key *k)
{
	const struct task_name *l = task_names_find(&s->tasks, k->pid, k->pid);
	return l && l->prev_pending && l->prev_valid && k->inc == l->inc && l->prev_inc != l->inc;
}

static void prev_sent(struct sampler *s)
{
	for (size_t i = 0; i < s->tasks.cap; i++)
		s->tasks.slots[i].prev_pending = false;
}

/* A record never holds two processes of one pid (pid reuse, w44a: the collector takes a record's keys
 * of a pid as the process whose TaskName.incarnation it last saw declared): where a pid's previous
 * process has samples beside the current one's, everything else goes first and the current
 * process's keys in a record of their own right after (an empty interval at the same time). */
static int emit_record(struct sampler *s, uint64_t now_ns)
{
	/* the pids whose previous process has keys here: classified so at their drain, or while it was
	 * the current one, before the next one's FORK record was read (a ring drained before it) */
	for (size_t i = 0; i < s->agg.cap; i++) {
		const struct sample_key *k = &s->agg.slots[i].k;
		if (!s->agg.slots[i].count)
			continue;
		struct task_name *l = task_names_find(&s->tasks, k->pid, k->pid);
		if (l && l->prev_valid && l->prev_inc != l->inc && k->inc == l->prev_inc)
			l->prev_pending = true;
	}
	size_t held = 0;
	for (size_t i = 0; i < s->agg.cap; i++)
		held += s->agg.slots[i].count && held_back(s, &s->agg.slots[i].k);
	struct sample_entry *all = held ? malloc(s->agg.n * sizeof(*all)) : NULL;
	bool *hold = held ? malloc(s->agg.n * sizeof(*hold)) : NULL;
	if (!all || !hold) { /* nothing to split (or no memory to: as one record) */
		free(all);
		free(hold);
		int rc = emit_one(s, now_ns);
		prev_sent(s);
		return rc;
	}
	size_t n = 0;
	for (size_t i = 0; i < s->agg.cap; i++)
		if (s->agg.slots[i].count) {
			hold[n] = held_back(s, &s->agg.slots[i].k);
			all[n++] = s->agg.slots[i];
		}
	sample_agg_reset(&s->agg);
	for (size_t i = 0; i < n; i++)
		if (!hold[i])
			sample_agg_add(&s->agg, &all[i].k, all[i].count); /* fewer keys than were there: room */
	int rc = emit_one(s, now_ns);
	prev_sent(s);
	for (size_t i = 0; i < n; i++)
		if (hold[i])
			sample_agg_add(&s->agg, &all[i].k, all[i].count);
	int rc2 = emit_one(s, now_ns);
	free(all);
	free(hold);
	return rc < 0 ? rc : rc2;
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
	rc = emit_record(s, now_ns);
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
