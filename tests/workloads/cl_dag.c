/* Two independent kernels and a dependent third, on two in-order queues:
 *   q1: write X -> long_chain (A = f(X), ITERS x LONG) ---------\
 *   q2: write Y -> short_chain (B = g(Y), ITERS) -- event e2 --> combine (q1, waits on e2: C = A + B) -> read C
 * The critical path is write X -> long_chain -> combine -> read C; short_chain runs beside it.
 * Usage: cl_dag [LONG]  -- exit 0 if C is right. */
#include <math.h>

#include "cl_common.h"

#define N 65536
#define ITERS 100

static const char *src =
	"__kernel void long_chain(__global const float *x, __global float *a, int iters) {\n"
	"  int i = get_global_id(0); float v = x[i];\n"
	"  for (int k = 0; k < iters; k++) v = v * 0.5f + 1.0f;\n"
	"  a[i] = v;\n"
	"}\n"
	"__kernel void short_chain(__global const float *y, __global float *b, int iters) {\n"
	"  int i = get_global_id(0); float v = y[i];\n"
	"  for (int k = 0; k < iters; k++) v = v * 0.25f + 2.0f;\n"
	"  b[i] = v;\n"
	"}\n"
	"__kernel void combine(__global const float *a, __global const float *b, __global float *c) {\n"
	"  int i = get_global_id(0); c[i] = a[i] + b[i];\n"
	"}\n";

int main(int argc, char **argv)
{
	int longf = argc > 1 ? atoi(argv[1]) : 10;
	if (longf < 2 || longf > 1000)
		return 2;
	static float x[N], y[N], c[N];
	for (int i = 0; i < N; i++) {
		x[i] = (float)(i % 10);
		y[i] = (float)(i % 7);
	}
	struct clw w;
	clw_init(&w, "cl_dag");
	cl_int err;
	cl_command_queue q1 = clCreateCommandQueue(w.ctx, w.dev, 0, &err);
	CHECK(err);
	cl_command_queue q2 = clCreateCommandQueue(w.ctx, w.dev, 0, &err);
	CHECK(err);
	cl_program prog = clw_build(&w, src, "");
	cl_kernel kl = clw_kernel(prog, "long_chain"), ks = clw_kernel(prog, "short_chain"),
		  kc = clw_kernel(prog, "combine");
	cl_mem dx = clw_buffer(&w, CL_MEM_READ_ONLY, sizeof(x), NULL);
	cl_mem dy = clw_buffer(&w, CL_MEM_READ_ONLY, sizeof(y), NULL);
	cl_mem da = clw_buffer(&w, CL_MEM_READ_WRITE, sizeof(x), NULL);
	cl_mem db = clw_buffer(&w, CL_MEM_READ_WRITE, sizeof(x), NULL);
	cl_mem dc = clw_buffer(&w, CL_MEM_WRITE_ONLY, sizeof(x), NULL);
	int il = ITERS * longf, is = ITERS;
	CHECK(clEnqueueWriteBuffer(q1, dx, CL_FALSE, 0, sizeof(x), x, 0, NULL, NULL));
	CHECK(clEnqueueWriteBuffer(q2, dy, CL_FALSE, 0, sizeof(y), y, 0, NULL, NULL));
	CHECK(clSetKernelArg(kl, 0, sizeof(dx), &dx));
	CHECK(clSetKernelArg(kl, 1, sizeof(da), &da));
	CHECK(clSetKernelArg(kl, 2, sizeof(il), &il));
	CHECK(clSetKernelArg(ks, 0, sizeof(dy), &dy));
	CHECK(clSetKernelArg(ks, 1, sizeof(db), &db));
	CHECK(clSetKernelArg(ks, 2, sizeof(is), &is));
	CHECK(clSetKernelArg(kc, 0, sizeof(da), &da));
	CHECK(clSetKernelArg(kc, 1, sizeof(db), &db));
	CHECK(clSetKernelArg(kc, 2, sizeof(dc), &dc));
	size_t global = N;
	cl_event e2;
	CHECK(clEnqueueNDRangeKernel(q1, kl, 1, NULL, &global, NULL, 0, NULL, NULL));
	CHECK(clEnqueueNDRangeKernel(q2, ks, 1, NULL, &global, NULL, 0, NULL, &e2));
	CHECK(clFlush(q2));
	CHECK(clEnqueueNDRangeKernel(q1, kc, 1, NULL, &global, NULL, 1, &e2, NULL));
	CHECK(clEnqueueReadBuffer(q1, dc, CL_TRUE, 0, sizeof(c), c, 0, NULL, NULL));
	CHECK(clFinish(q1));
	CHECK(clFinish(q2));
	clReleaseEvent(e2);
	int bad = 0;
	for (int i = 0; i < N && !bad; i += 101) {
		float a = x[i], b = y[i];
		for (int k = 0; k < il; k++)
			a = a * 0.5f + 1.0f;
		for (int k = 0; k < is; k++)
			b = b * 0.25f + 2.0f;
		if (fabsf(a + b - c[i]) > 1e-3f) {
			fprintf(stderr, "cl_dag: mismatch at %d: %f vs %f\n", i, c[i], a + b);
			bad = 1;
		}
	}
	printf("cl_dag: long x%d on %s: %s\n", longf, w.name, bad ? "WRONG" : "ok");
	cl_mem ms[] = {dx, dy, da, db, dc};
	for (int i = 0; i < 5; i++)
		clReleaseMemObject(ms[i]);
	clReleaseKernel(kl);
	clReleaseKernel(ks);
	clReleaseKernel(kc);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q1);
	clReleaseCommandQueue(q2);
	clw_free(&w);
	return bad;
}
