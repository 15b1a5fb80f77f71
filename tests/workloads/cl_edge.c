/* Edge cases for the OpenCL capture: how an app may create queues and use
 * (or not use) events. Usage: cl_edge MODE [EXIT_CODE]
 *   noprof   queue without CL_QUEUE_PROFILING_ENABLE, every event pointer NULL
 *   events   profiling queue; the app takes each event and releases it right
 *            after the enqueue (before completion), and reads its own timing of one
 *   props    clCreateCommandQueueWithProperties (OpenCL 2.0 API), no profiling property
 *   copy     copy buffer, map for writing + unmap, then a kernel on the result
 *   idle     builds its kernel and enqueues nothing (a session without commands)
 *   crash    as noprof, then dies by SIGSEGV of its own (no OpenCL call running)
 *   crash-inside  a long kernel; another thread waits for it in clFinish while
 *            the main thread aborts (SIGABRT) 300 ms later
 * Each mode runs 4 kernels of ~1 ms and checks the result; on success the
 * exit code is EXIT_CODE (default 0), so a wrapper's pass-through shows. */
#define CL_TARGET_OPENCL_VERSION 200
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <unistd.h>

#include "cl_common.h"

#define N 65536
#define KERNELS 4

static const char *src = "__kernel void relax(__global float *v, int iters) {\n"
			 "  int i = get_global_id(0); float x = v[i];\n"
			 "  for (int k = 0; k < iters; k++) x = x * 0.5f + 1.0f;\n"
			 "  v[i] = x;\n"
			 "}\n";

static cl_command_queue finish_q;

static void *finisher(void *arg)
{
	(void)arg;
	clFinish(finish_q); /* still waiting when the main thread aborts */
	return NULL;
}

/* A kernel of several seconds, a thread waiting for it inside clFinish, and an abort. */
static void crash_inside(cl_command_queue q, cl_kernel k, cl_mem v)
{
	int iters = 100000;
	size_t global = N;
	CHECK(clSetKernelArg(k, 0, sizeof(v), &v));
	CHECK(clSetKernelArg(k, 1, sizeof(iters), &iters));
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
	finish_q = q;
	pthread_t t;
	if (pthread_create(&t, NULL, finisher, NULL) != 0)
		exit(1);
	usleep(300000);
	printf("cl_edge crash-inside: aborting while a thread waits in clFinish\n");
	fflush(stdout);
	abort();
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "noprof";
	int code = argc > 2 ? atoi(argv[2]) : 0;
	struct clw w;
	clw_init(&w, "cl_edge");
	cl_int err;
	cl_command_queue q;
	if (strcmp(mode, "events") == 0)
		q = clCreateCommandQueue(w.ctx, w.dev, CL_QUEUE_PROFILING_ENABLE, &err);
	else if (strcmp(mode, "props") == 0) {
		const cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, 0, 0};
		q = clCreateCommandQueueWithProperties(w.ctx, w.dev, props, &err);
	} else if (strcmp(mode, "noprof") == 0 || strcmp(mode, "copy") == 0 || strcmp(mode, "idle") == 0 ||
		   strncmp(mode, "crash", 5) == 0)
		q = clCreateCommandQueue(w.ctx, w.dev, 0, &err);
	else {
		fprintf(stderr, "cl_edge: unknown mode '%s'\n", mode);
		return 2;
	}
	CHECK(err);
	cl_program prog = clw_build(&w, src, "-cl-mad-enable");
	cl_kernel k = clw_kernel(prog, "relax");
	static float host[N];
	for (int i = 0; i < N; i++)
		host[i] = (float)(i % 100);
	cl_mem v = clw_buffer(&w, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof(host), host);
	if (strcmp(mode, "copy") == 0) {
		cl_mem tmp = clw_buffer(&w, CL_MEM_READ_WRITE, sizeof(host), NULL);
		CHECK(clEnqueueCopyBuffer(q, v, tmp, 0, 0, sizeof(host), 0, NULL, NULL));
		float *p = clEnqueueMapBuffer(q, tmp, CL_TRUE, CL_MAP_WRITE, 0, sizeof(host), 0, NULL, NULL, &err);
		CHECK(err);
		for (int i = 0; i < N; i++)
			p[i] += 1.0f;
		CHECK(clEnqueueUnmapMemObject(q, tmp, p, 0, NULL, NULL));
		CHECK(clEnqueueCopyBuffer(q, tmp, v, 0, 0, sizeof(host), 0, NULL, NULL));
		clReleaseMemObject(tmp);
		for (int i = 0; i < N; i++)
			host[i] += 1.0f;
	}
	if (strcmp(mode, "idle") == 0) {
		printf("cl_edge idle: built, nothing enqueued\n");
		return code;
	}
	if (strcmp(mode, "crash-inside") == 0)
		crash_inside(q, k, v);
	int iters = 200;
	CHECK(clSetKernelArg(k, 0, sizeof(v), &v));
	CHECK(clSetKernelArg(k, 1, sizeof(iters), &iters));
	size_t global = N;
	cl_event kept = NULL;
	for (int r = 0; r < KERNELS; r++) {
		if (strcmp(mode, "events") == 0) {
			cl_event ev;
			CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
			if (r == 0)
				kept = ev;
			else
				CHECK(clReleaseEvent(ev)); /* long before it completes */
		} else {
			CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
		}
	}
	static float out[N];
	CHECK(clEnqueueReadBuffer(q, v, CL_TRUE, 0, sizeof(out), out, 0, NULL, NULL));
	CHECK(clFinish(q));
	int bad = 0;
	if (kept) {
		cl_ulong s = 0, e = 0;
		CHECK(clGetEventProfilingInfo(kept, CL_PROFILING_COMMAND_START, sizeof(s), &s, NULL));
		CHECK(clGetEventProfilingInfo(kept, CL_PROFILING_COMMAND_END, sizeof(e), &e, NULL));
		if (e < s) {
			fprintf(stderr, "cl_edge: own profiling info END < START\n");
			bad = 1;
		}
		clReleaseEvent(kept);
	}
	for (int i = 0; i < N && !bad; i += 97) {
		float x = host[i];
		for (int r = 0; r < KERNELS * iters; r++)
			x = x * 0.5f + 1.0f;
		if (x < out[i] - 1e-3f || x > out[i] + 1e-3f) {
			fprintf(stderr, "cl_edge: mismatch at %d: %f vs %f\n", i, out[i], x);
			bad = 1;
		}
	}
	printf("cl_edge %s: %d kernels on %s: %s\n", mode, KERNELS, w.name, bad ? "WRONG" : "ok");
	if (strcmp(mode, "crash") == 0) {
		fflush(stdout);
		signal(SIGSEGV, SIG_DFL); /* whatever the runtime installed: the default, a crash */
		raise(SIGSEGV);
	}
	clReleaseMemObject(v);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clw_free(&w);
	return bad ? 1 : code;
}
