/* The sampler's records (sampler_priv.h: sampler_emit_record): an interval's aggregated keys, with
 * the stacks, mappings, task names and event they use declared once, sent as Samples records; a pid's
 * two processes (pid reuse, w44a) never in one record. Split from sampler.c (w45c). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sampler_priv.h"

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
int sampler_emit_record(struct sampler *s, uint64_t now_ns)
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
