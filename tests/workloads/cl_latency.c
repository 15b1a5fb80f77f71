/* clpeak --kernel-latency's shape, and what its calls cost (issue #41).
 *   cl_latency N        N times: a one-work-item kernel with an event, clFinish, the event's
 *                       QUEUED and START times, the event released (as clpeak's kernel latency
 *                       test does); prints the commands and the mean queued-to-start latency.
 *   cl_latency N calls  per call, over N completed events: clRetainEvent + clReleaseEvent,
 *                       clGetEventInfo (status), clGetEventProfilingInfo (one name),
 *                       clSetEventCallback (registration on a completed event, until the
 *                       callback has run), an enqueue+finish round trip: ns per call on stdout.
 * Run plainly for the runtime's own cost, under `agent run` for what the capture adds. */
#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>

#include "cl_common.h"

static const char *src = "__kernel void k(__global int *a) { a[get_global_id(0)] += 1; }";

static double now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static _Atomic unsigned called;

static void CL_CALLBACK on_complete(cl_event e, cl_int st, void *user)
{
	(void)e, (void)st, (void)user;
	atomic_fetch_add(&called, 1);
}

static void one(cl_command_queue q, cl_kernel k, cl_event *ev)
{
	size_t one = 1;
	CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &one, &one, 0, NULL, ev));
	CHECK(clFinish(q));
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000;
	bool calls = argc > 2 && strcmp(argv[2], "calls") == 0;
	if (n < 1 || n > 10000000) {
		fprintf(stderr, "usage: cl_latency N [calls]\n");
		return 2;
	}
	struct clw w;
	clw_init(&w, "cl_latency");
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(w.ctx, w.dev, CL_QUEUE_PROFILING_ENABLE, &err);
	CHECK(err);
	cl_program p = clw_build(&w, src, NULL);
	cl_kernel k = clw_kernel(p, "k");
	cl_mem a = clw_buffer(&w, CL_MEM_READ_WRITE, sizeof(cl_int), NULL);
	cl_int zero = 0;
	CHECK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, sizeof(zero), &zero, 0, NULL, NULL));
	CHECK(clSetKernelArg(k, 0, sizeof(a), &a));
	if (!calls) {
		double sum = 0;
		for (long i = 0; i < n; i++) {
			cl_event ev;
			one(q, k, &ev);
			cl_ulong t0 = 0, t1 = 0;
			CHECK(
			    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_QUEUED, sizeof(t0), &t0, NULL));
			CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(t1), &t1, NULL));
			sum += (double)(t1 - t0);
			CHECK(clReleaseEvent(ev));
		}
		cl_int got = 0;
		CHECK(clEnqueueReadBuffer(q, a, CL_TRUE, 0, sizeof(got), &got, 0, NULL, NULL));
		printf("%ld commands, kernel ran %d times, queued to start %.2f us on average\n", n, got,
		       sum / (double)n / 1e3);
	} else {
		cl_event *evs = malloc((size_t)n * sizeof(*evs));
		if (!evs)
			return 1;
		double t = now_ns();
		for (long i = 0; i < n; i++)
			one(q, k, &evs[i]);
		double round = (now_ns() - t) / (double)n;
		t = now_ns();
		for (long i = 0; i < n; i++) {
			CHECK(clRetainEvent(evs[i]));
			CHECK(clReleaseEvent(evs[i]));
		}
		double retain = (now_ns() - t) / (double)n;
		t = now_ns();
		for (long i = 0; i < n; i++) {
			cl_int st;
			CHECK(
			    clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL));
		}
		double status = (now_ns() - t) / (double)n;
		t = now_ns();
		for (long i = 0; i < n; i++) {
			cl_ulong v;
			CHECK(clGetEventProfilingInfo(evs[i], CL_PROFILING_COMMAND_END, sizeof(v), &v, NULL));
		}
		double prof = (now_ns() - t) / (double)n;
		t = now_ns();
		for (long i = 0; i < n; i++)
			CHECK(clSetEventCallback(evs[i], CL_COMPLETE, on_complete, NULL));
		double cb_reg = (now_ns() - t) / (double)n;
		for (int i = 0; i < 100000 && atomic_load(&called) < (unsigned)n; i++) { /* at most ~10 s */
			struct timespec ts = {0, 100000};
			nanosleep(&ts, NULL);
		}
		double cb_all = (now_ns() - t) / (double)n;
		for (long i = 0; i < n; i++)
			CHECK(clReleaseEvent(evs[i]));
		free(evs);
		printf("enqueue+finish %.0f ns\nretain+release %.0f ns\nevent status %.0f ns\nprofiling info "
		       "%.0f ns\n"
		       "callback registration %.0f ns\ncallback until run %.0f ns (%u of %ld ran)\n",
		       round, retain, status, prof, cb_reg, cb_all, atomic_load(&called), n);
	}
	clReleaseMemObject(a);
	clReleaseKernel(k);
	clReleaseProgram(p);
	clReleaseCommandQueue(q);
	clw_free(&w);
	return 0;
}
