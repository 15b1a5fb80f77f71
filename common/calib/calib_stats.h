/* Repeated-measurement statistics for calibration: median, range and a
 * relative spread. Pure functions (no I/O, no globals). */
#ifndef COMMON_CALIB_STATS_H
#define COMMON_CALIB_STATS_H

#include <stddef.h>

#define CALIB_MAX_REPS 64u
/* A result whose relative spread is above this is flagged (kept, not hidden). */
#define CALIB_SPREAD_MAX 0.15
/* ... and so is a detector result with a confidence below this. */
#define CALIB_CONFIDENCE_MIN 0.5

/* A detector's confidence in [0,1], bounded by the measurement's spread: a
 * value whose repetitions disagree by a relative spread s cannot be trusted
 * more than 1 / (1 + s) (a 688 % spread allows at most 0.13). NaN: 0. */
static inline double calib_confidence_bounded(double confidence, double spread)
{
	if (!(confidence >= 0))
		return 0;
	if (confidence > 1)
		confidence = 1;
	if (spread > 0) {
		double cap = 1.0 / (1.0 + spread); /* 0 for an infinite spread */
		if (confidence > cap)
			confidence = cap;
	}
	return confidence;
}

struct calib_stat {
	double median;
	double min, max;
	double spread; /* (max - min) / (2 * |median|): half the range, relative; 0 for n = 1 */
	unsigned n;
};

/* Statistics of v[0..n) (n <= CALIB_MAX_REPS, extra values are ignored).
 * Returns 0, or -EINVAL for n == 0 or a non-finite value. */
int calib_stat(const double *v, size_t n, struct calib_stat *out);
/* Median of v[0..n) (same limits); NAN for n == 0. */
double calib_median(const double *v, size_t n);

#endif
