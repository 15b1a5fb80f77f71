/* A full trace's steady state cut into windows of a program's recorded length (issue 36):
 * the ground truth the sampled windows are compared with, shared by
 * tests/integration/test_trace_accuracy.c (x86_64, agent windows) and
 * tests/board/trace_truth.c (the board guests' windows, full traces under qemu-arm/-aarch64).
 * The steady state is the span between a kernel's second and later kernel_mark() calls
 * (tools/qemu-plugin/kernels/kernel.h); each tile's metrics come from an engine reset at its
 * start, as a window the agent takes; with keep_cache the tile finds the caches as the one
 * before left them, warmed by the first repetition (tiles_warm): a perfectly warmed window. */
#ifndef TESTS_LIB_TRACE_TILES_H
#define TESTS_LIB_TRACE_TILES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "edag/edag.h"
#include "edag/edag_func.h"

struct tiles {
	struct edag_state *st;
	bool keep_cache; /* each tile finds the caches as the one before left them (a warmed window) */
	/* non-NULL: the tiles' split by function too (fa), fid(fid_arg, pc) the function id */
	uint32_t (*fid)(const void *fid_arg, uint64_t pc);
	const void *fid_arg;
	unsigned reps; /* repetitions tiled after the first (0: 1) */
	size_t max;    /* tiles at most (0: as many as the steady state holds) */
	struct edag_func_acc fa;
	uint64_t len, at;
	struct edag_window_result *w;
	size_t n, cap;
};

/* One instruction of the steady state into the current tile: 0 or a negative errno. */
int tiles_step(struct tiles *t, const struct edag_insn *in);

/* One record of the trace, nmark the kernel_mark() calls seen up to and including it (the
 * plugin records from the first: 1 over the first repetition): tiles the repetitions after the
 * first (nmark 2 .. 1 + reps), warms the caches over the first (keep_cache). */
int tiles_feed(struct tiles *t, const struct edag_insn *in, unsigned nmark);

/* The tiles combined as the windows are (edag_approx_combine, m, alpha0). */
int tiles_combine(const struct tiles *t, double m, double alpha0, struct edag_approx *out);

/* Lambda*alpha0 = lambda*a0 / (lambda*a0 + C), per instruction or in total alike. */
double tiles_share_a0(double lambda, double C, double alpha0);

void tiles_free(struct tiles *t);

/* `collector edag --json`'s estimate (its "estimate" object), per instruction: the one reader of
 * test_trace_accuracy and trace_truth. A figure missing is NaN (insns too: every rate NaN). */
struct tiles_edag {
	double insns, windows;			 /* sampled instructions, windows */
	double W, lambda, D, C, cold, lambda_lo; /* per instruction; lambda_lo: cold misses as hits */
	bool bound;				 /* "cold_bound": true (cold misses over 10 % of W) */
};
void tiles_edag_read(const char *js, struct tiles_edag *e);

/* got within rel of want, or abs_tol */
bool tiles_within(double got, double want, double rel, double abs_tol);
/* truth in [lo, hi], each end with the tolerance of tiles_within() */
bool tiles_holds(double lo, double hi, double truth, double rel, double abs_tol);
/* The windows' figure against the full trace's (issue 36): flagged, [lo, win] (lo: the figure
 * with its cold misses as hits) holds the truth; else win within 10 % (or abs_tol) of it. */
bool tiles_verdict(double win, double lo, double truth, bool flagged, double abs_tol);

#endif
