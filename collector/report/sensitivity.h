/* Latency sensitivity (EDAN) of a traced thread or kernel: the table row and
 * the predicted slowdown curves. Pure: no I/O, no allocation.
 *
 * With lambda(m) = (W-D)/m + D, the baseline time T0 = lambda*alpha0 + C and
 * Lambda = lambda / T0 (per unit of latency, collector/edag), adding delta to
 * the memory latency adds lambda*delta: the predicted slowdown is
 * Lambda*delta. Lambda*alpha0 (the memory share of T0, in [0,1]) is the
 * seed's dimensionless Lambda: 0.2 means +50 ns on 100 ns costs 0.2*0.5 = 10%. */
#ifndef COLLECTOR_REPORT_SENSITIVITY_H
#define COLLECTOR_REPORT_SENSITIVITY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SENS_NAME_MAX 64
#define SENS_HOW_MAX 320

struct sens_row {
	char name[SENS_NAME_MAX]; /* "pid 12 tid 13", a kernel name */
	size_t windows;	      /* windows used */
	size_t windows_taken; /* windows stored (used + discarded: too short, cut by the stop-time limit) */
	size_t windows_short, windows_cut; /* of those discarded: under EDAG_WINDOW_MIN_INSNS recorded
					    * instructions; cut by the agent's stop-time limit */
	uint64_t insns; /* instructions traced */
	double W, D, C; /* memory work, memory depth, non-memory cost on the critical path (whole run) */
	double m, alpha0;
	double w_over_d;
	double lambda, Lambda; /* at m */
	double Lambda_lo, Lambda_hi; /* 95% interval (= Lambda for one window) */
	double mem_share;	 /* Lambda * alpha0, in [0,1] */
	double delta10;		 /* added latency (units of alpha0) that costs 10%; INFINITY if Lambda is 0 */
	/* how the figures were obtained (filled by the caller) */
	char how[SENS_HOW_MAX];	 /* "6 replay windows: 500000 warm-up + 50000 recorded instructions each, ..." */
	double lambda_lo, lambda_hi; /* 95% interval of lambda */
	double cold_per_insn;	     /* cold misses per instruction (might have hit a warmer cache) */
	bool upper_bound;	     /* cold misses above the tolerance: W, lambda, Lambda are upper bounds */
	double Lambda_cold_hits;     /* Lambda with every cold miss taken as a hit (the low end then) */
	double lambda_cold_hits;     /* lambda so (its function rows' high end: a shorter baseline) */
};

/* Fill the derived fields of r from W, D, C, m, alpha0 (already set);
 * -EINVAL if m < 1, alpha0 <= 0 or W < D. */
int sens_compute(struct sens_row *r);
/* Predicted slowdown (fraction: 0.1 = 10%) when delta is added to the latency, with m issue slots. */
double sens_slowdown(const struct sens_row *r, double m, double delta);

#endif
