/* Latency sensitivity per function across a fleet (sens_fleet.h). */
#include "sens_fleet.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *or_empty(const char *s)
{
	return s ? s : "";
}

static int key_cmp(const struct sens_fleet_part *a, const struct sens_fleet_part *b)
{
	int c = strcmp(or_empty(a->name), or_empty(b->name));
	return c ? c : strcmp(or_empty(a->module), or_empty(b->module));
}

/* qsort has no context argument: the parts are the first member of what is sorted */
struct pref {
	const struct sens_fleet_part *p;
	const struct sens_fleet_group *g;
};

static int pref_key_cmp(const void *a, const void *b)
{
	const struct pref *x = a, *y = b;
	int c = key_cmp(x->p, y->p);
	return c ? c : (x->p->group > y->p->group) - (x->p->group < y->p->group);
}

static int pref_session_cmp(const void *a, const void *b)
{
	const struct pref *x = a, *y = b;
	return (x->g->session > y->g->session) - (x->g->session < y->g->session);
}

static int pref_agent_cmp(const void *a, const void *b)
{
	const struct pref *x = a, *y = b;
	return strcmp(or_empty(x->g->agent_id), or_empty(y->g->agent_id));
}

static int gptr_session_cmp(const void *a, const void *b)
{
	const struct sens_fleet_group *x = *(const struct sens_fleet_group *const *)a;
	const struct sens_fleet_group *y = *(const struct sens_fleet_group *const *)b;
	return (x->session > y->session) - (x->session < y->session);
}

static int gptr_agent_cmp(const void *a, const void *b)
{
	const struct sens_fleet_group *x = *(const struct sens_fleet_group *const *)a;
	const struct sens_fleet_group *y = *(const struct sens_fleet_group *const *)b;
	return strcmp(or_empty(x->agent_id), or_empty(y->agent_id));
}

static int row_cmp(const void *a, const void *b)
{
	const struct sens_fleet_row *x = a, *y = b;
	if (x->mem_share != y->mem_share)
		return x->mem_share < y->mem_share ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

/* Distinct sessions and agents of the run r[0..n) (sorted in place); top agent by weighted share. */
static void run_counts(struct pref *r, size_t n, struct sens_fleet_row *row)
{
	qsort(r, n, sizeof(*r), pref_session_cmp);
	for (size_t i = 0; i < n; i++)
		row->sessions += i == 0 || r[i].g->session != r[i - 1].g->session;
	qsort(r, n, sizeof(*r), pref_agent_cmp);
	double best = -1;
	for (size_t i = 0; i < n;) {
		size_t j = i;
		double s = 0;
		while (j < n && strcmp(or_empty(r[j].g->agent_id), or_empty(r[i].g->agent_id)) == 0) {
			s += (double)r[j].g->insns * r[j].p->mem_share;
			j++;
		}
		row->agents++;
		if (s > best) {
			best = s;
			snprintf(row->top_agent, sizeof(row->top_agent), "%s", or_empty(r[i].g->agent_id));
		}
		i = j;
	}
}

static void totals(const struct sens_fleet_group *g, size_t ng, struct sens_fleet_result *out, double *w)
{
	double sw = 0, s = 0, lo = 0, hi = 0;
	for (size_t i = 0; i < ng; i++) {
		double n = (double)g[i].insns;
		sw += n;
		s += n * g[i].mem_share;
		lo += n * g[i].mem_lo;
		hi += n * g[i].mem_hi;
		out->windows += g[i].windows;
		out->insns += g[i].insns;
		out->discarded_short += g[i].discarded_short;
		out->discarded_cut += g[i].discarded_cut;
		if (g[i].upper_bound) {
			out->upper_bound = true;
			out->upper_windows += g[i].windows;
		}
	}
	out->groups = ng;
	if (sw > 0) {
		out->mem_share = s / sw;
		out->mem_lo = lo / sw;
		out->mem_hi = hi / sw;
	}
	*w = sw;
}

static int distinct_counts(const struct sens_fleet_group *g, size_t ng, struct sens_fleet_result *out)
{
	if (!ng)
		return 0;
	const struct sens_fleet_group **gp = malloc(ng * sizeof(*gp));
	if (!gp)
		return -ENOMEM;
	for (size_t i = 0; i < ng; i++)
		gp[i] = &g[i];
	qsort(gp, ng, sizeof(*gp), gptr_session_cmp);
	for (size_t i = 0; i < ng; i++)
		out->sessions += i == 0 || gp[i]->session != gp[i - 1]->session;
	qsort(gp, ng, sizeof(*gp), gptr_agent_cmp);
	for (size_t i = 0; i < ng; i++)
		out->agents += i == 0 || strcmp(or_empty(gp[i]->agent_id), or_empty(gp[i - 1]->agent_id)) != 0;
	free(gp);
	return 0;
}

int sens_fleet_combine(const struct sens_fleet_group *g, size_t ng, const struct sens_fleet_part *p, size_t np,
		       struct sens_fleet_result *out)
{
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < np; i++)
		if (p[i].group >= ng)
			return -EINVAL;
	double sw;
	totals(g, ng, out, &sw);
	int rc = distinct_counts(g, ng, out);
	if (rc < 0 || np == 0)
		return rc;
	struct pref *r = malloc(np * sizeof(*r));
	out->rows = calloc(np, sizeof(*out->rows));
	if (!r || !out->rows) {
		free(r);
		sens_fleet_result_free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < np; i++)
		r[i] = (struct pref){.p = &p[i], .g = &g[p[i].group]};
	qsort(r, np, sizeof(*r), pref_key_cmp);
	for (size_t i = 0; i < np;) {
		size_t j = i;
		while (j < np && key_cmp(r[j].p, r[i].p) == 0)
			j++;
		struct sens_fleet_row *row = &out->rows[out->nrows++];
		snprintf(row->name, sizeof(row->name), "%s", or_empty(r[i].p->name));
		snprintf(row->module, sizeof(row->module), "%s", or_empty(r[i].p->module));
		double lam = 0, s = 0, lo = 0, hi = 0;
		for (size_t k = i; k < j; k++) {
			const struct sens_fleet_part *q = r[k].p;
			double n = (double)r[k].g->insns;
			row->insns += q->insns;
			lam += q->lambda;
			s += n * q->mem_share;
			lo += n * q->mem_lo;
			hi += n * q->mem_hi;
			/* one group's parts of one key are one (a repeated one is counted once) */
			bool again = k > i && r[k - 1].p->group == q->group;
			if (!again) {
				row->windows += r[k].g->windows;
				row->discarded_short += r[k].g->discarded_short;
				row->discarded_cut += r[k].g->discarded_cut;
			}
			/* f's own flag (sensf_rows' rule), not its thread's: a stream's cold lines
			 * beside it do not make a chase an upper bound */
			if (q->upper_bound) {
				row->upper_bound = true;
				if (!again)
					row->upper_windows += r[k].g->windows;
			}
		}
		row->lambda_per_insn = row->insns ? lam / (double)row->insns : 0;
		if (sw > 0) {
			row->mem_share = s / sw;
			row->mem_lo = lo / sw;
			row->mem_hi = hi / sw;
		}
		row->insn_share = out->insns ? (double)row->insns / (double)out->insns : 0;
		run_counts(r + i, j - i, row);
		i = j;
	}
	free(r);
	qsort(out->rows, out->nrows, sizeof(*out->rows), row_cmp);
	return 0;
}

void sens_fleet_result_free(struct sens_fleet_result *r)
{
	free(r->rows);
	memset(r, 0, sizeof(*r));
}
