#include <errno.h>
#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "calib_bench.h"

int cr_param(struct calib_result *r, const char *name, double value, const char *unit, const char *method,
	     double spread, double confidence)
{
	if (r->nparams >= CR_MAX_PARAMS || !isfinite(value))
		return -ENOSPC;
	struct calib_param *p = &r->params[r->nparams++];
	memset(p, 0, sizeof(*p));
	snprintf(p->name, sizeof(p->name), "%s", name);
	snprintf(p->unit, sizeof(p->unit), "%s", unit);
	snprintf(p->method, sizeof(p->method), "%s", method);
	p->value = value;
	p->spread = isnan(spread) ? 0 : spread < 0 ? INFINITY : spread;
	p->confidence = calib_confidence_bounded(confidence, p->spread);
	p->flagged = p->spread > CALIB_SPREAD_MAX || p->confidence < CALIB_CONFIDENCE_MIN;
	return 0;
}

struct calib_curve *cr_curve(struct calib_result *r, const char *name, const char *x_unit, const char *y_unit)
{
	if (r->ncurves >= CR_MAX_CURVES)
		return NULL;
	struct calib_curve *c = &r->curves[r->ncurves++];
	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	snprintf(c->x_unit, sizeof(c->x_unit), "%s", x_unit);
	snprintf(c->y_unit, sizeof(c->y_unit), "%s", y_unit);
	return c;
}

void cr_point(struct calib_curve *c, double x, const double *v, unsigned n)
{
	if (!c || c->n >= CR_MAX_POINTS || n == 0)
		return;
	if (n > CR_MAX_REPS)
		n = CR_MAX_REPS;
	struct calib_stat st;
	if (calib_stat(v, n, &st) < 0)
		return;
	size_t i = c->n++;
	c->x[i] = x;
	c->y[i] = st.median;
	c->spread[i] = st.spread;
	c->reps = n;
	for (unsigned k = 0; k < n; k++)
		c->raw[i][k] = v[k];
}

void cr_rep_y(const struct calib_curve *c, unsigned rep, double *y)
{
	for (size_t i = 0; i < c->n; i++)
		y[i] = c->raw[i][rep < c->reps ? rep : 0];
}

int cr_repeat(unsigned reps, cr_timed_fn fn, void *arg, double *v)
{
	double t;
	int rc = fn(arg, &t);
	if (rc < 0)
		return rc;
	for (unsigned i = 0; i < reps; i++)
		if ((rc = fn(arg, &v[i])) < 0)
			return rc;
	return 0;
}

static unsigned rnd(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static void shuffle(size_t *a, size_t n, unsigned *s)
{
	for (size_t i = n; i > 1; i--) {
		size_t j = rnd(s) % i;
		size_t t = a[i - 1];
		a[i - 1] = a[j];
		a[j] = t;
	}
}

void cr_chase_cycle(unsigned *next, size_t nnodes, size_t stride_elems, size_t nodes_per_page, unsigned seed)
{
	if (nnodes == 0)
		return;
	if (nodes_per_page == 0)
		nodes_per_page = 1;
	unsigned s = seed ? seed : 2463534242u;
	size_t *order = malloc(nnodes * sizeof(*order));
	size_t npages = (nnodes + nodes_per_page - 1) / nodes_per_page;
	size_t *pages = malloc(npages * sizeof(*pages));
	if (!order || !pages) {
		free(order);
		free(pages);
		for (size_t i = 0; i < nnodes; i++) /* degrade to a sequential cycle */
			next[i * stride_elems] = (unsigned)(((i + 1) % nnodes) * stride_elems);
		return;
	}
	for (size_t p = 0; p < npages; p++)
		pages[p] = p;
	shuffle(pages, npages, &s);
	size_t n = 0;
	for (size_t p = 0; p < npages; p++) {
		size_t first = pages[p] * nodes_per_page;
		size_t cnt = first + nodes_per_page <= nnodes ? nodes_per_page : nnodes - first;
		for (size_t i = 0; i < cnt; i++)
			order[n + i] = first + i;
		shuffle(order + n, cnt, &s);
		n += cnt;
	}
	for (size_t i = 0; i < nnodes; i++)
		next[order[i] * stride_elems] = (unsigned)(order[(i + 1) % nnodes] * stride_elems);
	free(order);
	free(pages);
}

long cr_scale(long n, double trial_s, double target_s, long lo, long hi)
{
	double f = trial_s > 0 ? target_s / trial_s : 16;
	if (f > 64)
		f = 64;
	double v = (double)n * f;
	if (v < (double)lo)
		v = (double)lo;
	if (v > (double)hi)
		v = (double)hi;
	return (long)v;
}
