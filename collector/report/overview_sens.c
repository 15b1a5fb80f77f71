/* The overview's sensitivity section: the session's trace windows grouped
 * per thread, each group's approximate eDAG (EDAN's lambda/Lambda), and the
 * locality walls of the roofline from the cache misses the windows saw. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "overview.h"
#include "overview_sensf.h"
#include "program_name.h"
#include "store/store_trace.h"

struct tgroup {
	int32_t pid, tid;
	struct edag_window_result *w;
	size_t n;
	uint64_t flops, misses[EDAG_MAX_LEVELS];
	struct edag_func_acc fa; /* per-function split of its voting windows */
};

struct trace_acc {
	struct overview *ov;
	struct edag_state *st;
	struct sensf *sf; /* NULL: no per-function split (no symbols could be loaded) */
	struct tgroup *g;
	size_t ng;
	int rc;
	size_t last_g;	   /* group of the previous record (index + 1; 0: none) */
	uint64_t pos_next; /* trace_pos that continues it (pieces of a full trace), 0 if none */
};

static struct tgroup *tgroup_for(struct trace_acc *a, int32_t pid, int32_t tid)
{
	for (size_t i = 0; i < a->ng; i++)
		if (a->g[i].pid == pid && a->g[i].tid == tid)
			return &a->g[i];
	if (a->ng >= OV_MAX_SENS)
		return NULL;
	struct tgroup *ng = realloc(a->g, (a->ng + 1) * sizeof(*ng));
	if (!ng)
		return NULL;
	a->g = ng;
	struct tgroup *g = &a->g[a->ng++];
	memset(g, 0, sizeof(*g));
	g->pid = pid;
	g->tid = tid;
	return g;
}

/* The fleet view's filters: the window's wall-clock start in [since, until), its pid listed. */
static bool window_kept(const struct overview *ov, const Prof__TraceWindow *tw)
{
	int64_t wall = (int64_t)(ov->realtime_ns + tw->t_ns);
	if ((ov->since_ns && wall < ov->since_ns) || (ov->until_ns && wall >= ov->until_ns))
		return false;
	if (!ov->npids)
		return true;
	for (size_t i = 0; i < ov->npids; i++)
		if (ov->pids[i] == tw->pid)
			return true;
	return false;
}

static int trace_cb(const struct store_trace_row *row, void *arg)
{
	struct trace_acc *a = arg;
	const Prof__TraceWindow *tw = row->tw;
	if (overview_past_deadline(a->ov))
		return -ETIMEDOUT;
	if (!window_kept(a->ov, tw)) {
		a->ov->sens_windows_out_of_range++;
		a->last_g = 0;
		return 0;
	}
	struct tgroup *g = tgroup_for(a, tw->pid, tw->tid);
	if (!g)
		return 0; /* more threads than the table holds: the first ones are shown */
	if (tw->n_pc_delta == 0) {
		/* a window the agent lost in its warm-up (agent/trace_source.c sends it empty): it
		 * gives no vote, but edag_approx_combine counts it among the discarded */
		struct edag_window_result *nw = realloc(g->w, (g->n + 1) * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		g->w = nw;
		memset(&g->w[g->n], 0, sizeof(*nw));
		g->w[g->n].capture = tw->capture;
		g->w[g->n].end_reason = tw->end_reason;
		g->n++;
		a->last_g = 0;
		return 0;
	}
	/* Pieces of one full trace (agent trace-import, trace_pos) are one window, as in collector edag. */
	bool joined = tw->trace_pos > 1 && a->last_g == (size_t)(g - a->g) + 1 && a->pos_next == tw->trace_pos &&
		      g->n > 0;
	struct edag_window_result *w;
	if (joined) {
		w = &g->w[--g->n]; /* re-opened: its metrics are taken again below */
		for (unsigned k = 0; k < EDAG_MAX_LEVELS; k++)
			g->misses[k] -= w->mt.level_miss[k];
		w->info.represented_insns += tw->represented_insns;
	} else {
		struct edag_window_result *nw = realloc(g->w, (g->n + 1) * sizeof(*nw));
		if (!nw)
			return -ENOMEM;
		g->w = nw;
		w = &g->w[g->n];
		memset(w, 0, sizeof(*w));
		w->info = (struct edag_window_info){.index = tw->window_index, .pid = tw->pid, .tid = tw->tid,
						    .t_ns = tw->t_ns, .share = tw->sampled_share,
						    .represented_insns = tw->represented_insns};
		if (!(w->info.share > 0 && w->info.share <= 1))
			w->info.share = 1;
		edag_window_start(a->st, tw); /* reset, and its warm-up lines if any */
		w->capture = tw->capture;
		w->warm_insns = tw->warm_insns;
		if (a->sf)
			sensf_window_start(a->sf);
	}
	w->stop_ns += tw->stop_ns;
	w->end_reason = tw->end_reason; /* every piece carries the window's */
	a->last_g = 0;
	uint64_t n0 = w->n_insns;
	struct edag_window_iter it;
	struct edag_insn in;
	int rc;
	edag_window_iter_init(&it, tw);
	while ((rc = edag_window_next(&it, &in)) > 0) {
		struct edag_vertex v;
		if ((rc = edag_step(a->st, &in, &v)) < 0)
			break;
		if (a->sf && (rc = sensf_step(a->sf, tw->pid, in.pc, &v)) < 0)
			break;
		w->n_insns++;
		a->ov->trace_insns++;
		if (in.cls == EDAG_FLOAT) {
			g->flops++;
			a->ov->trace_flops++;
		}
	}
	if (rc < 0) {
		log_warn("trace window %u (seq %llu) skipped: %s", tw->window_index, (unsigned long long)row->seq,
			 strerror(-rc));
		if (a->sf)
			sensf_piece_end(a->sf, false, NULL); /* the piece read gives no vote */
		if (joined) { /* keep what the run had before this piece */
			w->n_insns = n0;
			for (unsigned k = 0; k < EDAG_MAX_LEVELS; k++)
				g->misses[k] += w->mt.level_miss[k];
			g->n++;
		}
		return 0;
	}
	if (w->n_insns == 0)
		return 0;
	if (a->sf) { /* a sampled window votes as in edag_approx_combine */
		bool sampled = w->capture == 1 || w->capture == 2;
		bool vote = !sampled || (w->n_insns >= EDAG_WINDOW_MIN_INSNS && w->end_reason != EDAG_END_TIME);
		if ((rc = sensf_piece_end(a->sf, vote, &g->fa)) < 0)
			return rc;
	}
	edag_metrics_get(a->st, &w->mt);
	for (unsigned k = 0; k < EDAG_MAX_LEVELS; k++)
		g->misses[k] += w->mt.level_miss[k];
	g->n++;
	a->last_g = (size_t)(g - a->g) + 1;
	a->pos_next = tw->trace_pos ? tw->trace_pos + (w->n_insns - n0) : 0;
	return 0;
}

static void locality_walls(struct overview *ov, const struct tgroup *g, size_t ng)
{
	uint64_t flops = 0, miss[EDAG_MAX_LEVELS] = {0};
	for (size_t i = 0; i < ng; i++) {
		flops += g[i].flops;
		for (unsigned k = 0; k < EDAG_MAX_LEVELS; k++)
			miss[k] += g[i].misses[k];
	}
	if (ov->edag.nlevels == 0 || flops == 0)
		return;
	const char *names[EDAG_MAX_LEVELS];
	double bytes[EDAG_MAX_LEVELS];
	for (unsigned k = 0; k < ov->edag.nlevels; k++) {
		names[k] = ov->edag.level[k].name;
		bytes[k] = (double)miss[k] * ov->edag.level[k].line;
	}
	ov->nwalls = roofline_walls((double)flops, names, bytes, ov->edag.nlevels, ov->walls, ROOFLINE_MAX_WALLS);
}

/* "; 3 of 9 windows discarded: 2 shorter than 256 instructions, 1 cut by the stop-time limit"
 * (nothing when none was) */
static void discarded_text(const struct edag_approx *ap, char *buf, size_t len)
{
	size_t d = ap->discarded_short + ap->discarded_cut;
	if (!d || len == 0) {
		if (len)
			buf[0] = '\0';
		return;
	}
	char s[64] = "", c[64] = "";
	if (ap->discarded_short)
		snprintf(s, sizeof(s), "%zu shorter than %u instructions", ap->discarded_short, EDAG_WINDOW_MIN_INSNS);
	if (ap->discarded_cut)
		snprintf(c, sizeof(c), "%zu cut by the stop-time limit", ap->discarded_cut);
	snprintf(buf, len, "; %zu of %zu windows discarded: %s%s%s", d, ap->taken, s, s[0] && c[0] ? ", " : "", c);
}

/* "6 replay windows (500000 warm-up + 50000 recorded instructions each), stopped 264 ms" */
static void how_obtained(const struct edag_approx *ap, char *buf, size_t len)
{
	static const char *const kinds[4] = {"single-step", "single-step", "replay", "full-trace"};
	int n = 0;
	for (int k = 0; k < 4; k++) {
		size_t c = ap->by_capture[k] + (k == 0 ? ap->by_capture[1] : 0);
		if (k == 1 || c == 0)
			continue;
		n += snprintf(buf + n, len - (size_t)n, "%s%zu %s %s", n ? ", " : "", c, kinds[k],
			      k == 3 ? (c > 1 ? "runs" : "run") : c > 1 ? "windows" : "window");
		if (n < 0 || (size_t)n >= len)
			return;
	}
	double per = (double)ap->sampled_insns / (double)ap->windows;
	if (ap->warm_insns)
		n += snprintf(buf + n, len - (size_t)n, " (%.0f warm-up + %.0f recorded instructions each)",
			      (double)ap->warm_insns / (double)ap->windows, per);
	else
		n += snprintf(buf + n, len - (size_t)n, " (%.0f instructions each, no warm-up)", per);
	if (n > 0 && (size_t)n < len && ap->stop_ns)
		n += snprintf(buf + n, len - (size_t)n, ", thread stopped %.1f ms", (double)ap->stop_ns / 1e6);
	if (n > 0 && (size_t)n < len)
		discarded_text(ap, buf + n, len - (size_t)n);
}

int overview_sensitivity(struct store *st, int64_t sid, struct overview *ov)
{
	struct trace_acc a = {.ov = ov};
	char err[200];
	if (edag_config_check(&ov->edag, err, sizeof(err)) < 0) {
		snprintf(ov->sens_note, sizeof(ov->sens_note), "bad eDAG machine parameters: %.200s", err);
		return 0;
	}
	int rc = edag_new(&ov->edag, &a.st);
	if (rc < 0)
		return rc;
	if (sensf_open(st, sid, ov->symfs, &a.sf) < 0)
		a.sf = NULL; /* the thread rows without the split */
	rc = store_list_trace_windows(st, sid, -1, trace_cb, &a);
	edag_free(a.st);
	size_t none_taken = 0, none_short = 0, none_cut = 0; /* threads whose windows all were discarded */
	for (size_t i = 0; rc >= 0 && i < a.ng; i++) {
		struct tgroup *g = &a.g[i];
		struct edag_approx ap;
		if (g->n == 0)
			continue;
		if (edag_approx_combine(g->w, g->n, ov->edag.m, ov->edag.alpha0, &ap) < 0) {
			none_taken += ap.taken;
			none_short += ap.discarded_short;
			none_cut += ap.discarded_cut;
			continue;
		}
		struct sens_row *r = &ov->sens[ov->nsens];
		memset(r, 0, sizeof(*r));
		char prog[40];
		program_of_target(ov->target, prog, sizeof(prog));
		thread_label(prog, g->pid, g->tid, r->name, sizeof(r->name));
		r->windows = ap.windows;
		r->windows_taken = ap.taken;
		r->windows_short = ap.discarded_short;
		r->windows_cut = ap.discarded_cut;
		r->insns = ap.sampled_insns;
		r->W = ap.W.value;
		r->D = fmin(ap.D.value, ap.W.value);
		bool upper = ov->edag.nlevels > 0 && ap.cold_bound;
		if (upper && ap.lambda_upper > ap.lambda.value) {
			/* an upper bound takes D's upper side too (lambda grows with D): the windows'
			 * D in series, at most W */
			r->D = fmin(fmax(ap.D.value, ap.D_series.value), ap.W.value);
		}
		r->C = ap.cp_compute.value;
		r->m = ov->edag.m;
		r->alpha0 = ov->edag.alpha0;
		r->Lambda_lo = ap.Lambda.lo;
		r->Lambda_hi = ap.Lambda.hi;
		r->lambda_lo = ap.lambda.lo;
		r->lambda_hi = ap.lambda.hi;
		r->cold_per_insn = ap.represented_insns > 0 ? ap.W_cold.value / ap.represented_insns : 0;
		r->upper_bound = upper;
		if (upper) { /* the interval's high end is the bound's */
			double du = ap.lambda_upper * ov->edag.alpha0 + ap.cp_compute.value;
			r->lambda_hi = fmax(r->lambda_hi, ap.lambda_upper);
			r->Lambda_hi = fmax(r->Lambda_hi, du > 0 ? ap.lambda_upper / du : 0);
		}
		double den = ap.lambda_cold_hits * ov->edag.alpha0 + ap.cp_compute.value;
		r->Lambda_cold_hits = den > 0 ? ap.lambda_cold_hits / den : 0;
		r->lambda_cold_hits = ap.lambda_cold_hits;
		how_obtained(&ap, r->how, sizeof(r->how));
		if (sens_compute(r) == 0) {
			struct sens_func_row *fr = NULL;
			size_t nf = 0;
			if (a.sf && (rc = sensf_rows(a.sf, &g->fa, r, &fr, &nf)) < 0)
				break;
			for (size_t k = 0; k < nf; k++)
				sensf_put_row(ov, &fr[k]);
			if (ov->sens_sink)
				rc = ov->sens_sink(ov->sens_sink_arg, r, fr, nf);
			free(fr);
			if (rc < 0)
				break;
			ov->nsens++;
		}
	}
	ov->sens_windows_no_row = none_taken;
	ov->sens_no_row_short = none_short;
	ov->sens_no_row_cut = none_cut;
	if (rc >= 0) {
		locality_walls(ov, a.g, a.ng);
		if (a.ng == 0)
			snprintf(ov->sens_note, sizeof(ov->sens_note),
				 "no trace windows in this session (capture them with agent profile, or agent trace)");
		else if (ov->nsens == 0 && none_short + none_cut > 0)
			snprintf(ov->sens_note, sizeof(ov->sens_note),
				 "no row: all %zu trace windows discarded (%zu shorter than %u instructions, %zu cut by "
				 "the agent's stop-time limit: raise agent profile --max-duty)",
				 none_taken, none_short, EDAG_WINDOW_MIN_INSNS, none_cut);
		else if (none_short + none_cut > 0) /* threads without a row beside the rows */
			snprintf(ov->sens_note, sizeof(ov->sens_note),
				 "no row for threads whose %zu trace windows were all discarded (%zu shorter than %u "
				 "instructions, %zu cut by the agent's stop-time limit)",
				 none_taken, none_short, EDAG_WINDOW_MIN_INSNS, none_cut);
	}
	sensf_free(a.sf);
	for (size_t i = 0; i < a.ng; i++) {
		free(a.g[i].w);
		edag_func_free(&a.g[i].fa);
	}
	free(a.g);
	return rc < 0 ? rc : 0;
}
