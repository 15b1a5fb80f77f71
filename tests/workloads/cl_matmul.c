/* Sample OpenCL workload: C = A x B (one work-item per element), repeated,
 * checked against a CPU reference. Runs on any OpenCL device (PoCL here).
 * Usage: cl_matmul [N] [REPEATS] [cpu [CPU_REPEATS]]  -- exit 0 if the result is correct.
 *        cl_matmul N REPEATS ref  -- the CPU reference alone, REPEATS times, no OpenCL.
 * With "cpu" the whole product is also computed on the CPU (matmul_ref: the
 * same naive loop, 2 N^3 flops), CPU_REPEATS times (default 1), in a thread of
 * its own named cpu_ref (its trace windows are a row of their own in the
 * latency-sensitivity table), and every element compared; without it, a
 * 16 x 16 sample of elements is checked. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

static const char *src =
	"__kernel void matmul(__global const float *a, __global const float *b,\n"
	"                     __global float *c, int n) {\n"
	"  int i = get_global_id(1), j = get_global_id(0);\n"
	"  float acc = 0.0f;\n"
	"  for (int k = 0; k < n; k++) acc += a[i * n + k] * b[k * n + j];\n"
	"  c[i * n + j] = acc;\n"
	"}\n";

/* The CPU reference: the kernel's loop nest, one output element at a time. */
__attribute__((noinline)) static void matmul_ref(const float *a, const float *b, float *c, int n)
{
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			float acc = 0.0f;
			for (int k = 0; k < n; k++)
				acc += a[i * n + k] * b[k * n + j];
			c[i * n + j] = acc;
		}
}

struct ref_job {
	const float *a, *b;
	float *c;
	int n, repeats;
};

static void *ref_thread(void *arg)
{
	struct ref_job *j = arg;
	printf("cl_matmul: cpu reference: thread %ld, %d time(s)\n", (long)syscall(SYS_gettid), j->repeats);
	fflush(stdout);
	for (int r = 0; r < j->repeats; r++)
		matmul_ref(j->a, j->b, j->c, j->n);
	return NULL;
}

#define CHECK(x)                                                                                           \
	do {                                                                                               \
		cl_int e_ = (x);                                                                           \
		if (e_ != CL_SUCCESS) {                                                                    \
			fprintf(stderr, "cl_matmul: %s failed: %d\n", #x, e_);                            \
			return 1;                                                                          \
		}                                                                                          \
	} while (0)

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 256;
	int reps = argc > 2 ? atoi(argv[2]) : 10;
	if (argc > 3 && strcmp(argv[3], "ref") == 0) {
		/* the CPU reference alone, REPEATS times, in this thread, without OpenCL: its full
		 * trace under qemu-user (the plugin records the first thread) is the reference the
		 * cpu_ref thread's trace windows are checked against (bench/RESULTS.md) */
		int n0 = argc > 1 ? atoi(argv[1]) : 256, r0 = argc > 2 ? atoi(argv[2]) : 1;
		if (n0 < 16 || n0 > 4096 || r0 < 1)
			return 2;
		size_t sz = (size_t)n0 * n0 * sizeof(float);
		float *a0 = malloc(sz), *b0 = malloc(sz), *c0 = malloc(sz);
		if (!a0 || !b0 || !c0)
			return 1;
		for (int i = 0; i < n0 * n0; i++) {
			a0[i] = (float)(i % 7) * 0.5f;
			b0[i] = (float)(i % 5) * 0.25f;
		}
		printf("cl_matmul: ref matmul_ref=%p\n", (void *)matmul_ref);
		fflush(stdout);
		for (int r = 0; r < r0; r++)
			matmul_ref(a0, b0, c0, n0);
		printf("cl_matmul: ref %dx%d x%d: c[1] %f\n", n0, n0, r0, c0[1]);
		return 0;
	}
	int full = argc > 3 && argv[3][0] == 'c';
	int ref_repeats = full && argc > 4 ? atoi(argv[4]) : 1;
	if (ref_repeats < 1)
		return 2;
	if (n < 16 || n > 4096 || reps < 1)
		return 2;
	size_t bytes = (size_t)n * n * sizeof(float);
	float *a = malloc(bytes), *b = malloc(bytes), *c = malloc(bytes);
	for (int i = 0; i < n * n; i++) {
		a[i] = (float)(i % 7) * 0.5f;
		b[i] = (float)(i % 5) * 0.25f;
	}
	cl_platform_id plat;
	cl_device_id dev;
	cl_uint np;
	CHECK(clGetPlatformIDs(1, &plat, &np));
	CHECK(clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL));
	char name[256];
	CHECK(clGetDeviceInfo(dev, CL_DEVICE_NAME, sizeof(name), name, NULL));
	cl_int err;
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
	CHECK(err);
	cl_command_queue q = clCreateCommandQueue(ctx, dev, 0, &err);
	CHECK(err);
	cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
	CHECK(err);
	CHECK(clBuildProgram(prog, 1, &dev, "", NULL, NULL));
	cl_kernel k = clCreateKernel(prog, "matmul", &err);
	CHECK(err);
	cl_mem da = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, a, &err);
	CHECK(err);
	cl_mem db = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, b, &err);
	CHECK(err);
	cl_mem dc = clCreateBuffer(ctx, CL_MEM_WRITE_ONLY, bytes, NULL, &err);
	CHECK(err);
	CHECK(clSetKernelArg(k, 0, sizeof(da), &da));
	CHECK(clSetKernelArg(k, 1, sizeof(db), &db));
	CHECK(clSetKernelArg(k, 2, sizeof(dc), &dc));
	CHECK(clSetKernelArg(k, 3, sizeof(n), &n));
	size_t global[2] = {(size_t)n, (size_t)n};
	struct timespec t0, t1, r0; /* the commands' phase: enqueues to the end of the read (bench-opencl.sh) */
	clock_gettime(CLOCK_REALTIME, &r0); /* its start, for "from here to the process's end" */
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int r = 0; r < reps; r++)
		CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL));
	CHECK(clEnqueueReadBuffer(q, dc, CL_TRUE, 0, bytes, c, 0, NULL, NULL));
	CHECK(clFinish(q));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	int bad = 0;
	if (full) {
		float *ref = malloc(bytes);
		if (!ref)
			return 1;
		struct ref_job job = {a, b, ref, n, ref_repeats};
		pthread_t th;
		if (pthread_create(&th, NULL, ref_thread, &job) != 0)
			return 1;
		pthread_setname_np(th, "cpu_ref");
		pthread_join(th, NULL);
		for (int i = 0; i < n * n && !bad; i++)
			if (fabsf(ref[i] - c[i]) > 1e-3f * fabsf(ref[i]) + 1e-3f) {
				fprintf(stderr, "cl_matmul: mismatch at %d,%d: %f vs %f\n", i / n, i % n, c[i], ref[i]);
				bad = 1;
			}
		free(ref);
	}
	for (int i = 0; i < n && !bad && !full; i += n / 16) {
		for (int j = 0; j < n; j += n / 16) {
			double ref = 0;
			for (int kk = 0; kk < n; kk++)
				ref += (double)a[i * n + kk] * b[kk * n + j];
			if (fabs(ref - c[i * n + j]) > 1e-3 * fabs(ref) + 1e-3) {
				fprintf(stderr, "cl_matmul: mismatch at %d,%d: %f vs %f\n", i, j, c[i * n + j], ref);
				bad = 1;
				break;
			}
		}
	}
	printf("cl_matmul: %dx%d x%d on %s: %s\n", n, n, reps, name, bad ? "WRONG" : "ok");
	printf("cl_matmul: commands %.0f ns, from %lld%09ld ns (CLOCK_REALTIME)\n",
	       (double)(t1.tv_sec - t0.tv_sec) * 1e9 + (double)(t1.tv_nsec - t0.tv_nsec), (long long)r0.tv_sec,
	       r0.tv_nsec);
	clReleaseMemObject(da);
	clReleaseMemObject(db);
	clReleaseMemObject(dc);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	free(a);
	free(b);
	free(c);
	return bad;
}
