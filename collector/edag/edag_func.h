/* Per-function split of a window's eDAG figures (latency sensitivity per
 * function). Pure: no I/O; the caller owns the accumulator.
 *
 * Each instruction of a window belongs to one function (an id the caller gives,
 * e.g. from the session's symbols for the instruction's PC). Per window:
 *   insns_f  its instructions;
 *   W_f      its memory vertices (last-level misses): sum over f = W;
 *   D_f      the memory-depth increments it made: whenever a vertex of f raises
 *            the window's running maximum memory depth, the rise counts for f
 *            (so sum over f = D, and the function whose misses extend the
 *            deepest chain gets the depth);
 *   lambda_f = (W_f - D_f)/m + D_f: sum over f = lambda = (W - D)/m + D;
 *   W_cold_f its cold misses (edag_vertex.cold): a function whose cold misses are
 *            over EDAG_COLD_REL of W_f has an upper-bound figure, with
 *            edag_func_lambda_cold_hits as its low end (the thread's rule, per
 *            function: one function's cold misses do not flag another's row).
 * A thread's Lambda*alpha0 = lambda*alpha0 / (lambda*alpha0 + C) then splits
 * as lambda_f * alpha0 / (lambda*alpha0 + C): function f's share of the
 * thread's baseline time spent waiting on memory; the shares add up to the
 * thread's Lambda*alpha0 (collector/README.md "Sensitivity per function"). */
#ifndef COLLECTOR_EDAG_EDAG_FUNC_H
#define COLLECTOR_EDAG_EDAG_FUNC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edag.h"

struct edag_func_fig {
	uint32_t fid;
	uint64_t insns, W, D;
	uint64_t W_cold; /* of W, cold misses */
};

struct edag_func_acc {
	struct edag_func_fig *f;
	size_t n, cap;
	uint64_t dmax; /* the current window's running maximum memory depth */
};

/* Start a window (the running depth maximum goes back to 0; totals stay). */
void edag_func_window(struct edag_func_acc *a);
/* Count vertex v (edag_step's output) of function fid. 0 or -ENOMEM. */
int edag_func_add(struct edag_func_acc *a, uint32_t fid, const struct edag_vertex *v);
/* Add piece's figures to tot's (same function ids). 0 or -ENOMEM. */
int edag_func_merge(struct edag_func_acc *tot, const struct edag_func_acc *piece);
/* lambda_f = (W_f - D_f)/m + D_f of one function's totals. */
double edag_func_lambda(const struct edag_func_fig *f, double m);
/* lambda_f with f's cold misses taken as hits: W_f - W_cold_f, D_f at most that (the low end
 * of a flagged figure, as edag_approx's lambda_cold_hits for a thread). */
double edag_func_lambda_cold_hits(const struct edag_func_fig *f, double m);
/* f's cold misses are over EDAG_COLD_REL of W_f: its figure is an upper bound. */
bool edag_func_cold_bound(const struct edag_func_fig *f);
/* The figure of fid, NULL if none counted. */
const struct edag_func_fig *edag_func_get(const struct edag_func_acc *a, uint32_t fid);
void edag_func_free(struct edag_func_acc *a);

#endif
