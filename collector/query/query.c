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
	if (rc == 0)
		rc = qm_maps_ident(se);
	struct query_filter fs; /* --comm as the session's pids: its blocks passed over as for --pid */
	int none = rc == 0 ? qm_comm_pids(se, f, &fs) : 0;
	if (rc == 0 && !none)
		rc = qm_read_keys(s, b, se, &fs, lo, hi, &si.samples);
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
	uint64_t lost, intervals, interval_ns, freq_hz, period, other;
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
			   .other = r->other,
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
	r->other = u->other;
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
	store_read_renew(s); /* PostgreSQL: a failed statement ended the read snapshot's use */
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
	key_map_free(&b->name_stack_ids);
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
			  .have_rows = store_has_table(s, "cpu_samples"),
			  .merge_tasks = o->merge_tasks && !o->tasks_only,
			  .tasks_only = o->tasks_only,
			  .max_stacks = QUERY_MAX_STACKS};
	const char *fc = getenv("PROF_QUERY_FRAME_CACHE"); /* tests: the cache emptied often */
	b.frame_cache_max = fc && strtoll(fc, NULL, 10) > 0 ? (size_t)strtoll(fc, NULL, 10) : QM_FRAME_CACHE_MAX;
	const char *ms = getenv("PROF_QUERY_MAX_STACKS");
	if (ms && strtoll(ms, NULL, 10) > 0)
		b.max_stacks = (size_t)strtoll(ms, NULL, 10);
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
	/* one read transaction for all the statements below (SQLite: one lock, not one per stack read;
	 * PostgreSQL: one snapshot, so a session's dictionary holds every id of its blocks read after it) */
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
	for (size_t i = 0; rc == 0 && i < nss; i++) {
		rc = add_session(s, &b, &ss[i], o);
		/* its mappings, names and frame cache (up to ~32 MiB) go now, not after the last session's
		 * (what the result keeps of them is pooled) */
		qm_sess_free(&ss[i]);
	}
	store_read_end(s, reading);
	if (rc == 0 && r->other)
		log_warn("query: more than %zu distinct stacks (one per process, thread and call chain; "
			 "QUERY_MAX_STACKS): %llu samples of the rest are counted under \"[other]\"; narrow the "
			 "query (--since/--until, --comm, --pid, --agent) or group it by process",
			 b.max_stacks, (unsigned long long)r->other);
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
