/* Minimum parallel granularity (seed 2.4), branch-order test: a group of W
 * work-items branches on lid < W/2; the first half spins (bounded) on a
 * flag that the second half sets. If the halves run independently the first
 * half sees the flag; if they are one lock-stepped unit (the same warp, or a
 * work-group run as one serial loop) it never does. Searched down from the
 * largest group size; the granularity is the largest W still lock-stepped. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"

static const char gran_src[] =
	"__kernel void gran(__global volatile int *flag, __global int *saw, int spins)\n"
	"{\n"
	"	int lid = (int)get_local_id(0), h = (int)get_local_size(0) / 2, g = (int)get_group_id(0);\n"
	"	if (lid < h) {\n"
	"		int seen = 0;\n"
	"		for (int i = 0; i < spins && !seen; i++)\n"
	"			seen = atomic_add(&flag[g], 0) != 0;\n"
	"		saw[get_global_id(0)] = seen;\n"
	"	} else {\n"
	"		atomic_xchg(&flag[g], 1);\n"
	"		saw[get_global_id(0)] = 2;\n"
	"	}\n"
	"}\n";

int bench_granularity(struct calib_ctx *c, struct calib_result *r)
{
	char err[1024];
	struct cl_prog *p = NULL;
	cl_buf *flag = NULL, *saw = NULL;
	int *hsaw = NULL, *zero = NULL;
	int rc = cl_prog_build(c->cl, gran_src, NULL, &p, err, sizeof(err));
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "%s", err);
		return rc;
	}
	size_t maxw = c->dev->max_wg;
	size_t top = 2;
	while (top * 2 <= maxw)
		top *= 2;
	size_t groups = 2;
	hsaw = calloc(top * groups, sizeof(int));
	zero = calloc(groups, sizeof(int));
	if (!hsaw || !zero || cl_buf_create(c->cl, groups * sizeof(int), NULL, &flag) < 0 ||
	    cl_buf_create(c->cl, top * groups * sizeof(int), NULL, &saw) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate the buffers");
		rc = -ENOMEM;
		goto out;
	}
	/* enough spins for another warp to run, bounded so that a serial unit of W items stays cheap */
	const long spin_budget = c->quick ? (1L << 20) : (1L << 22);
	double w[32], lock[32];
	size_t n = 0;
	struct calib_curve *cv = cr_curve(r, "lockstep_vs_group_size", "work-items", "fraction");
	/* searched down from the largest group, as in the seed */
	for (size_t W = top; W >= 2 && n < 32; W /= 2) {
		double v[CR_MAX_REPS];
		int spins = (int)(spin_budget / (long)W);
		spins = spins < 64 ? 64 : spins > 8192 ? 8192 : spins;
		for (unsigned rep = 0; rep < c->reps; rep++) {
			double t;
			if ((rc = cl_buf_write(c->cl, flag, zero, groups * sizeof(int))) < 0)
				goto out;
			struct cl_arg args[] = {CL_ARG_BUF(flag), CL_ARG_BUF(saw), CL_ARG_VAL(spins)};
			if ((rc = cl_run(p, "gran", args, 3, W * groups, W, &t)) < 0 ||
			    (rc = cl_buf_read(c->cl, saw, hsaw, W * groups * sizeof(int))) < 0) {
				snprintf(r->skipped, sizeof(r->skipped), "branch-order kernel failed at %zu (%d)", W, rc);
				goto out;
			}
			unsigned locked = 0;
			for (size_t g = 0; g < groups; g++) {
				bool any = false;
				for (size_t i = 0; i < W / 2; i++)
					any |= hsaw[g * W + i] == 1;
				locked += !any;
			}
			v[rep] = (double)locked / (double)groups;
		}
		w[n] = (double)W;
		lock[n] = calib_median(v, c->reps);
		n++;
		cr_point(cv, (double)W, v, c->reps); /* descending x: a record of the search order */
	}
	/* the detector wants ascending sizes */
	double wa[32], la[32];
	for (size_t i = 0; i < n; i++) {
		wa[i] = w[n - 1 - i];
		la[i] = lock[n - 1 - i];
	}
	struct calib_detect d;
	calib_detect_granularity(wa, la, n, &d);
	char method[CALIB_METHOD_MAX];
	if (d.aux > 0)
		snprintf(method, sizeof(method),
			 "branch-order flag test, W = %zu..2: halves never independent, the whole group of %g runs as one "
			 "serial unit",
			 top, d.aux);
	else
		snprintf(method, sizeof(method),
			 "branch-order flag test, W = %zu..2: largest group whose halves run lock-stepped", top);
	cr_param(r, "granularity", d.value, "work-items", method, 0, d.confidence);
	size_t mult = cl_kernel_wg_multiple(p, "gran");
	if (mult)
		cr_param(r, "wg_size_multiple_hint", (double)mult, "work-items",
			 "clGetKernelWorkGroupInfo(CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE)", 0, 1);
	rc = 0;
out:
	free(hsaw);
	free(zero);
	cl_buf_free(c->cl, flag);
	cl_buf_free(c->cl, saw);
	cl_prog_free(p);
	return rc;
}
