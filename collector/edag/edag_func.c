/* Per-function split of a window's eDAG figures (edag_func.h). */
#include "edag_func.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

void edag_func_window(struct edag_func_acc *a)
{
	a->dmax = 0;
}

static struct edag_func_fig *fig_of(struct edag_func_acc *a, uint32_t fid)
{
	for (size_t i = a->n; i-- > 0;)
		if (a->f[i].fid == fid)
			return &a->f[i];
	if (a->n == a->cap) {
		size_t nc = a->cap ? a->cap * 2 : 16;
		struct edag_func_fig *nf = realloc(a->f, nc * sizeof(*nf));
		if (!nf)
			return NULL;
		a->f = nf;
		a->cap = nc;
	}
	a->f[a->n] = (struct edag_func_fig){.fid = fid};
	return &a->f[a->n++];
}

int edag_func_add(struct edag_func_acc *a, uint32_t fid, const struct edag_vertex *v)
{
	struct edag_func_fig *f = fig_of(a, fid);
	if (!f)
		return -ENOMEM;
	f->insns++;
	if (v->memory) {
		f->W++;
		f->W_cold += v->cold;
	}
	if (v->depth > a->dmax) {
		f->D += v->depth - a->dmax;
		a->dmax = v->depth;
	}
	return 0;
}

int edag_func_merge(struct edag_func_acc *tot, const struct edag_func_acc *piece)
{
	for (size_t i = 0; i < piece->n; i++) {
		const struct edag_func_fig *p = &piece->f[i];
		struct edag_func_fig *t = fig_of(tot, p->fid);
		if (!t)
			return -ENOMEM;
		t->insns += p->insns;
		t->W += p->W;
		t->D += p->D;
		t->W_cold += p->W_cold;
	}
	return 0;
}

double edag_func_lambda(const struct edag_func_fig *f, double m)
{
	return ((double)f->W - (double)f->D) / m + (double)f->D;
}

double edag_func_lambda_cold_hits(const struct edag_func_fig *f, double m)
{
	double w = (double)(f->W - (f->W_cold < f->W ? f->W_cold : f->W)), d = fmin((double)f->D, w);
	return (w - d) / m + d;
}

bool edag_func_cold_bound(const struct edag_func_fig *f)
{
	return f->W > 0 && (double)f->W_cold > EDAG_COLD_REL * (double)f->W;
}

const struct edag_func_fig *edag_func_get(const struct edag_func_acc *a, uint32_t fid)
{
	for (size_t i = 0; i < a->n; i++)
		if (a->f[i].fid == fid)
			return &a->f[i];
	return NULL;
}

void edag_func_free(struct edag_func_acc *a)
{
	free(a->f);
	*a = (struct edag_func_acc){0};
}
