/* Latency sensitivity arithmetic (see sensitivity.h). */
#include "sensitivity.h"

#include <errno.h>
#include <math.h>

static double lambda_at(const struct sens_row *r, double m)
{
	return (r->W - r->D) / m + r->D;
}

int sens_compute(struct sens_row *r)
{
	if (!(r->m >= 1) || !(r->alpha0 > 0) || !(r->W >= r->D) || !(r->D >= 0) || !(r->C >= 0))
		return -EINVAL;
	r->lambda = lambda_at(r, r->m);
	double t0 = r->lambda * r->alpha0 + r->C;
	r->Lambda = t0 > 0 ? r->lambda / t0 : 0;
	if (r->Lambda_lo == 0 && r->Lambda_hi == 0)
		r->Lambda_lo = r->Lambda_hi = r->Lambda;
	r->w_over_d = r->D > 0 ? r->W / r->D : 0;
	r->mem_share = r->Lambda * r->alpha0;
	r->delta10 = r->Lambda > 0 ? 0.1 / r->Lambda : INFINITY;
	return 0;
}

double sens_slowdown(const struct sens_row *r, double m, double delta)
{
	if (!(m >= 1) || !(delta >= 0))
		return 0;
	double l = lambda_at(r, m), t0 = l * r->alpha0 + r->C;
	return t0 > 0 ? l * delta / t0 : 0;
}
