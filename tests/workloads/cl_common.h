/* Helpers shared by the OpenCL workloads (header only: each workload is one
 * program). Picks the first device of the first platform. */
#ifndef TESTS_WORKLOADS_CL_COMMON_H
#define TESTS_WORKLOADS_CL_COMMON_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 120
#endif
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(x)                                                                                           \
	do {                                                                                               \
		cl_int e_ = (x);                                                                           \
		if (e_ != CL_SUCCESS) {                                                                    \
			fprintf(stderr, "%s: %s failed: %d\n", prog_name, #x, e_);                        \
			exit(1);                                                                           \
		}                                                                                          \
	} while (0)

struct clw {
	cl_platform_id plat;
	cl_device_id dev;
	cl_context ctx;
	char name[256];
};

static const char *prog_name = "workload";

static inline void clw_init(struct clw *w, const char *name)
{
	prog_name = name;
	cl_uint np;
	cl_int err;
	CHECK(clGetPlatformIDs(1, &w->plat, &np));
	CHECK(clGetDeviceIDs(w->plat, CL_DEVICE_TYPE_ALL, 1, &w->dev, NULL));
	CHECK(clGetDeviceInfo(w->dev, CL_DEVICE_NAME, sizeof(w->name), w->name, NULL));
	w->ctx = clCreateContext(NULL, 1, &w->dev, NULL, NULL, &err);
	CHECK(err);
}

static inline cl_program clw_build(struct clw *w, const char *src, const char *options)
{
	cl_int err;
	cl_program p = clCreateProgramWithSource(w->ctx, 1, &src, NULL, &err);
	CHECK(err);
	if (clBuildProgram(p, 1, &w->dev, options, NULL, NULL) != CL_SUCCESS) {
		char log[4096] = "";
		clGetProgramBuildInfo(p, w->dev, CL_PROGRAM_BUILD_LOG, sizeof(log), log, NULL);
		fprintf(stderr, "%s: build failed:\n%s\n", prog_name, log);
		exit(1);
	}
	return p;
}

static inline cl_kernel clw_kernel(cl_program p, const char *name)
{
	cl_int err;
	cl_kernel k = clCreateKernel(p, name, &err);
	CHECK(err);
	return k;
}

static inline cl_mem clw_buffer(struct clw *w, cl_mem_flags flags, size_t bytes, void *host)
{
	cl_int err;
	cl_mem m = clCreateBuffer(w->ctx, flags, bytes, host, &err);
	CHECK(err);
	return m;
}

static inline void clw_free(struct clw *w)
{
	clReleaseContext(w->ctx);
}

#endif
