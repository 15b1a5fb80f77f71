/* Roofline ceilings of the OpenCL device: peak compute pi (float mad
 * chains, vector widths 1..16, 16 independent chains per work-item) and peak
 * bandwidth beta (read / copy / scale / triad over buffers much larger than
 * the caches; bytes counted as STREAM does, without write-allocate). */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_bench.h"

#define PEAK_K(T, W)                                                                                         \
	"__kernel void peak_" #W "(__global " T " *out, float a, float b, int n) {\n"                          \
	"	" T " x0 = (" T ")(a + (float)get_local_id(0)), x1 = x0 + 1.0f, x2 = x0 + 2.0f, x3 = x0 + 3.0f;\n"    \
	"	" T " x4 = x0 + 4.0f, x5 = x0 + 5.0f, x6 = x0 + 6.0f, x7 = x0 + 7.0f;\n"                                \
	"	for (int i = 0; i < n; i++) {\n"                                                                  \
	"		x0 = mad(x0, b, a); x1 = mad(x1, b, a); x2 = mad(x2, b, a); x3 = mad(x3, b, a);\n"         \
	"		x4 = mad(x4, b, a); x5 = mad(x5, b, a); x6 = mad(x6, b, a); x7 = mad(x7, b, a);\n"         \
	"		x0 = mad(x0, b, a); x1 = mad(x1, b, a); x2 = mad(x2, b, a); x3 = mad(x3, b, a);\n"         \
	"		x4 = mad(x4, b, a); x5 = mad(x5, b, a); x6 = mad(x6, b, a); x7 = mad(x7, b, a);\n"         \
	"	}\n"                                                                                              \
	"	out[get_global_id(0)] = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;\n"                                 \
	"}\n"

static const char peak_src[] = PEAK_K("float", 1) PEAK_K("float2", 2) PEAK_K("float4", 4) PEAK_K("float8", 8)
	PEAK_K("float16", 16)
	"__kernel void bw_copy(__global const float4 *a, __global float4 *c) { size_t i = get_global_id(0); c[i] = a[i]; }\n"
	"__kernel void bw_scale(__global float4 *b, __global const float4 *c, float s) { size_t i = get_global_id(0); b[i] = s * c[i]; }\n"
	"__kernel void bw_triad(__global float4 *a, __global const float4 *b, __global const float4 *c, float s)\n"
	"{ size_t i = get_global_id(0); a[i] = b[i] + s * c[i]; }\n"
	"__kernel void bw_read(__global const float4 *a, __global float *out, int per)\n"
	"{\n"
	"	size_t g = get_global_id(0), n = get_global_size(0);\n"
	"	float4 s = (float4)(0.0f);\n"
	"	for (int j = 0; j < per; j++) s += a[(size_t)j * n + g];\n"
	"	out[g] = s.x + s.y + s.z + s.w;\n"
	"}\n"
	"__kernel void bw_read_chunk(__global const float4 *a, __global float *out, int per)\n"
	"{\n"
	"	size_t g = get_global_id(0);\n"
	"	float4 s = (float4)(0.0f);\n"
	"	for (int j = 0; j < per; j++) s += a[g * (size_t)per + j];\n"
	"	out[g] = s.x + s.y + s.z + s.w;\n"
	"}\n";

struct peak_run {
	struct cl_prog *p;
	const char *kname;
	cl_buf *a, *b, *c, *out;
	size_t global, local;
	int n;
	int which; /* 0 compute, 1 copy, 2 scale, 3 triad, 4 read */
};

static int peak_once(void *arg, double *s)
{
	struct peak_run *r = arg;
	float fa = 0.001f, fb = 0.999f, sc = 3.0f;
	switch (r->which) {
	case 0: {
		struct cl_arg args[] = {CL_ARG_BUF(r->out), CL_ARG_VAL(fa), CL_ARG_VAL(fb), CL_ARG_VAL(r->n)};
		return cl_run(r->p, r->kname, args, 4, r->global, r->local, s);
	}
	case 1: {
		struct cl_arg args[] = {CL_ARG_BUF(r->a), CL_ARG_BUF(r->c)};
		return cl_run(r->p, "bw_copy", args, 2, r->global, r->local, s);
	}
	case 2: {
		struct cl_arg args[] = {CL_ARG_BUF(r->b), CL_ARG_BUF(r->c), CL_ARG_VAL(sc)};
		return cl_run(r->p, "bw_scale", args, 3, r->global, r->local, s);
	}
	case 3: {
		struct cl_arg args[] = {CL_ARG_BUF(r->a), CL_ARG_BUF(r->b), CL_ARG_BUF(r->c), CL_ARG_VAL(sc)};
		return cl_run(r->p, "bw_triad", args, 4, r->global, r->local, s);
	}
	default: {
		/* strided (coalesced on a GPU) or chunked (streams on a CPU): the faster of the two */
		struct cl_arg args[] = {CL_ARG_BUF(r->a), CL_ARG_BUF(r->out), CL_ARG_VAL(r->n)};
		double s1 = 0, s2 = 0;
		int rc = cl_run(r->p, "bw_read", args, 3, r->global, r->local, &s1);
		if (rc == 0)
			rc = cl_run(r->p, "bw_read_chunk", args, 3, r->global, r->local, &s2);
		*s = rc == 0 && s2 < s1 ? s2 : s1;
		return rc;
	}
	}
}

int bench_peak(struct calib_ctx *c, struct calib_result *r)
{
	char err[1024], method[CALIB_METHOD_MAX], name[CALIB_NAME_MAX];
	struct peak_run run = {0};
	int rc = cl_prog_build(c->cl, peak_src, NULL, &run.p, err, sizeof(err));
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "%s", err);
		return rc;
	}
	unsigned cus = c->dev->compute_units ? c->dev->compute_units : 1;
	size_t local = c->dev->max_wg < 64 ? c->dev->max_wg : 64;
	size_t bytes = (c->quick ? 64u : 128u) << 20;
	if (c->dev->max_alloc && bytes > c->dev->max_alloc)
		bytes = (size_t)c->dev->max_alloc;
	if (c->dev->global_mem && bytes * 3 > c->dev->global_mem / 2)
		bytes = (size_t)(c->dev->global_mem / 6);
	bytes &= ~(size_t)(local * 16 * 64 - 1);
	size_t nwide = (size_t)cus * 32 * local;
	float *init = malloc(bytes);
	if (!init) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t i = 0; i < bytes / 4; i++)
		init[i] = (float)(i & 1023) * 0.5f;
	rc = cl_buf_create(c->cl, bytes, init, &run.a);
	if (rc == 0)
		rc = cl_buf_create(c->cl, bytes, init, &run.b);
	if (rc == 0)
		rc = cl_buf_create(c->cl, bytes, init, &run.c);
	if (rc == 0)
		rc = cl_buf_create(c->cl, nwide * 16 * sizeof(float), NULL, &run.out);
	free(init);
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate 3 x %zu MiB buffers", bytes >> 20);
		goto out;
	}
	/* compute: one width after the other */
	static const int widths[] = {1, 2, 4, 8, 16};
	struct calib_curve *cv = cr_curve(r, "gflops_vs_vector_width", "floats", "GFLOP/s");
	double best = 0, best_sp = 0;
	int best_w = 0;
	for (size_t i = 0; i < 5; i++) {
		int w = widths[i];
		char kn[16];
		snprintf(kn, sizeof(kn), "peak_%d", w);
		run.kname = kn;
		run.which = 0;
		run.global = nwide;
		run.local = local;
		run.n = 64;
		double t, v[CR_MAX_REPS];
		if ((rc = peak_once(&run, &t)) < 0)
			goto fail;
		run.n = (int)cr_scale(run.n, t, c->quick ? 0.02 : 0.05, 4, 1L << 24);
		if ((rc = cr_repeat(c->reps, peak_once, &run, v)) < 0)
			goto fail;
		double flops = 2.0 * 16 * w * (double)run.n * (double)nwide;
		for (unsigned k = 0; k < c->reps; k++)
			v[k] = flops / v[k] / 1e9;
		cr_point(cv, w, v, c->reps);
		struct calib_stat st;
		calib_stat(v, c->reps, &st);
		snprintf(name, sizeof(name), "gflops_float%d", w);
		snprintf(method, sizeof(method), "%zu work-items x 8 independent float%d mad chains", nwide, w);
		cr_param(r, name, st.median, "GFLOP/s", method, st.spread, 1);
		if (st.median > best) {
			best = st.median;
			best_sp = st.spread;
			best_w = w;
		}
	}
	snprintf(method, sizeof(method), "max over vector widths 1..16 of float mad chains (best: float%d)", best_w);
	cr_param(r, "peak_gflops", best, "GFLOP/s", method, best_sp, 1);

	/* bandwidth */
	static const char *const bwname[] = {NULL, "copy", "scale", "triad", "read"};
	static const double bwbytes[] = {0, 2, 2, 3, 1};
	struct calib_curve *bc = cr_curve(r, "gbps_by_kernel", "kernel (1 copy 2 scale 3 triad 4 read)", "GB/s");
	double bbest = 0, bbest_sp = 0;
	int bbest_k = 0;
	for (int k = 1; k <= 4; k++) {
		double v[CR_MAX_REPS];
		run.which = k;
		run.local = local;
		if (k == 4) {
			run.global = nwide;
			run.n = (int)(bytes / 16 / nwide);
		} else {
			run.global = bytes / 16;
		}
		if ((rc = cr_repeat(c->reps, peak_once, &run, v)) < 0)
			goto fail;
		double moved = k == 4 ? (double)run.n * (double)nwide * 16 : bwbytes[k] * (double)bytes;
		for (unsigned j = 0; j < c->reps; j++)
			v[j] = moved / v[j] / 1e9;
		cr_point(bc, k, v, c->reps);
		struct calib_stat st;
		calib_stat(v, c->reps, &st);
		snprintf(name, sizeof(name), "bw_%s_gbps", bwname[k]);
		snprintf(method, sizeof(method), "%s over %zu MiB float4 buffers (STREAM byte counting)", bwname[k],
			 bytes >> 20);
		cr_param(r, name, st.median, "GB/s", method, st.spread, 1);
		if (st.median > bbest) {
			bbest = st.median;
			bbest_sp = st.spread;
			bbest_k = k;
		}
	}
	snprintf(method, sizeof(method), "max of read/copy/scale/triad over %zu MiB buffers (best: %s)", bytes >> 20,
		 bwname[bbest_k]);
	cr_param(r, "peak_gbps", bbest, "GB/s", method, bbest_sp, 1);
	rc = 0;
	goto out;
fail:
	snprintf(r->skipped, sizeof(r->skipped), "peak kernel failed (%d)", rc);
out:
	cl_buf_free(c->cl, run.a);
	cl_buf_free(c->cl, run.b);
	cl_buf_free(c->cl, run.c);
	cl_buf_free(c->cl, run.out);
	cl_prog_free(run.p);
	return rc;
}
