#include "calib_stats.h"

#include <errno.h>
#include <math.h>
#include <string.h>

static void sort(double *a, size_t n)
{
	for (size_t i = 1; i < n; i++) {
		double v = a[i];
		size_t j = i;
		for (; j > 0 && a[j - 1] > v; j--)
			a[j] = a[j - 1];
		a[j] = v;
	}
}

static double median_sorted(const double *a, size_t n)
{
	return n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
}

double calib_median(const double *v, size_t n)
{
	if (n == 0)
		return NAN;
	if (n > CALIB_MAX_REPS)
		n = CALIB_MAX_REPS;
	double a[CALIB_MAX_REPS];
	memcpy(a, v, n * sizeof(*a));
	sort(a, n);
	return median_sorted(a, n);
}

int calib_stat(const double *v, size_t n, struct calib_stat *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	if (n > CALIB_MAX_REPS)
		n = CALIB_MAX_REPS;
	double a[CALIB_MAX_REPS];
	for (size_t i = 0; i < n; i++) {
		if (!isfinite(v[i]))
			return -EINVAL;
		a[i] = v[i];
	}
	sort(a, n);
	out->n = (unsigned)n;
	out->min = a[0];
	out->max = a[n - 1];
	out->median = median_sorted(a, n);
	double m = fabs(out->median);
	out->spread = m > 0 ? (out->max - out->min) / (2 * m) : (out->max > out->min ? INFINITY : 0);
	return 0;
}
