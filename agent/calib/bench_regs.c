/* Registers (seed 2.3). Per work-item: time per operation vs the number of
 * live private variables has a cliff where values spill to memory. Per CU:
 * with that many variables, time per work-item vs work-items per group has a
 * second cliff where the CU's register file is full; regs/CU = vars x items. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"

#define REG_JUMP 1.3

/* kernel regs_R: R independent chains r_k = r_k * b + r_(k+1), all live across the loop. */
static int gen_kernel(char *buf, size_t len, unsigned R)
{
	size_t o = 0;
#define P(...)                                                                                               \
	do {                                                                                                 \
		int w = snprintf(buf + o, len - o, __VA_ARGS__);                                              \
		if (w < 0 || (size_t)w >= len - o)                                                           \
			return -ENOSPC;                                                                       \
		o += (size_t)w;                                                                               \
	} while (0)
	P("__kernel void regs_%u(__global float *out, float a, float b, int n) {\n", R);
	for (unsigned k = 0; k < R; k++)
		P("float r%u = a + %u.0f;\n", k, k);
	P("for (int i = 0; i < n; i++) {\n");
	for (unsigned k = 0; k < R; k++)
		P("r%u = mad(r%u, b, r%u);\n", k, k, (k + 1) % R);
	P("}\nout[get_global_id(0)] = 0.0f");
	for (unsigned k = 0; k < R; k++)
		P(" + r%u", k);
	P(";\n}\n");
#undef P
	return (int)o;
}

struct reg_run {
	struct cl_prog *p;
	cl_buf *out;
	char kname[32];
	size_t global, local;
	int n;
};

static int reg_once(void *arg, double *s)
{
	struct reg_run *r = arg;
	float a = 1.0f, b = 0.5f;
	struct cl_arg args[] = {CL_ARG_BUF(r->out), CL_ARG_VAL(a), CL_ARG_VAL(b), CL_ARG_VAL(r->n)};
	return cl_run(r->p, r->kname, args, 4, r->global, r->local, s);
}

/* Detector on the median curve, and on each repetition for the spread. */
static void detect_cliff(const struct calib_curve *cv, struct calib_detect *d, int *drc, double *spread)
{
	*drc = calib_detect_cliff(cv->x, cv->y, cv->n, REG_JUMP, d);
	double per[CR_MAX_REPS], y[CR_MAX_POINTS];
	unsigned np = 0;
	for (unsigned k = 0; k < cv->reps; k++) {
		struct calib_detect dk;
		cr_rep_y(cv, k, y);
		if (calib_detect_cliff(cv->x, y, cv->n, REG_JUMP, &dk) == 0)
			per[np++] = dk.value;
	}
	struct calib_stat st;
	*spread = np == cv->reps && calib_stat(per, np, &st) == 0 ? st.spread : INFINITY;
}

int bench_registers(struct calib_ctx *c, struct calib_result *r)
{
	unsigned lo = c->quick ? 8 : 4, step = c->quick ? 8 : 4, hi = c->quick ? 48 : 96;
	size_t cap = 1u << 20;
	char *src = malloc(cap), err[1024];
	if (!src)
		return -ENOMEM;
	size_t o = 0;
	for (unsigned R = lo; R <= hi; R += step) {
		int w = gen_kernel(src + o, cap - o, R);
		if (w < 0) {
			free(src);
			return w;
		}
		o += (size_t)w;
	}
	struct reg_run run = {.local = c->dev->max_wg < 16 ? c->dev->max_wg : 16};
	run.global = run.local;
	int rc = cl_prog_build(c->cl, src, NULL, &run.p, err, sizeof(err));
	free(src);
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "%s", err);
		return rc;
	}
	size_t maxw = c->dev->max_wg < 256 ? c->dev->max_wg : 256;
	if (c->quick && maxw > 128)
		maxw = 128;
	if ((rc = cl_buf_create(c->cl, maxw * sizeof(float), NULL, &run.out)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate the output buffer");
		goto out;
	}
	/* calibrate n on the smallest kernel, then keep n fixed: y = time / (n x R) */
	snprintf(run.kname, sizeof(run.kname), "regs_%u", lo);
	run.n = 1000;
	double t;
	if ((rc = reg_once(&run, &t)) < 0 || (rc = reg_once(&run, &t)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "kernel run failed (%d)", rc);
		goto out;
	}
	run.n = (int)cr_scale(run.n, t, c->quick ? 0.003 : 0.006, 16, 1L << 26);
	struct calib_curve *cv = cr_curve(r, "time_per_op_vs_private_vars", "variables", "s/op");
	for (unsigned R = lo; R <= hi; R += step) {
		double v[CR_MAX_REPS];
		snprintf(run.kname, sizeof(run.kname), "regs_%u", R);
		if ((rc = cr_repeat(c->reps, reg_once, &run, v)) < 0) {
			snprintf(r->skipped, sizeof(r->skipped), "%s failed (%d)", run.kname, rc);
			goto out;
		}
		for (unsigned k = 0; k < c->reps; k++)
			v[k] /= (double)run.n * R;
		cr_point(cv, R, v, c->reps);
	}
	struct calib_detect d;
	int drc;
	double spread;
	detect_cliff(cv, &d, &drc, &spread);
	char method[CALIB_METHOD_MAX];
	unsigned regs = drc == 0 ? (unsigned)d.value : hi;
	if (drc == 0)
		snprintf(method, sizeof(method),
			 "cliff (x%.1f) of time/op vs %u..%u live private floats (%zu work-items): last count before spilling",
			 REG_JUMP, lo, hi, run.local);
	else
		snprintf(method, sizeof(method), "no cliff of time/op up to %u live private floats: lower bound", hi);
	cr_param(r, "regs_per_work_item", regs, "registers", method, spread, drc == 0 ? d.confidence : 0);

	/* second cliff: work-items per group at `regs` live variables */
	snprintf(run.kname, sizeof(run.kname), "regs_%u", regs);
	struct calib_curve *cw = cr_curve(r, "time_per_item_vs_group_size", "work-items", "s/item");
	size_t wstep = c->quick ? 16 : 4;
	for (size_t w = wstep; w <= maxw; w += wstep) {
		double v[CR_MAX_REPS];
		run.global = run.local = w;
		if ((rc = cr_repeat(c->reps, reg_once, &run, v)) < 0)
			break; /* the device refuses larger groups of this kernel: stop the sweep there */
		for (unsigned k = 0; k < c->reps; k++)
			v[k] /= (double)w;
		cr_point(cw, (double)w, v, c->reps);
	}
	rc = 0;
	bool regs_bound = drc != 0; /* regs_per_work_item is a lower bound, not a measurement */
	if (cw->n >= 3) {
		detect_cliff(cw, &d, &drc, &spread);
		double items = drc == 0 ? d.value : cw->x[cw->n - 1];
		double conf = drc == 0 && !regs_bound ? d.confidence : 0;
		if (drc == 0)
			snprintf(method, sizeof(method),
				 "second cliff (x%.1f) of time/work-item vs group size at %u vars: %g items x %u regs",
				 REG_JUMP, regs, items, regs);
		else
			snprintf(method, sizeof(method),
				 "no second cliff up to %g work-items at %u vars: lower bound (%g x %u)", items, regs, items,
				 regs);
		if (regs_bound) { /* built on a lower bound: FLAGGED, never a simulator option (issue 37) */
			size_t ml = strlen(method);
			snprintf(method + ml, sizeof(method) - ml,
				 "; at %u vars, the lower bound of regs_per_work_item: not a measurement", regs);
		}
		cr_param(r, "threads_per_cu", items, "work-items", method, spread, conf);
		cr_param(r, "regs_per_cu", items * regs, "registers", method, spread, conf);
	}
out:
	cl_buf_free(c->cl, run.out);
	cl_prog_free(run.p);
	return rc;
}
