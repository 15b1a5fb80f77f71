/* Matrix multiply, coarse-grained (Mali paper): one work-item computes one
 * whole row of C. Checked against a CPU reference.
 * Usage: cl_matmul_coarse [N] [REPEATS]  -- exit 0 if the result is correct. */
#include <math.h>

#include "cl_common.h"

static const char *src =
	"__kernel void matmul_row(__global const float *a, __global const float *b,\n"
	"                         __global float *c, int n) {\n"
	"  int i = get_global_id(0);\n"
	"  for (int j = 0; j < n; j++) {\n"
	"    float acc = 0.0f;\n"
	"    for (int k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];\n"
	"    c[i * n + j] = acc;\n"
	"  }\n"
	"}\n";

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	if (n < 16 || n > 4096 || reps < 1)
		return 2;
	size_t bytes = (size_t)n * n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	for (int i = 0; i < n * n; i++) {
		a[i] = (float)(i % 11) * 0.25f;
		b[i] = (float)(i % 3) * 0.5f;
	}
	struct clw w;
	clw_init(&w, "cl_matmul_coarse");
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(w.ctx, w.dev, 0, &err);
	CHECK(err);
	cl_program prog = clw_build(&w, src, "-cl-fast-relaxed-math");
	cl_kernel k = clw_kernel(prog, "matmul_row");
	cl_mem da = clw_buffer(&w, CL_MEM_READ_ONLY, bytes, NULL);
	cl_mem db = clw_buffer(&w, CL_MEM_READ_ONLY, bytes, NULL);
	cl_mem dc = clw_buffer(&w, CL_MEM_WRITE_ONLY, bytes, NULL);
	CHECK(clEnqueueWriteBuffer(q, da, CL_FALSE, 0, bytes, a, 0, NULL, NULL));
	CHECK(clEnqueueWriteBuffer(q, db, CL_FALSE, 0, bytes, b, 0, NULL, NULL));
	CHECK(clSetKernelArg(k, 0, sizeof(da), &da));
	CHECK(clSetKernelArg(k, 1, sizeof(db), &db));
	CHECK(clSetKernelArg(k, 2, sizeof(dc), &dc));
	CHECK(clSetKernelArg(k, 3, sizeof(n), &n));
	size_t global = (size_t)n;
	for (int r = 0; r < reps; r++)
		CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
	CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
	CHECK(clFinish(q));
	int bad = 0;
	for (int i = 0; i < n && !bad; i += n / 16)
		for (int j = 0; j < n; j += n / 16) {
			double ref = 0;
			for (int kk = 0; kk < n; kk++)
				ref += (double)a[i * n + kk] * b[kk * n + j];
			if (fabs(ref - c[i * n + j]) > 1e-3 * fabs(ref) + 1e-3) {
				fprintf(stderr, "cl_matmul_coarse: mismatch at %d,%d: %f vs %f\n", i, j, c[i * n + j], ref);
				bad = 1;
				break;
			}
		}
	printf("cl_matmul_coarse: %dx%d x%d on %s: %s\n", n, n, reps, w.name, bad ? "WRONG" : "ok");
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clw_free(&w);
	free(a);
	free(b);
	free(c);
	return bad;
}
