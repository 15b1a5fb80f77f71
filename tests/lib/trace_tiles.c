/* A full trace's steady state in windows of the recorded length (trace_tiles.h). */
#include "trace_tiles.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int tiles_step(struct tiles *t, const struct edag_insn *in)
{
	if (t->max && t->n == t->max)
		return 0;
	struct edag_vertex v;
	int rc = edag_step(t->st, in, &v);
	if (rc < 0)
		return rc;
	if (t->fid && (rc = edag_func_add(&t->fa, t->fid(t->fid_arg, in->pc), &v)) < 0)
		return rc;
	if (++t->at < t->len)
		return 0;
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		struct edag_window_result *w = realloc(t->w, cap * sizeof(*w));
		if (!w)
			return -ENOMEM;
		t->w = w;
		t->cap = cap;
	}
	struct edag_window_result *r = &t->w[t->n++];
	*r = (struct edag_window_result){.n_insns = t->len, .capture = 3, .info = {.share = 1}};
	edag_metrics_get(t->st, &r->mt);
	if (t->keep_cache)
		edag_reset_keep_cache(t->st);
	else
		edag_reset(t->st);
	edag_func_window(&t->fa); /* the next tile's depth starts at 0, as the engine's */
	t->at = 0;
	return 0;
}

int tiles_feed(struct tiles *t, const struct edag_insn *in, unsigned nmark)
{
	if (!t->st)
		return 0;
	/* the steady state: from the second mark to the third (or reps more) */
	if (nmark >= 2 && nmark < 2 + (t->reps ? t->reps : 1))
		return tiles_step(t, in);
	/* the first repetition warms the caches the tiles keep (no vertices) */
	if (t->keep_cache && nmark == 1 && in->mem)
		edag_cache_warm(t->st, in->addr, in->size, !(in->mem & EDAG_MEM_READ));
	return 0;
}

int tiles_combine(const struct tiles *t, double m, double alpha0, struct edag_approx *out)
{
	if (!t->n)
		return -ENODATA;
	return edag_approx_combine(t->w, t->n, m, alpha0, out);
}

double tiles_share_a0(double lambda, double C, double alpha0)
{
	return lambda * alpha0 + C > 0 ? lambda * alpha0 / (lambda * alpha0 + C) : 0;
}

void tiles_free(struct tiles *t)
{
	if (t->st)
		edag_free(t->st);
	t->st = NULL;
	edag_func_free(&t->fa);
	free(t->w);
	t->w = NULL;
	t->n = t->cap = 0;
}

static double json_after(const char *js, const char *key)
{
	const char *s = strstr(js, "\"estimate\":");
	const char *p = s ? strstr(s, key) : NULL;
	return p ? atof(p + strlen(key)) : NAN;
}

void tiles_edag_read(const char *js, struct tiles_edag *e)
{
	double n = json_after(js, "\"sampled_insns\":");
	e->insns = n;
	e->windows = json_after(js, "\"windows\":");
	e->W = json_after(js, "\"W\":{\"value\":") / n;
	e->lambda = json_after(js, "\"lambda\":{\"value\":") / n;
	e->D = json_after(js, "\"D\":{\"value\":") / n;
	e->C = json_after(js, "\"C\":{\"value\":") / n;
	e->cold = json_after(js, "\"W_cold\":{\"value\":") / n;
	e->lambda_lo = json_after(js, "\"lambda_cold_hits\":") / n;
	const char *b = strstr(js, "\"cold_bound\":");
	e->bound = b && strncmp(b + 13, "true", 4) == 0;
}

bool tiles_within(double got, double want, double rel, double abs_tol)
{
	return fabs(got - want) <= fmax(rel * fabs(want), abs_tol);
}

bool tiles_holds(double lo, double hi, double truth, double rel, double abs_tol)
{
	return truth >= lo - fmax(rel * fabs(lo), abs_tol) && truth <= hi + fmax(rel * fabs(hi), abs_tol);
}

bool tiles_verdict(double win, double lo, double truth, bool flagged, double abs_tol)
{
	return flagged ? tiles_holds(lo, win, truth, 0.10, abs_tol) : tiles_within(win, truth, 0.10, abs_tol);
}
