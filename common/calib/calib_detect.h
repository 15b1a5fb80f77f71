/* Calibration detectors: pure functions (no I/O, no globals, no allocation)
 * that turn a swept curve of timings into one number and a confidence in
 * [0, 1]. Shared by the agent (which measures) and the collector (which can
 * re-detect from the stored curves). Unit tests: tests/unit/test_calib_detect.c.
 * All return 0, -EINVAL (bad input: n too small, x not ascending, y not
 * finite/positive) or -ENOENT (no such feature in the curve; *out still says
 * what was seen, with confidence 0). */
#ifndef COMMON_CALIB_DETECT_H
#define COMMON_CALIB_DETECT_H

#include <stdbool.h>
#include <stddef.h>

#define CALIB_DETECT_MAX_POINTS 4096u

struct calib_detect {
	double value;      /* the detected number */
	double confidence; /* 0..1 */
	double aux;        /* second value, per detector (see each) */
	int index;         /* index in x of the decisive point, -1 if none */
};

/* Compute units. x: numbers of work-groups (ascending, positive integers),
 * y: time for x work-groups of equal work. The time rises as a staircase
 * 1..S, S+1..2S, ...: fits y = a + b*ceil(x/S) (least squares of the
 * relative residuals, weights 1/y^2: timing noise is relative) for every S
 * in 1..max(x)/2 and returns the best S. confidence = 1 - sse_best /
 * sse_runner_up (0 if the steps do not rise); aux = b / a (step height
 * relative to the first step). */
int calib_detect_staircase(const double *x, const double *y, size_t n, struct calib_detect *out);

/* First sustained step up ("cliff") of y by at least a factor jump (> 1):
 * the smallest k with y[k] >= jump*B and median(y[k..k+2]) >= jump*B, where
 * B = median(y[k-3..k-1]) (a one-point spike is not a cliff). value = x[k-1]
 * (last point before: registers before spilling), aux = x[k] (first point
 * after: a line size), confidence from the step height against the
 * point-to-point jitter before it. -ENOENT: no cliff (value = x[n-1]). */
int calib_detect_cliff(const double *x, const double *y, size_t n, double jump, struct calib_detect *out);

/* Plateaus of a latency-vs-working-set curve (cache levels). A level ends
 * at the last x before y rises by jump over the plateau's median; the next
 * plateau starts where the rise flattens (next point < 15% higher). Apart
 * from the first, a plateau needs 3 points to count as a level (two points
 * between rises are part of a transition). */
struct calib_level {
	double size;       /* last x on the plateau (a cache size); 0 for the open last plateau */
	double latency;    /* median y on the plateau */
	double confidence; /* 0..1: rise to the next plateau against the jitter */
	int first, last;   /* indices of the plateau */
	bool open;         /* the last plateau: it runs to the end of the sweep */
};
/* Fills lv[0..*nlv) (at most max): closed levels first, then the open one. */
int calib_detect_levels(const double *x, const double *y, size_t n, double jump, struct calib_level *lv,
			size_t max, size_t *nlv);

/* Saturation. x: numbers of independent chains (ascending), y: throughput.
 * value = the first x where y reaches frac (0..1] of its maximum (where
 * throughput stops scaling: memory issue slots m); aux = max(y) / y[0]
 * (speedup); confidence: how flat y stays after that point. */
int calib_detect_saturation(const double *x, const double *y, size_t n, double frac, struct calib_detect *out);

/* Minimum parallel granularity from the branch-order test. w: group sizes
 * tested (ascending powers of two >= 2); lock[i] in [0, 1]: fraction of the
 * repetitions where the two halves of a group of w[i] did not run
 * independently (the first half never saw the second half's flag).
 * value = the largest w with lock >= 0.5, or 1 when every size ran
 * independently; confidence = fraction of the points that agree with that
 * single step (lock >= 0.5 up to value, < 0.5 above), times how decisive
 * they are (|lock - 0.5| * 2, averaged). aux = w[n-1] when value is w[n-1]
 * (no independence seen: the whole group is one serial unit), else 0. */
int calib_detect_granularity(const double *w, const double *lock, size_t n, struct calib_detect *out);

/* time (s) for ops dependent operations at clock_mhz -> cycles per operation. */
double calib_cycles_per_op(double seconds, double ops, double clock_mhz);

#endif
