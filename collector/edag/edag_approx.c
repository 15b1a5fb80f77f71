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

double edag_depth_rate(const struct edag_metrics *mt)
{
	uint64_t n = mt->vertices;
	if (n == 0)
		return 0;
	if (n < EDAG_DEPTH_RATE_MIN)
		return (double)mt->D / (double)n;
	unsigned k = 63u - (unsigned)__builtin_clzll(n / 2);
	if (k >= EDAG_DEPTH_MARKS)
		k = EDAG_DEPTH_MARKS - 1;
	uint64_t n0 = 1ull << k;
	return (double)(mt->D - mt->D_at_pow2[k]) / (double)(n - n0);
}

int edag_approx_combine(const struct edag_window_result *w, size_t n, double m, double alpha0,
			struct edag_approx *out)
{
	enum { V, W, D, CPV, CPC, LAM, WC, DS, LAMC, NX };
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	if (!(m >= 1))
		m = 1;
	double *x = calloc(n * (NX + 1), sizeof(double));
	if (!x)
		return -ENOMEM;
	double *wt = x + n * NX;
	out->taken = n;
	out->coverage_known = true;
	out->D_min = INFINITY;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const struct edag_window_result *r = &w[i];
		bool sampled = r->capture == 1 || r->capture == 2;
		if (sampled && r->end_reason == EDAG_END_TIME) {
			/* its length is the machine's load, not the program (0 instructions: the
			 * agent lost it in its warm-up and sent it empty to be counted) */
			out->discarded_cut++;
			continue;
		}
		if (r->n_insns == 0)
			continue;
		if (sampled && r->n_insns < EDAG_WINDOW_MIN_INSNS) {
			out->discarded_short++;
			continue;
		}
		double ni = (double)r->n_insns;
		out->sampled_insns += r->n_insns;
		if (r->info.represented_insns >= r->n_insns) {
			out->represented_insns += (double)r->info.represented_insns;
		} else {
			out->represented_insns += ni;
			out->coverage_known = false;
		}
		out->by_capture[r->capture < 4 ? r->capture : 0]++;
		out->warm_insns += r->warm_insns;
		out->stop_ns += r->stop_ns;
		double wr = (double)r->mt.W / ni, wc = (double)r->mt.W_cold / ni;
		double dr = fmin(edag_depth_rate(&r->mt), wr); /* a depth grows by memory vertices */
		double dlo = fmax(0, fmin(dr, wr - wc));
		x[V * n + used] = (double)r->mt.vertices / ni;
		x[W * n + used] = wr;
		x[D * n + used] = dr;
		x[CPV * n + used] = (double)r->mt.cp_vertices / ni;
		x[CPC * n + used] = (double)r->mt.cp_compute / ni;
		x[LAM * n + used] = (wr - dr) / m + dr;
		x[WC * n + used] = wc;
		x[DS * n + used] = (double)r->mt.D / ni;
		x[LAMC * n + used] = (wr - wc - dlo) / m + dlo;
		/* a window's rate weighs by the share of the run it stands for and by its length:
		 * one cut short (a time limit) says little about its slice of the run */
		wt[used] = (r->info.share > 0 ? r->info.share : 1) * ni;
		double d = (double)r->mt.D;
		out->D_min = fmin(out->D_min, d);
		out->D_max = fmax(out->D_max, d);
		out->D_mean += d;
		used++;
	}
	if (used == 0) {
		size_t taken = out->taken, ds = out->discarded_short, dc = out->discarded_cut;
		free(x);
		memset(out, 0, sizeof(*out));
		out->taken = taken;
		out->discarded_short = ds;
		out->discarded_cut = dc;
		return ds + dc > 0 ? -ENODATA : -EINVAL;
	}
	out->windows = used;
	out->D_mean /= (double)used;
	/* rates live in the first `used` slots of each row of n */
	double R = out->represented_insns;
	estimate(x + V * n, wt, used, R, &out->V);
	estimate(x + W * n, wt, used, R, &out->W);
	estimate(x + D * n, wt, used, R, &out->D);
	estimate(x + CPV * n, wt, used, R, &out->cp_vertices);
	estimate(x + CPC * n, wt, used, R, &out->cp_compute);
	estimate(x + LAM * n, wt, used, R, &out->lambda);
	estimate(x + WC * n, wt, used, R, &out->W_cold);
	estimate(x + DS * n, wt, used, R, &out->D_series);
	struct edag_estimate lc;
	estimate(x + LAMC * n, wt, used, R, &lc);
	out->lambda_cold_hits = lc.value;
	/* The run holds every window's chains: its D is at least the deepest window's
	 * (a rate from a window's later half can be 0 where all its depth came early:
	 * a row once showed D 0 for a window whose own D was 2). lambda = (W-D)/m + D
	 * follows D. */
	if (out->D.value < out->D_max) {
		double add = (out->D_max - out->D.value) * (1 - 1 / m);
		out->D.value = out->D_max;
		out->lambda.value += add;
		out->lambda.lo += add;
		out->lambda.hi += add;
	}
	out->D.lo = fmax(out->D.lo, out->D_max);
	out->D.hi = fmax(out->D.hi, out->D_max);
	if (out->lambda_cold_hits > out->lambda.value)
		out->lambda_cold_hits = out->lambda.value;
	double Dup = fmax(out->D.value, fmin(out->D_series.value, out->W.value));
	out->lambda_upper = fmax(out->lambda.value, (out->W.value - Dup) / m + Dup);
	out->cold_bound = out->W.value > 0 && out->W_cold.value > EDAG_COLD_REL * out->W.value;
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

size_t edag_window_start(struct edag_state *st, const Prof__TraceWindow *tw)
{
	edag_reset(st);
	if (tw->n_warm_lines == 0)
		return 0;
	uint32_t lb = tw->warm_line_bytes;
	uint64_t line = 0;
	for (size_t i = 0; i < tw->n_warm_lines; i++) {
		unsigned mode = trace_window_warm_next(tw, i, &line);
		edag_cache_warm(st, line * lb, lb, mode == EDAG_MEM_WRITE);
	}
	edag_reset_keep_cache(st);
	return tw->n_warm_lines;
}
