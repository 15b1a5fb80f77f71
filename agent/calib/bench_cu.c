/* Compute units (seed 2.2): the time of x equal work-groups rises as a
 * staircase 1..S, S+1..2S, ...; the step width S is the CU count. */
#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"
#include "net.h"

/* How many CPUs this process really gets now: the speedup of n spinning
 * threads over one. A CPU device shares them, so a busy host flattens the
 * staircase (other processes take the cores the work-groups would use). */
static void *spin(void *arg)
{
	volatile double x = 1;
	for (long i = 0; i < *(long *)arg; i++)
		x = x * 1.0000001 + 1e-9;
	return NULL;
}

static double host_parallelism(unsigned n)
{
	long iters = 4000000;
	pthread_t th[64];
	if (n > 64)
		n = 64;
	uint64_t t0 = clock_mono_ns();
	spin(&iters);
	double one = (double)(clock_mono_ns() - t0);
	t0 = clock_mono_ns();
	unsigned started = 0;
	for (unsigned i = 0; i < n; i++, started++)
		if (pthread_create(&th[i], NULL, spin, &iters) != 0)
			break;
	for (unsigned i = 0; i < started; i++)
		pthread_join(th[i], NULL);
	double all = (double)(clock_mono_ns() - t0);
	return all > 0 ? one * started / all : 0;
}

static const char cu_src[] = "__kernel void cu_chain(__global float *out, float a, float b, int n)\n"
			     "{\n"
			     "	float x = a + (float)get_global_id(0);\n"
			     "	for (int i = 0; i < n; i++) {\n"
			     "		x = mad(x, b, a); x = mad(x, b, a); x = mad(x, b, a); x = mad(x, b, a);\n"
			     "		x = mad(x, b, a); x = mad(x, b, a); x = mad(x, b, a); x = mad(x, b, a);\n"
			     "	}\n"
			     "	out[get_global_id(0)] = x;\n"
			     "}\n";

struct cu_run {
	struct cl_prog *p;
	cl_buf *out;
	size_t groups, local;
	int n;
};

static int cu_once(void *arg, double *s)
{
	struct cu_run *r = arg;
	float a = 1.0f, b = 0.5f;
	struct cl_arg args[] = {CL_ARG_BUF(r->out), CL_ARG_VAL(a), CL_ARG_VAL(b), CL_ARG_VAL(r->n)};
	return cl_run(r->p, "cu_chain", args, 4, r->groups * r->local, r->local, s);
}

int bench_compute_units(struct calib_ctx *c, struct calib_result *r)
{
	char err[1024];
	unsigned cus = c->dev->compute_units ? c->dev->compute_units : 1;
	size_t local = c->dev->is_cpu ? 1 : c->dev->max_wg; /* one group fills one CU on a GPU */
	size_t maxg = (size_t)(c->quick ? 4 : 8) * cus;
	if (maxg > 128)
		maxg = 128;
	if (maxg < 4)
		maxg = 4;
	struct cu_run run = {.groups = 1, .local = local, .n = 1000};
	int rc = cl_prog_build(c->cl, cu_src, NULL, &run.p, err, sizeof(err));
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "%s", err);
		return rc;
	}
	if ((rc = cl_buf_create(c->cl, maxg * local * sizeof(float), NULL, &run.out)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate the output buffer");
		goto out;
	}
	double t;
	if ((rc = cu_once(&run, &t)) < 0 || (rc = cu_once(&run, &t)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "kernel run failed (%d)", rc);
		goto out;
	}
	for (int i = 0; i < 3 && t < (c->quick ? 0.006 : 0.012); i++) { /* the first trial may be far too short */
		run.n = (int)cr_scale(run.n, t, c->quick ? 0.01 : 0.02, 100, 1L << 28);
		if ((rc = cu_once(&run, &t)) < 0)
			goto out;
	}
	struct calib_curve *cv = cr_curve(r, "time_vs_workgroups", "work-groups", "s");
	size_t step = maxg > 64 ? maxg / 64 : 1;
	for (size_t g = 1; g <= maxg; g += step) {
		double v[CR_MAX_REPS];
		run.groups = g;
		if ((rc = cr_repeat(c->reps, cu_once, &run, v)) < 0) {
			snprintf(r->skipped, sizeof(r->skipped), "kernel run failed at %zu groups (%d)", g, rc);
			goto out;
		}
		cr_point(cv, (double)g, v, c->reps);
	}
	struct calib_detect d;
	int drc = calib_detect_staircase(cv->x, cv->y, cv->n, &d);
	double per[CR_MAX_REPS], y[CR_MAX_POINTS];
	unsigned np = 0;
	for (unsigned k = 0; k < cv->reps; k++) {
		struct calib_detect dk;
		cr_rep_y(cv, k, y);
		if (calib_detect_staircase(cv->x, y, cv->n, &dk) == 0)
			per[np++] = dk.value;
	}
	struct calib_stat st = {.spread = INFINITY};
	if (np)
		calib_stat(per, np, &st);
	char method[CALIB_METHOD_MAX];
	double conf = drc == 0 ? d.confidence : 0;
	double par = c->dev->is_cpu ? host_parallelism(cus) : NAN;
	bool busy = c->dev->is_cpu && par < 0.75 * cus;
	if (busy)
		conf *= 0.3;
	/* a CPU device runs at most its reported CUs' worth of work-groups at once
	 * (PoCL's pthread device has one worker per reported CU): a wider step is
	 * noise, never a measurement; it is flagged, not passed on */
	bool wider = c->dev->is_cpu && drc == 0 && d.value > cus;
	if (wider)
		conf *= 0.3;
	snprintf(method, sizeof(method),
		 "staircase of time vs 1..%zu groups of %zu item(s), %d mads each; step width (%u/%u reps agree)%s%s",
		 maxg, local, run.n * 8, (unsigned)np, cv->reps, busy ? "; HOST BUSY: confidence lowered" : "",
		 wider ? "; WIDER THAN THE REPORTED CUs: confidence lowered" : "");
	cr_param(r, "compute_units", drc == 0 ? d.value : (double)cus, "count", method,
		 np ? st.spread : INFINITY, conf);
	if (c->dev->is_cpu)
		cr_param(r, "host_parallel_speedup", par, "x", "n spinning threads vs one, n = reported CUs (measured next to the staircase)", 0, 1);
	cr_param(r, "compute_units_reported", cus, "count", "clGetDeviceInfo(CL_DEVICE_MAX_COMPUTE_UNITS)", 0, 1);
	rc = 0;
out:
	cl_buf_free(c->cl, run.out);
	cl_prog_free(run.p);
	return rc;
}
