/* Roofline arithmetic: the roof, the ridge point, dots and locality walls. */
#include "roofline.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static void copy_name(char *dst, const char *src)
{
	snprintf(dst, ROOFLINE_NAME_MAX, "%s", src ? src : "");
}

int roofline_add(struct roofline *r, enum roofline_ceiling_kind kind, const char *name, double value,
		 const char *source)
{
	if (!isfinite(value) || value <= 0)
		return -EINVAL;
	if (r->n >= ROOFLINE_MAX_CEILINGS)
		return -ENOSPC;
	struct roofline_ceiling *c = &r->c[r->n++];
	c->kind = kind;
	c->value = value;
	copy_name(c->name, name);
	copy_name(c->source, source);
	return 0;
}

static double best(const struct roofline *r, enum roofline_ceiling_kind kind)
{
	double v = 0;
	for (size_t i = 0; i < r->n; i++)
		if (r->c[i].kind == kind && r->c[i].value > v)
			v = r->c[i].value;
	return v;
}

double roofline_pi(const struct roofline *r)
{
	return best(r, ROOFLINE_COMPUTE);
}

double roofline_beta(const struct roofline *r)
{
	return best(r, ROOFLINE_BANDWIDTH);
}

bool roofline_complete(const struct roofline *r)
{
	return roofline_pi(r) > 0 && roofline_beta(r) > 0;
}

double roofline_ridge(const struct roofline *r)
{
	return roofline_complete(r) ? roofline_pi(r) / roofline_beta(r) : 0;
}

double roofline_attainable_under(double pi, double beta, double intensity)
{
	if (!(pi > 0) || !(beta > 0) || !(intensity > 0))
		return 0;
	return fmin(pi, beta * intensity);
}

double roofline_attainable(const struct roofline *r, double intensity)
{
	return roofline_attainable_under(roofline_pi(r), roofline_beta(r), intensity);
}

int roofline_place(const struct roofline *r, double W, double Q, double seconds, struct roofline_point *out)
{
	memset(out, 0, sizeof(*out));
	if (!isfinite(W) || !isfinite(Q) || !isfinite(seconds) || W <= 0 || Q <= 0 || seconds <= 0)
		return -EINVAL;
	if (!roofline_complete(r))
		return -ENODATA;
	out->W = W;
	out->Q = Q;
	out->seconds = seconds;
	out->intensity = W / Q;
	out->achieved = W / seconds / 1e9;
	out->attainable = roofline_attainable(r, out->intensity);
	out->fraction = out->achieved / out->attainable;
	out->bound = out->intensity < roofline_ridge(r) ? ROOFLINE_MEMORY_BOUND : ROOFLINE_COMPUTE_BOUND;
	return 0;
}

const char *roofline_bound_name(enum roofline_bound b)
{
	return b == ROOFLINE_COMPUTE_BOUND ? "compute-bound" : "memory-bound";
}

size_t roofline_walls(double W, const char *const *names, const double *bytes, size_t nlevels,
		      struct roofline_wall *out, size_t max)
{
	size_t n = 0;
	if (max > ROOFLINE_MAX_WALLS)
		max = ROOFLINE_MAX_WALLS;
	if (!(W > 0))
		return 0;
	double prev = 0;
	for (size_t k = 0; k < nlevels && n < max; k++) {
		if (!(bytes[k] > 0) || !isfinite(bytes[k]))
			continue;
		double I = W / bytes[k];
		if (prev > 0 && fabs(I - prev) <= 0.01 * prev)
			continue;
		copy_name(out[n].name, names[k]);
		out[n].intensity = I;
		prev = I;
		n++;
	}
	return n;
}
