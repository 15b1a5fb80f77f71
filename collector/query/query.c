/* query_run(): the CPU samples a filter selects, across the sessions of a
 * store, as aggregated stacks resolved on this host (query.h).
 *
 * Per selected session: its time bounds become t_ns bounds (wall =
 * sessions.realtime_ns + t_ns), the database groups the rows of the range by
 * key (pid, tid, ip, kip, stack_id) from the packed sample_blocks (and an
 * older collector's cpu_samples rows of records without a block), and each key becomes a stack of
 * interned frames: the kernel chain (or [kip]) + the user chain, or [ip]
 * when there is no chain. Keys that end with the same frames, task and
 * session are merged. Process and thread names come from sample_tasks (the
 * agent's interned names); without them the process is the basename of the
 * pid's lowest mapped file (its executable), pid 0 is "swapper". */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "log_once.h"
#include "query_priv.h"
#include "store/store_keyids.h"
#include "sample_period.h"
#include "sat.h"
#include "store/store_blocks.h"
#include "store/store_kallsyms.h"
#include "store/store_kinds.h"
#include "symbols.h"
#include "validate_perf_map.h"
#include "validate_samples.h"

static const char q_sessions[] = "SELECT id, agent_id, board, realtime_ns FROM sessions ORDER BY id";
/* The records of a range, summed in C with saturation (SQL's SUM fails on overflow: two forged
 * records with lost = 2^63-1 made every query of the store fail). */
static const char q_info[] =
    "SELECT lost, backend, freq_hz, interval_ns, t_ns, event_id, period FROM sample_intervals"
    " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3";
static const char q_event[] = "SELECT name FROM events WHERE session_id = ?1 AND event_id = ?2";
/* A session whose records in range sampled at different periods (an agent upgraded within one
 * boot: 1/F, then 1/F + 1/128 of it): each record's samples (its block's sum) and rate. */
static const char q_periods[] =
    "SELECT b.samples, i.freq_hz, i.period FROM sample_blocks b JOIN sample_intervals i"
    " ON i.session_id = b.session_id AND i.seq = b.seq WHERE b.session_id = ?1 AND b.t_ns >= ?2 AND b.t_ns < ?3";

struct result_priv {
	struct str_pool pool;
	uint32_t *fidx;
};

static int intern_frame(struct build *b, const struct sym_frame *sf, bool kernel, uint32_t *out)
{
	/* one frame per (function, module); an unresolved address (user: its file
	 * offset, kernel: the address) one frame each, under the same "[module]" or
	 * "[kernel]" name: views group them by name, exports keep the addresses */
	char key[1100];
	unsigned long long addr = sf->resolved ? 0ull : kernel ? (unsigned long long)sf->ip : (unsigned long long)sf->file_off;
	int kl = snprintf(key, sizeof(key), "%s%c%s%c%llx", sf->name, 0, sf->module, 0, addr);
	if (kl < 0 || (size_t)kl >= sizeof(key))
		kl = sizeof(key) - 1;
	if (key_map_get(&b->frame_ids, key, (size_t)kl, out))
		return 0;
	struct query_result *r = b->r;
	if (qm_grow((void **)&r->frames, &b->capframes, r->nframes + 1, sizeof(*r->frames)) < 0)
		return -ENOMEM;
	struct query_frame *f = &r->frames[r->nframes];
	f->function = str_pool_intern(&b->pool, sf->name);
	f->module = str_pool_intern(&b->pool, sf->module);
	f->raw = str_pool_intern(&b->pool, sf->raw ? sf->raw : "");
	f->ip = sf->ip;
	f->file_off = sf->file_off;
	f->path = str_pool_intern(&b->pool, sf->path ? sf->path : "");
	f->build_id = str_pool_intern(&b->pool, sf->build_id ? sf->build_id : "");
	f->src_file = str_pool_intern(&b->pool, sf->src_file ? sf->src_file : "");
	f->src_line = sf->src_line;
	if (!f->path || !f->build_id || !f->src_file)
		return -ENOMEM;
	f->kernel = kernel;
	f->resolved = sf->resolved;
	if (!f->function || !f->module || !f->raw || key_map_put(&b->frame_ids, key, (size_t)kl, (uint32_t)r->nframes) < 0)
		return -ENOMEM;
	*out = (uint32_t)r->nframes++;
	return 0;
}

struct ip_key {
	int32_t pid;
	int32_t kernel;
	uint64_t ip;
	uint32_t inc, pad;
};

/* The frame of address ip of pid (kernel: a kernel address), described by
 * sym_describe (symbols.h): demangled functions, kallsyms kernel functions,
 * unresolved addresses grouped per module. */
static int frame_of(struct build *b, struct sess *se, int32_t pid, uint32_t inc, uint64_t ip, bool kernel,
		    uint32_t *out)
{
	struct ip_key k = {kernel ? 0 : pid, kernel, ip, kernel ? 0 : inc, 0};
	/* the process only where the session has a reused pid (the key as before otherwise) */
	size_t klen = se->nstarts ? sizeof(k) : offsetof(struct ip_key, inc);
	if (key_map_get(&se->frame_of_ip, &k, klen, out))
		return 0;
	char buf[600];
	struct sym_frame sf;
	struct sym_mapping sm;
	const struct map_row *m = kernel ? NULL : qm_find_map(se, pid, inc, ip);
	if (m)
		sm = (struct sym_mapping){.path = m->path, .build_id = m->bid, .build_id_len = m->bidlen,
					  .start = m->start, .end = m->end, .pgoff = m->pgoff};
	/* anonymous memory: JIT code, named from the process's perf map where it has one */
	bool jit = !kernel && perf_map_anon(m ? m->path : NULL) && qm_jit_frame(se, pid, ip, buf, sizeof(buf), &sf);
	if (!jit)
		sym_describe(kernel && se->ksr ? se->ksr : b->sr, m ? &sm : NULL, ip, kernel, buf, sizeof(buf), &sf);
	char hex[2 * 64 + 1] = "";
	if (m && !jit) { /* what a later symbolizer needs (the pprof export's mappings) */
		sf.path = m->path;
		sf.build_id = m->bidlen ? sym_build_id_hex(m->bid, m->bidlen, hex, sizeof(hex)) : NULL;
	}
	int rc = intern_frame(b, &sf, kernel, out);
	if (rc == 0)
		rc = key_map_put(&se->frame_of_ip, &k, klen, *out);
	return rc;
}

#define MAX_FRAMES 256
#define CHAIN_CHUNK 4096 /* keys whose chains are held at once (at most 4096 x 127 frames) */

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The user and (where stored) kernel chains of n keys' stacks into uc and kc. */
static int load_chunk(struct store *s, const struct build *b, int64_t sid, const struct store_block_key *keys,
		      size_t n, uint32_t **ids, size_t *capids, struct qm_chains *uc, struct qm_chains *kc)
{
	if (qm_grow((void **)ids, capids, n, sizeof(**ids)) < 0)
		return -ENOMEM;
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (keys[i].stack_id)
			(*ids)[m++] = keys[i].stack_id;
	if (m > 1)
		qsort(*ids, m, sizeof(**ids), cmp_u32);
	size_t u = 0;
	for (size_t i = 0; i < m; i++)
		if (u == 0 || (*ids)[i] != (*ids)[u - 1])
			(*ids)[u++] = (*ids)[i];
	int rc = qm_chains_load(s, false, sid, *ids, u, MAX_FRAMES / 2 - 1, uc);
	if (rc == 0 && b->have_kstacks)
		rc = qm_chains_load(s, true, sid, *ids, u, MAX_FRAMES / 2 - 1, kc);
	return rc;
}

static int add_stack(struct build *b, struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const uint32_t *fr,
		     size_t nfr, uint64_t count)
{
	struct query_result *r = b->r;
	size_t ilen = se->nstarts ? sizeof(uint32_t) : 0; /* a pid's processes apart where one was reused */
	size_t klen = sizeof(int64_t) + 2 * sizeof(int32_t) + ilen + nfr * sizeof(uint32_t);
	unsigned char key[sizeof(int64_t) + 3 * sizeof(int32_t) + MAX_FRAMES * sizeof(uint32_t)];
	memcpy(key, &se->id, sizeof(int64_t));
	memcpy(key + 8, &pid, 4);
	memcpy(key + 12, &tid, 4);
	memcpy(key + 16, &inc, ilen);
	memcpy(key + 16 + ilen, fr, nfr * sizeof(uint32_t));
	uint32_t idx;
	if (key_map_get(&b->stack_ids, key, klen, &idx)) {
		sat_inc_u64(&r->stacks[idx].count, count);
		return 0;
	}
	if (qm_grow((void **)&r->stacks, &b->capstacks, r->nstacks + 1, sizeof(*r->stacks)) < 0 ||
	    qm_grow((void **)&b->stack_off, &b->capoff, r->nstacks + 1, sizeof(*b->stack_off)) < 0)
		return -ENOMEM;
	size_t *so = b->stack_off;
	if (qm_grow((void **)&b->fidx, &b->capfidx, b->nfidx + nfr, sizeof(*b->fidx)) < 0)
		return -ENOMEM;
	memcpy(b->fidx + b->nfidx, fr, nfr * sizeof(uint32_t));
	so[r->nstacks] = b->nfidx;
	b->nfidx += nfr;
	struct query_stack *k = &r->stacks[r->nstacks];
	memset(k, 0, sizeof(*k));
	k->nframes = nfr;
	k->count = count;
	qm_task_names(se, pid, tid, inc, &k->comm, &k->thread);
	/* names from the mappings are not pooled: pool them (sess memory goes away) */
	k->comm = str_pool_intern(&b->pool, k->comm);
	k->thread = str_pool_intern(&b->pool, k->thread);
	k->pid = pid;
	k->tid = tid;
	k->agent_id = se->agent_id;
	k->board = se->board;
	k->session_id = se->id;
	k->sample_ns = se->sample_ns;
	if (!k->comm || !k->thread || key_map_put(&b->stack_ids, key, klen, (uint32_t)r->nstacks) < 0)
		return -ENOMEM;
	r->nstacks++;
	return 0;
}

static int read_keys(struct store *s, struct build *b, struct sess *se, const struct query_filter *f, int64_t lo,
		     int64_t hi, uint64_t *samples)
{
	struct kset ks = {0};
	bool old_rows = false;
	int rc = qm_rows_needed(s, b, se->id, &old_rows);
	if (rc == 0 && b->have_blocks)
		rc = qm_keys_from_blocks(s, b, se, f, lo, hi, &ks);
	if (rc == 0 && old_rows)
		rc = qm_keys_from_rows(s, se->id, f, lo, hi, b->have_blocks, &ks);
	if (rc == 0)
		rc = qm_kset_order(&ks); /* frees the slots */
	const struct store_block_key *rows = ks.rows;
	size_t n = ks.n;
	struct qm_chains uc = {0}, kc = {0};
	uint32_t *ids = NULL;
	size_t capids = 0;
	for (size_t i = 0; rc >= 0 && i < n; i++) {
		const struct store_block_key *k = &rows[i];
		if (i % CHAIN_CHUNK == 0) /* the chains of the next CHAIN_CHUNK keys, read in batches */
			rc = load_chunk(s, b, se->id, rows + i, n - i < CHAIN_CHUNK ? n - i : CHAIN_CHUNK, &ids, &capids,
					&uc, &kc);
		if (rc < 0)
			break;
		if (f->ncomms) {
			const char *comm, *thread;
			qm_task_names(se, k->pid, k->tid, k->inc, &comm, &thread);
			if (!qm_in_str_list(f->comms, f->ncomms, comm))
				continue;
		}
		uint64_t ips[MAX_FRAMES], kips[MAX_FRAMES / 2];
		size_t nchain = 0, nk = 0;
		if (k->stack_id) {
			nchain = qm_chains_get(&uc, k->stack_id, ips);
			if (b->have_kstacks)
				nk = qm_chains_get(&kc, k->stack_id, kips);
		}
		uint32_t fr[MAX_FRAMES];
		size_t nfr = 0;
		for (size_t j = 0; rc == 0 && j < nk; j++) /* the kernel's chain: its first frame is kip */
			rc = frame_of(b, se, k->pid, k->inc, kips[j], true, &fr[nfr++]);
		if (!nk && k->kip)
			rc = frame_of(b, se, k->pid, k->inc, k->kip, true, &fr[nfr++]);
		else if (k->ip && (nchain == 0 || ips[0] != k->ip))
			rc = frame_of(b, se, k->pid, k->inc, k->ip, false, &fr[nfr++]);
		for (size_t j = 0; rc == 0 && j < nchain && nfr < MAX_FRAMES; j++)
			rc = frame_of(b, se, k->pid, k->inc, ips[j], false, &fr[nfr++]);
		if (rc == 0 && nfr == 0)
			rc = frame_of(b, se, k->pid, k->inc, 0, true, &fr[nfr++]); /* ip 0 and no kip: the kernel */
		if (rc == 0)
			rc = add_stack(b, se, k->pid, k->tid, k->inc, fr, nfr, k->count);
		sat_inc_u64(samples, k->count);
	}
	qm_chains_free(&uc);
	qm_chains_free(&kc);
	free(ids);
	qm_kset_free(&ks);
	return rc < 0 ? rc : 0;
}

/* The time one sample of a session whose records' periods differ stands for: its records' samples
 * x their own periods over its samples, to the nearest ns (the mean; every stack of the session
 * gets it, not its own records' period, so the session's total is exact and a stack met only in
 * some records is off by up to the periods' difference; with --pid/--comm the whole session's mix).
 * Left at fallback where a block has no sum (an older collector's), the store has no such column
 * (an older one opened read-only), the session has an older collector's cpu_samples rows (records
 * without a block, which the join would leave out) or none is found. */
static uint64_t mixed_sample_ns(struct store *s, const struct build *b, const struct sess *se, int64_t lo,
				int64_t hi, uint64_t fallback)
{
	bool old_rows = false;
	if (!b->have_block_samples || qm_rows_needed(s, b, se->id, &old_rows) < 0 || old_rows)
		return fallback;
	struct db_stmt *st = store_stmt(s, q_periods);
	if (!st)
		return fallback;
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	unsigned __int128 ns = 0, n = 0;
	bool whole = true;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (db_col_null(st, 0))
			whole = false;
		uint64_t c = db_col_u64(st, 0);
		ns += (unsigned __int128)c * sample_period_ns(db_col_u64(st, 1), db_col_u64(st, 2));
		n += c;
	}
	db_reset(st);
	if (rc < 0 || !whole || n == 0)
		return fallback;
	return (uint64_t)((ns + n / 2) / n);
}

/* The session's intervals in [lo, hi]: their sums into the result, its wall range into si.
 * 1: none in range (the session adds nothing), 0: read, negative errno: failed. */
static int read_info(struct store *s, struct build *b, struct sess *se, int64_t lo, int64_t hi,
		     struct query_session_info *si)
{
	struct query_result *r = b->r;
	struct db_stmt *st = store_stmt(s, q_info);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc, ev_min = 0, ev_max = 0, bmin = 0, bmax = 0;
	int64_t tmin = 0, tmax = 0;
	uint64_t n = 0, spn = 0;
	bool mixed = false; /* records of different periods */
	while ((rc = db_step(st)) == 1) {
		/* values an older collector stored unchecked are read within today's record limits */
		uint64_t lost = db_col_u64(st, 0), iv = db_col_u64(st, 3), fq = db_col_u64(st, 2);
		if (iv > VALIDATE_MAX_INTERVAL_NS)
			iv = VALIDATE_MAX_INTERVAL_NS;
		sat_inc_u64(&r->lost, lost < VALIDATE_MAX_SAMPLE_LOST ? lost : VALIDATE_MAX_SAMPLE_LOST);
		sat_inc_u64(&r->interval_ns, iv);
		/* the period the agent sampled with at that frequency (a timer's is a little longer
		 * than 1/freq_hz: agent/sampler.c choose_event), so that time is counts x period */
		uint64_t pd = db_col_u64(st, 6), one = sample_period_ns(fq, pd);
		mixed |= n > 0 && one != spn;
		spn = one;
		if (fq > si->freq_hz || (fq == si->freq_hz && si->period == 0)) {
			si->freq_hz = fq;
			si->period = pd;
		}
		int be = (int)db_col_i64(st, 1), ev = (int)db_col_i64(st, 5);
		/* first_ns: the start of the first interval (issue 39: pprof's duration), not its end */
		int64_t t = db_col_i64(st, 4), t0 = t - (int64_t)iv;
		if (n == 0 || be < bmin)
			bmin = be;
		if (n == 0 || be > bmax)
			bmax = be;
		if (n == 0 || ev < ev_min)
			ev_min = ev;
		if (n == 0 || ev > ev_max)
			ev_max = ev;
		if (n == 0 || t0 < tmin)
			tmin = t0;
		if (n == 0 || t > tmax)
			tmax = t;
		n++;
	}
	db_reset(st);
	if (rc < 0)
		return rc;
	if (n > 0) {
		if (b->be_min == 0 || bmin < b->be_min)
			b->be_min = bmin;
		if (bmax > b->be_max)
			b->be_max = bmax;
		si->first_ns = sat_add_i64(se->realtime_ns, tmin);
		si->last_ns = sat_add_i64(se->realtime_ns, tmax);
		/* the result's one printed frequency and period: the largest frequency's; each session's
		 * own period turns its samples into time (query_stack.sample_ns) */
		si->sample_ns = sample_period_ns(si->freq_hz, si->period);
		if (mixed)
			si->sample_ns = mixed_sample_ns(s, b, se, lo, hi, si->sample_ns);
		se->sample_ns = si->sample_ns;
		if (si->freq_hz > r->freq_hz || (si->freq_hz == r->freq_hz && r->period == 0)) {
			r->freq_hz = si->freq_hz;
			r->period = si->period;
		}
		/* the first session with intervals sets the range: a Hello without a wall clock (realtime 0)
		 * starts its first interval at 0, which is a time, not "none" */
		bool first = r->intervals == 0;
		if (first || si->first_ns < r->first_ns)
			r->first_ns = si->first_ns;
		if (first || si->last_ns > r->last_ns)
			r->last_ns = si->last_ns;
		sat_inc_u64(&r->intervals, n);
	} else {
		return 1; /* no intervals in range */
	}
	if (ev_min == 0)
		return 0;
	char name[128] = "";
	if (ev_min != ev_max) {
		snprintf(name, sizeof(name), "mixed");
	} else {
		st = store_stmt(s, q_event);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, se->id);
		db_bind_i64(st, 2, ev_min);
		if (db_step(st) == 1)
			snprintf(name, sizeof(name), "%s", db_col_text(st, 0));
		else
			snprintf(name, sizeof(name), "event#%d", ev_min);
		db_reset(st);
	}
	if (!r->event[0])
		snprintf(r->event, sizeof(r->event), "%s", name);
	else if (strcmp(r->event, name) != 0)
		snprintf(r->event, sizeof(r->event), "mixed");
	return 0;
}

static int run_session(struct store *s, struct build *b, struct sess *se, const struct query_opts *o)
{
	const struct query_filter *f = &o->f;
	int64_t lo = f->since_ns ? sat_sub_i64(f->since_ns, se->realtime_ns) : INT64_MIN;
	int64_t hi = f->until_ns ? sat_sub_i64(f->until_ns, se->realtime_ns) : INT64_MAX;
	struct query_result *r = b->r;
	if (qm_grow((void **)&r->sessions, &b->capsessions, r->nsessions + 1, sizeof(*r->sessions)) < 0)
		return -ENOMEM;
	struct query_session_info si = {.id = se->id, .agent_id = se->agent_id, .board = se->board};
	int rc = read_info(s, b, se, lo, hi, &si);
	if (rc == 1)
		return 0; /* no intervals in range */
	if (rc == 0)
		rc = qm_load_maps(s, se);
	if (rc == 0)
		rc = qm_vdso_of(s, b, se);
	if (rc == 0)
		rc = qm_perf_map_of(s, se);
	if (rc == 0 && !o->kallsyms) /* --kallsyms FILE overrides what the agents sent */
		rc = qm_kernel_of(s, b, se);
	if (rc == 0)
		rc = qm_load_tasks(s, b, se);
	if (rc == 0)
		rc = qm_load_incs(s, b, se);
	if (rc == 0)
		rc = qm_sess_sort(se);
	struct query_filter fs; /* --comm as the session's pids: its blocks passed over as for --pid */
	int none = rc == 0 ? qm_comm_pids(se, f, &fs) : 0;
	if (rc == 0 && !none)
		rc = read_keys(s, b, se, &fs, lo, hi, &si.samples);
	if (rc == 0 && !none && o->series)
		rc = qm_read_series(s, b, se, &fs, lo, hi);
	if (rc == 0) {
		r->sessions[r->nsessions++] = si;
		sat_inc_u64(&r->total, si.samples);
	}
	return rc;
}

/* What one session adds to the result, taken back when it fails: its stacks and points (their keys
 * hold its session id, so no later session finds them) and the sums read_info added. */
struct undo {
	size_t nstacks, nfidx, npoints;
	uint64_t lost, intervals, interval_ns, freq_hz, period;
	int64_t first_ns, last_ns;
	int be_min, be_max;
	char event[sizeof(((struct query_result *)0)->event)];
};

static void undo_mark(const struct build *b, struct undo *u)
{
	const struct query_result *r = b->r;
	*u = (struct undo){.nstacks = r->nstacks,
			   .nfidx = b->nfidx,
			   .npoints = r->npoints,
			   .lost = r->lost,
			   .intervals = r->intervals,
			   .interval_ns = r->interval_ns,
			   .freq_hz = r->freq_hz,
			   .period = r->period,
			   .first_ns = r->first_ns,
			   .last_ns = r->last_ns,
			   .be_min = b->be_min,
			   .be_max = b->be_max};
	memcpy(u->event, r->event, sizeof(u->event));
}

static void undo_apply(struct build *b, const struct undo *u)
{
	struct query_result *r = b->r;
	r->nstacks = u->nstacks;
	b->nfidx = u->nfidx;
	r->npoints = u->npoints;
	r->lost = u->lost;
	r->intervals = u->intervals;
	r->interval_ns = u->interval_ns;
	r->freq_hz = u->freq_hz;
	r->period = u->period;
	r->first_ns = u->first_ns;
	r->last_ns = u->last_ns;
	b->be_min = u->be_min;
	b->be_max = u->be_max;
	memcpy(r->event, u->event, sizeof(u->event));
}

/* One session read into the result; one that cannot be read is left out with one warning (per
 * process and session) and counted in skipped: a damaged or forged session never fails the views
 * of the others. Out of memory or a failing store fails the query. */
static int add_session(struct store *s, struct build *b, struct sess *se, const struct query_opts *o)
{
	struct undo u;
	undo_mark(b, &u);
	int rc = run_session(s, b, se, o);
	/* out of memory, or the store itself failing (a lost PostgreSQL connection, damage met while
	 * reading): the query fails, as it did, rather than leaving every session out */
	if (rc == 0 || rc == -ENOMEM || store_needs_reconnect(s) || store_damaged(s))
		return rc;
	undo_apply(b, &u);
	b->r->skipped++;
	char key[64];
	snprintf(key, sizeof(key), "query-skip %lld", (long long)se->id);
	if (log_once(key))
		log_warn(
		    "query: session %lld of agent %s left out of the views: %s (collector check --store ... "
		    "looks at the store; collector prune --session %lld removes it)",
		    (long long)se->id, se->agent_id, strerror(-rc), (long long)se->id);
	return 0;
}

static void build_free(struct build *b)
{
	key_map_free(&b->frame_ids);
	key_map_free(&b->stack_ids);
	free(b->stack_off);
	sym_resolver_free(b->sr);
	for (size_t i = 0; i < b->nkboots; i++)
		sym_resolver_free(b->kboots[i].sr);
	free(b->kboots);
}

int query_run(struct store *s, const struct query_opts *o, struct query_result **out)
{
	*out = NULL;
	const struct query_filter *f = &o->f;
	struct query_result *r = calloc(1, sizeof(*r));
	struct result_priv *p = calloc(1, sizeof(*p));
	if (!r || !p) {
		free(r);
		free(p);
		return -ENOMEM;
	}
	r->priv = p;
	struct build b = {.r = r,
			  .have_tasks = store_has_table(s, "sample_tasks"),
			  .have_blocks = store_has_table(s, "sample_blocks"),
			  .have_kstacks = store_has_table(s, "sample_kernel_stacks"),
			  .have_rows = store_has_table(s, "cpu_samples")};
	b.have_pid_cols = b.have_blocks && store_has_column(s, "sample_blocks", "pid_bits");
	b.have_incs = store_has_table(s, "sample_task_incs");
	b.have_block_samples = b.have_blocks && store_has_column(s, "sample_blocks", "samples");
	b.have_key_ids = b.have_blocks && store_has_key_ids(s);
	int rc = sym_resolver_create(o->symfs, &b.sr);
	if (rc == 0 && o->debug_dir)
		rc = sym_resolver_set_debug_dir(b.sr, o->debug_dir);
	if (rc == 0 && o->kallsyms) {
		rc = sym_resolver_load_kallsyms(b.sr, o->kallsyms);
		if (rc == -ENOENT)
			log_error("--kallsyms %s: no kernel function with an address in it (read /proc/kallsyms as root "
				  "on the board: without privilege every address reads 0)",
				  o->kallsyms);
		else if (rc < 0)
			log_error("--kallsyms %s: %s", o->kallsyms, strerror(-rc));
	}
	/* one read transaction for all the statements below (SQLite: one lock, not one per stack read) */
	int reading = rc == 0 ? store_read_begin(s) : 0;
	struct db_stmt *st = rc == 0 ? store_stmt(s, q_sessions) : NULL;
	if (rc == 0 && !st)
		rc = -EIO;
	/* The sessions first: their statement is done before the per-session ones run. */
	struct sess *ss = NULL;
	size_t nss = 0, capss = 0;
	while (rc == 0 && (rc = db_step(st)) == 1) {
		rc = 0;
		int64_t id = db_col_i64(st, 0);
		const char *agent = db_col_text(st, 1), *board = db_col_text(st, 2);
		if ((f->nsessions && !qm_in_sid_list(f->sessions, f->nsessions, id)) ||
		    (f->nagents && !qm_in_str_list(f->agents, f->nagents, agent)) ||
		    (f->nboards && !qm_in_str_list(f->boards, f->nboards, board)))
			continue;
		if (qm_grow((void **)&ss, &capss, nss + 1, sizeof(*ss)) < 0) {
			rc = -ENOMEM;
			break;
		}
		memset(&ss[nss], 0, sizeof(ss[nss]));
		ss[nss].id = id;
		ss[nss].realtime_ns = db_col_i64(st, 3);
		ss[nss].agent_id = str_pool_intern(&b.pool, agent);
		ss[nss].board = str_pool_intern(&b.pool, board);
		if (!ss[nss].agent_id || !ss[nss].board)
			rc = -ENOMEM;
		nss++;
	}
	if (st)
		db_reset(st);
	for (size_t i = 0; rc == 0 && i < nss; i++)
		rc = add_session(s, &b, &ss[i], o);
	store_read_end(s, reading);
	if (rc == 0 && (r->blocks_read || r->blocks_passed))
		log_debug("query: %llu sample blocks read, %llu of the time range passed over by their pids",
			  (unsigned long long)r->blocks_read, (unsigned long long)r->blocks_passed);
	for (size_t i = 0; i < nss; i++)
		qm_sess_free(&ss[i]);
	free(ss);
	if (rc == 0) {
		for (size_t i = 0; i < r->nstacks; i++)
			r->stacks[i].frames = b.fidx + b.stack_off[i];
		snprintf(r->backend, sizeof(r->backend), "%s",
			 b.be_min != b.be_max ? "mixed" : b.be_min == 1 ? "bpf" : b.be_min == 2 ? "ring" : "");
	}
	p->pool = b.pool;
	p->fidx = b.fidx;
	build_free(&b);
	if (rc < 0) {
		query_result_free(r);
		return rc;
	}
	*out = r;
	return 0;
}

void query_result_free(struct query_result *r)
{
	if (!r)
		return;
	struct result_priv *p = r->priv;
	if (p) {
		str_pool_free(&p->pool);
		free(p->fidx);
		free(p);
	}
	free(r->frames);
	free(r->stacks);
	free(r->sessions);
	free(r->points);
	free(r);
}

int query_stack_folded(const struct query_result *r, const struct query_stack *k, char *buf, size_t len)
{
	size_t pos = 0;
	int total = 0;
	for (size_t j = k->nframes; j-- > 0;) {
		const char *fn = r->frames[k->frames[j]].function;
		if (j + 1 != k->nframes) {
			if (pos + 1 < len)
				buf[pos++] = ';';
			total++;
		}
		for (const char *c = fn; *c; c++, total++)
			if (pos + 1 < len)
				buf[pos++] = *c == ';' ? ':' : *c;
	}
	if (len)
		buf[pos < len ? pos : len - 1] = 0;
	return total;
}
