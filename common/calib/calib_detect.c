#include "calib_detect.h"

#include <errno.h>
#include <math.h>
#include <string.h>

#include "calib_stats.h"

static double clamp01(double v)
{
	return v < 0 || isnan(v) ? 0 : v > 1 ? 1 : v;
}

/* x ascending, y finite and > 0 (timings), n within limits. */
static int check_curve(const double *x, const double *y, size_t n, size_t min_n)
{
	if (!x || !y || n < min_n || n > CALIB_DETECT_MAX_POINTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(x[i]) || !isfinite(y[i]) || y[i] <= 0)
			return -EINVAL;
		if (i > 0 && !(x[i] > x[i - 1]))
			return -EINVAL;
	}
	return 0;
}

/* Median of y[lo..hi) clipped to [0, n). */
static double med_range(const double *y, size_t n, long lo, long hi)
{
	if (lo < 0)
		lo = 0;
	if (hi > (long)n)
		hi = (long)n;
	if (hi <= lo)
		return NAN;
	return calib_median(y + lo, (size_t)(hi - lo));
}

/* Median relative change between consecutive points of y[lo..hi). */
static double jitter(const double *y, long lo, long hi)
{
	double d[CALIB_MAX_REPS];
	size_t m = 0;
	if (lo < 0)
		lo = 0;
	if (hi - lo > (long)CALIB_MAX_REPS + 1)
		lo = hi - (long)CALIB_MAX_REPS - 1;
	for (long i = lo; i + 1 < hi; i++)
		d[m++] = fabs(y[i + 1] / y[i] - 1);
	return m ? calib_median(d, m) : 0.05; /* nothing to go by: assume 5% */
}

int calib_detect_staircase(const double *x, const double *y, size_t n, struct calib_detect *out)
{
	*out = (struct calib_detect){.index = -1};
	if (check_curve(x, y, n, 4) < 0)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (x[i] < 1 || x[i] != floor(x[i]))
			return -EINVAL;
	long smax = (long)(x[n - 1] / 2);
	double best = INFINITY, second = INFINITY, best_b = 0, best_a = 0;
	long best_s = 0;
	for (long s = 1; s <= smax; s++) {
		/* least squares of y on c = ceil(x/s), weighted by 1/y^2: timing noise is
		 * relative (a busy host stretches long runs as much as short ones), so
		 * unweighted residuals let the tallest steps decide the width alone */
		double sw = 0, sc = 0, sy = 0, scc = 0, scy = 0;
		for (size_t i = 0; i < n; i++) {
			double c = ceil(x[i] / (double)s), w = 1 / (y[i] * y[i]);
			sw += w;
			sc += w * c;
			sy += w * y[i];
			scc += w * c * c;
			scy += w * c * y[i];
		}
		double den = sw * scc - sc * sc;
		if (den <= 0)
			continue;
		double b = (sw * scy - sc * sy) / den;
		double a = (sy - b * sc) / sw;
		double sse = 0;
		for (size_t i = 0; i < n; i++) {
			double r = (y[i] - (a + b * ceil(x[i] / (double)s))) / y[i];
			sse += r * r;
		}
		if (sse < best) {
			second = best;
			best = sse;
			best_s = s;
			best_b = b;
			best_a = a;
		} else if (sse < second) {
			second = sse;
		}
	}
	if (best_s == 0)
		return -EINVAL;
	out->value = (double)best_s;
	double first = best_a + best_b; /* fitted time of the first step */
	out->aux = first > 0 ? best_b / first : 0;
	if (best_b <= 0 || out->aux < 0.05) {
		out->confidence = 0; /* no staircase: time does not rise with the groups */
		return -ENOENT;
	}
	out->confidence = isfinite(second) && second > 0 ? clamp01(1 - best / second) : 1;
	for (size_t i = 0; i < n; i++)
		if (x[i] == (double)best_s)
			out->index = (int)i;
	return 0;
}

int calib_detect_cliff(const double *x, const double *y, size_t n, double jump, struct calib_detect *out)
{
	*out = (struct calib_detect){.index = -1};
	if (check_curve(x, y, n, 3) < 0 || !(jump > 1))
		return -EINVAL;
	for (size_t k = 1; k < n; k++) {
		double before = med_range(y, n, (long)k - 3, (long)k);
		double after = med_range(y, n, (long)k, (long)k + 3);
		if (y[k] >= jump * before && after >= jump * before) {
			double r = after / before;
			double noise = jitter(y, (long)k - 8, (long)k);
			out->value = x[k - 1];
			out->aux = x[k];
			out->index = (int)k;
			out->confidence = clamp01(1 - 3 * noise / (r - 1));
			if (k == n - 1)
				out->confidence *= 0.5; /* one point after the step */
			return 0;
		}
	}
	out->value = x[n - 1];
	out->aux = x[n - 1];
	return -ENOENT;
}

int calib_detect_levels(const double *x, const double *y, size_t n, double jump, struct calib_level *lv,
			size_t max, size_t *nlv)
{
	*nlv = 0;
	if (check_curve(x, y, n, 2) < 0 || !(jump > 1) || max == 0)
		return -EINVAL;
	size_t start = 0;
	size_t k = 1;
	while (k < n && *nlv < max) {
		double base = med_range(y, n, (long)start, (long)k);
		if (y[k] >= jump * base && (k + 1 == n || y[k + 1] >= jump * base)) {
			/* the plateau [start, k-1] ends: find where the rise flattens */
			size_t m = k;
			while (m + 1 < n && y[m + 1] > y[m] * 1.15)
				m++;
			if (start > 0 && k - start < 3) {
				/* two points between rises: part of a transition, not a level */
				start = m;
				k = m + 1;
				continue;
			}
			struct calib_level *l = &lv[(*nlv)++];
			double next = med_range(y, n, (long)m, (long)m + 2);
			double noise = jitter(y, (long)start, (long)k);
			*l = (struct calib_level){
				.size = x[k - 1],
				.latency = base,
				.confidence = clamp01(1 - 3 * noise / (next / base - 1)),
				.first = (int)start,
				.last = (int)k - 1,
			};
			start = m;
			k = m + 1;
			continue;
		}
		k++;
	}
	if (*nlv < max && start < n) {
		double base = med_range(y, n, (long)start, (long)n);
		lv[(*nlv)++] = (struct calib_level){
			.size = 0,
			.latency = base,
			.confidence = n - start >= 2 ? 1 - clamp01(3 * jitter(y, (long)start, (long)n)) : 0.5,
			.first = (int)start,
			.last = (int)n - 1,
			.open = true,
		};
	}
	return *nlv > 1 ? 0 : -ENOENT;
}

int calib_detect_saturation(const double *x, const double *y, size_t n, double frac, struct calib_detect *out)
{
	*out = (struct calib_detect){.index = -1};
	if (check_curve(x, y, n, 2) < 0 || !(frac > 0 && frac <= 1))
		return -EINVAL;
	double ymax = y[0];
	for (size_t i = 1; i < n; i++)
		if (y[i] > ymax)
			ymax = y[i];
	size_t k = 0;
	while (k < n && y[k] < frac * ymax)
		k++;
	out->value = x[k];
	out->index = (int)k;
	out->aux = ymax / y[0];
	/* after the knee the curve should stay near its level: deviations lower the confidence;
	 * a knee at the very end of the sweep may not be a knee at all */
	double dev = 0;
	size_t m = 0;
	for (size_t i = k + 1; i < n; i++, m++)
		dev += fabs(y[i] / y[k] - 1);
	double conf = m ? clamp01(1 - 2 * dev / (double)m) : 0.3;
	out->confidence = conf;
	return 0;
}

int calib_detect_granularity(const double *w, const double *lock, size_t n, struct calib_detect *out)
{
	*out = (struct calib_detect){.index = -1, .value = 1};
	if (!w || !lock || n == 0 || n > CALIB_DETECT_MAX_POINTS)
		return -EINVAL;
	for (size_t i = 0; i < n; i++)
		if (!(w[i] >= 2) || !(lock[i] >= 0 && lock[i] <= 1) || (i && !(w[i] > w[i - 1])))
			return -EINVAL;
	long g = -1;
	for (size_t i = 0; i < n; i++)
		if (lock[i] >= 0.5)
			g = (long)i;
	out->value = g < 0 ? 1 : w[g];
	out->index = (int)g;
	out->aux = g == (long)n - 1 ? w[n - 1] : 0;
	double agree = 0;
	for (size_t i = 0; i < n; i++) {
		bool want_lock = (long)i <= g;
		bool is_lock = lock[i] >= 0.5;
		if (want_lock == is_lock)
			agree += fabs(lock[i] - 0.5) * 2;
	}
	out->confidence = clamp01(agree / (double)n);
	return 0;
}

double calib_cycles_per_op(double seconds, double ops, double clock_mhz)
{
	if (!(ops > 0) || !(clock_mhz > 0) || !(seconds >= 0))
		return NAN;
	return seconds * clock_mhz * 1e6 / ops;
}
