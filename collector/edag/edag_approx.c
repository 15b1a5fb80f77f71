/* The approximate eDAG: whole-run estimates combined from sampled windows.
 * (TraceWindow records <-> instructions: common/trace/window_codec.c.) */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"

/* ---------------------------------------------------------------- approximate eDAG */

/* Student t quantile 0.975 for df degrees of freedom. */
static double t975(size_t df)
{
	static const double t[31] = {0,	    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				     2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				     2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				     2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	return df <= 30 ? t[df] : df <= 60 ? 2.0 : 1.96;
}

/* Weighted mean of the per-instruction rates x[i] and its 95% interval,
 * scaled to total. */
static void estimate(const double *x, const double *w, size_t n, double total, struct edag_estimate *out)
{
	double sw = 0, sx = 0;
	for (size_t i = 0; i < n; i++) {
		sw += w[i];
		sx += w[i] * x[i];
	}
	double mean = sw > 0 ? sx / sw : 0;
	out->value = mean * total;
	if (n < 2 || sw <= 0) {
		out->lo = out->hi = out->value;
		return;
	}
	double v = 0;
	for (size_t i = 0; i < n; i++) {
		double wi = w[i] / sw;
		v += wi * wi * (x[i] - mean) * (x[i] - mean);
	}
	v *= (double)n / (double)(n - 1);
	double half = t975(n - 1) * sqrt(v) * total;
	out->lo = fmax(0, out->value - half);
	out->hi = out->value + half;
}

int edag_approx_combine(const struct edag_window_result *w, size_t n, double m, double alpha0,
			struct edag_approx *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	if (!(m >= 1))
		m = 1;
	double *x = calloc(n * 7, sizeof(double));
	if (!x)
		return -ENOMEM;
	double *wt = x + n * 6;
	out->windows = n;
	out->coverage_known = true;
	out->D_min = INFINITY;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const struct edag_window_result *r = &w[i];
		if (r->n_insns == 0)
			continue;
		double ni = (double)r->n_insns;
		out->sampled_insns += r->n_insns;
		if (r->info.represented_insns >= r->n_insns) {
			out->represented_insns += (double)r->info.represented_insns;
		} else {
			out->represented_insns += ni;
			out->coverage_known = false;
		}
		double lambda = ((double)r->mt.W - (double)r->mt.D) / m + (double)r->mt.D;
		x[0 * n + used] = (double)r->mt.vertices / ni;
		x[1 * n + used] = (double)r->mt.W / ni;
		x[2 * n + used] = (double)r->mt.D / ni;
		x[3 * n + used] = (double)r->mt.cp_vertices / ni;
		x[4 * n + used] = (double)r->mt.cp_compute / ni;
		x[5 * n + used] = lambda / ni;
		wt[used] = r->info.share > 0 ? r->info.share : 1;
		double d = (double)r->mt.D;
		out->D_min = fmin(out->D_min, d);
		out->D_max = fmax(out->D_max, d);
		out->D_mean += d;
		used++;
	}
	if (used == 0) {
		free(x);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	out->D_mean /= (double)used;
	/* rates live in the first `used` slots of each row of n */
	double R = out->represented_insns;
	estimate(x + 0 * n, wt, used, R, &out->V);
	estimate(x + 1 * n, wt, used, R, &out->W);
	estimate(x + 2 * n, wt, used, R, &out->D);
	estimate(x + 3 * n, wt, used, R, &out->cp_vertices);
	estimate(x + 4 * n, wt, used, R, &out->cp_compute);
	estimate(x + 5 * n, wt, used, R, &out->lambda);
	out->coverage = R > 0 ? (double)out->sampled_insns / R : 0;
	double C = out->cp_compute.value;
	struct edag_estimate *L = &out->Lambda;
	double lv[3] = {out->lambda.value, out->lambda.lo, out->lambda.hi};
	double Lv[3];
	for (int k = 0; k < 3; k++) {
		double den = lv[k] * alpha0 + C;
		Lv[k] = den > 0 ? lv[k] / den : 0;
	}
	L->value = Lv[0];
	L->lo = Lv[1];
	L->hi = Lv[2];
	free(x);
	return 0;
}
