#include "cl_env.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated/config.h"
#include "log.h"
#include "net.h"
#include "opencl_probe.h"

#ifndef CONFIG_AGENT_OPENCL

int cl_env_open(int index, struct cl_env **out, char *err, size_t errlen)
{
	(void)index;
	*out = NULL;
	snprintf(err, errlen, "OpenCL support is not compiled in (CONFIG_AGENT_OPENCL)");
	return -ENOTSUP;
}
void cl_env_close(struct cl_env *e) { (void)e; }
const struct cl_dev_info *cl_env_info(const struct cl_env *e) { (void)e; return NULL; }
int cl_prog_build(struct cl_env *e, const char *src, const char *options, struct cl_prog **out, char *err,
		  size_t errlen)
{
	(void)e, (void)src, (void)options, (void)err, (void)errlen;
	*out = NULL;
	return -ENOTSUP;
}
void cl_prog_free(struct cl_prog *p) { (void)p; }
int cl_run(struct cl_prog *p, const char *name, const struct cl_arg *args, unsigned nargs, size_t global,
	   size_t local, double *seconds)
{
	(void)p, (void)name, (void)args, (void)nargs, (void)global, (void)local, (void)seconds;
	return -ENOTSUP;
}
size_t cl_kernel_wg_multiple(struct cl_prog *p, const char *name) { (void)p, (void)name; return 0; }
int cl_buf_create(struct cl_env *e, size_t bytes, const void *host_data, cl_buf **out)
{
	(void)e, (void)bytes, (void)host_data;
	*out = NULL;
	return -ENOTSUP;
}
int cl_buf_create_host(struct cl_env *e, size_t bytes, void *host, cl_buf **out)
{
	(void)e, (void)bytes, (void)host;
	*out = NULL;
	return -ENOTSUP;
}
int cl_buf_write(struct cl_env *e, cl_buf *b, const void *data, size_t bytes) { (void)e, (void)b, (void)data, (void)bytes; return -ENOTSUP; }
int cl_buf_read(struct cl_env *e, cl_buf *b, void *data, size_t bytes) { (void)e, (void)b, (void)data, (void)bytes; return -ENOTSUP; }
void cl_buf_free(struct cl_env *e, cl_buf *b) { (void)e, (void)b; }

#else

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer: the OpenCL runtime (PoCL and the LLVM/Clang it compiles
 * kernels with, the ICD loader) keeps allocations until exit by design.
 * Suppress leaks whose stacks run through those libraries only; our own
 * allocations are still checked. Built into every sanitizer binary that
 * links this file (agent, tests), so no environment wiring is needed. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void)
{
	return "leak:libpocl.so\nleak:libLLVM\nleak:libclang\nleak:libOpenCL.so\n";
}
#endif

#define CL_TARGET_OPENCL_VERSION 120
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <dlfcn.h>

/* The entry points we use, resolved with dlsym. */
#define CL_FUNCS(X)                                                                                          \
	X(clGetPlatformIDs, cl_int, (cl_uint, cl_platform_id *, cl_uint *))                                   \
	X(clGetDeviceIDs, cl_int, (cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *))        \
	X(clGetDeviceInfo, cl_int, (cl_device_id, cl_device_info, size_t, void *, size_t *))                   \
	X(clCreateContext, cl_context,                                                                        \
	  (const cl_context_properties *, cl_uint, const cl_device_id *,                                       \
	   void(CL_CALLBACK *)(const char *, const void *, size_t, void *), void *, cl_int *))                 \
	X(clCreateCommandQueue, cl_command_queue, (cl_context, cl_device_id, cl_command_queue_properties, cl_int *)) \
	X(clCreateProgramWithSource, cl_program, (cl_context, cl_uint, const char **, const size_t *, cl_int *)) \
	X(clBuildProgram, cl_int,                                                                             \
	  (cl_program, cl_uint, const cl_device_id *, const char *, void(CL_CALLBACK *)(cl_program, void *), void *)) \
	X(clGetProgramBuildInfo, cl_int, (cl_program, cl_device_id, cl_program_build_info, size_t, void *, size_t *)) \
	X(clCreateKernel, cl_kernel, (cl_program, const char *, cl_int *))                                     \
	X(clSetKernelArg, cl_int, (cl_kernel, cl_uint, size_t, const void *))                                  \
	X(clGetKernelWorkGroupInfo, cl_int, (cl_kernel, cl_device_id, cl_kernel_work_group_info, size_t, void *, size_t *)) \
	X(clEnqueueNDRangeKernel, cl_int,                                                                     \
	  (cl_command_queue, cl_kernel, cl_uint, const size_t *, const size_t *, const size_t *, cl_uint,       \
	   const cl_event *, cl_event *))                                                                       \
	X(clFinish, cl_int, (cl_command_queue))                                                                \
	X(clWaitForEvents, cl_int, (cl_uint, const cl_event *))                                                \
	X(clGetEventProfilingInfo, cl_int, (cl_event, cl_profiling_info, size_t, void *, size_t *))            \
	X(clReleaseEvent, cl_int, (cl_event))                                                                  \
	X(clCreateBuffer, cl_mem, (cl_context, cl_mem_flags, size_t, void *, cl_int *))                        \
	X(clEnqueueWriteBuffer, cl_int,                                                                       \
	  (cl_command_queue, cl_mem, cl_bool, size_t, size_t, const void *, cl_uint, const cl_event *, cl_event *)) \
	X(clEnqueueReadBuffer, cl_int,                                                                        \
	  (cl_command_queue, cl_mem, cl_bool, size_t, size_t, void *, cl_uint, const cl_event *, cl_event *))  \
	X(clReleaseMemObject, cl_int, (cl_mem))                                                                \
	X(clReleaseKernel, cl_int, (cl_kernel))                                                                \
	X(clReleaseProgram, cl_int, (cl_program))                                                              \
	X(clReleaseCommandQueue, cl_int, (cl_command_queue))                                                   \
	X(clReleaseContext, cl_int, (cl_context))

struct cl_fns {
#define X(name, ret, args) ret(CL_API_CALL *name) args;
	CL_FUNCS(X)
#undef X
};

struct cl_env {
	void *lib;
	struct cl_fns f;
	cl_device_id dev;
	cl_context ctx;
	cl_command_queue q;
	bool profiling;
	struct cl_dev_info info;
};

#define PROG_MAX_KERNELS 64

struct cl_prog {
	struct cl_env *e;
	cl_program prog;
	struct {
		char name[64];
		cl_kernel k;
	} kern[PROG_MAX_KERNELS];
	int nkern;
};

const struct cl_dev_info *cl_env_info(const struct cl_env *e)
{
	return e ? &e->info : NULL;
}

static void dev_str(struct cl_env *e, cl_device_info what, char *out, size_t len)
{
	out[0] = 0;
	if (e->f.clGetDeviceInfo(e->dev, what, len, out, NULL) != CL_SUCCESS)
		out[0] = 0;
	out[len - 1] = 0;
}

int cl_env_open(int index, struct cl_env **out, char *err, size_t errlen)
{
	*out = NULL;
	struct cl_env *e = calloc(1, sizeof(*e));
	if (!e) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	e->lib = opencl_lib_open(err, errlen);
	if (!e->lib) {
		free(e);
		return -ENOENT;
	}
#define X(name, ret, args)                                                                                   \
	*(void **)&e->f.name = dlsym(e->lib, #name);                                                          \
	if (!e->f.name) {                                                                                      \
		snprintf(err, errlen, "libOpenCL.so.1 lacks %s", #name);                                        \
		cl_env_close(e);                                                                                \
		return -ENOSYS;                                                                                 \
	}
	CL_FUNCS(X)
#undef X
	cl_platform_id plats[8];
	cl_uint np = 0;
	if (e->f.clGetPlatformIDs(8, plats, &np) != CL_SUCCESS || np == 0) {
		snprintf(err, errlen, "no OpenCL platform found (is a driver such as pocl-opencl-icd installed?)");
		cl_env_close(e);
		return -ENODEV;
	}
	if (np > 8)
		np = 8;
	cl_device_id all[64];
	cl_uint nall = 0;
	for (cl_uint i = 0; i < np && nall < 64; i++) {
		cl_uint nd = 0;
		if (e->f.clGetDeviceIDs(plats[i], CL_DEVICE_TYPE_ALL, 64 - nall, all + nall, &nd) == CL_SUCCESS)
			nall += nd < 64 - nall ? nd : 64 - nall;
	}
	if (nall == 0) {
		snprintf(err, errlen, "no OpenCL device found");
		cl_env_close(e);
		return -ENODEV;
	}
	if (index >= (int)nall) {
		snprintf(err, errlen, "--device %d: there are %u OpenCL devices (0..%u)", index, nall, nall - 1);
		cl_env_close(e);
		return -ENODEV;
	}
	int pick = index;
	for (cl_uint i = 0; pick < 0 && i < nall; i++) {
		cl_device_type t = 0;
		if (e->f.clGetDeviceInfo(all[i], CL_DEVICE_TYPE, sizeof(t), &t, NULL) == CL_SUCCESS &&
		    (t & CL_DEVICE_TYPE_GPU))
			pick = (int)i;
	}
	e->dev = all[pick < 0 ? 0 : pick];
	struct cl_dev_info *d = &e->info;
	dev_str(e, CL_DEVICE_NAME, d->name, sizeof(d->name));
	dev_str(e, CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
	dev_str(e, CL_DEVICE_VERSION, d->version, sizeof(d->version));
	cl_device_type t = 0;
	cl_uint u = 0;
	cl_ulong ul = 0;
	size_t sz = 0;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_TYPE, sizeof(t), &t, NULL) == CL_SUCCESS)
		d->type = (uint32_t)t;
	d->is_cpu = (t & CL_DEVICE_TYPE_CPU) != 0;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(u), &u, NULL) == CL_SUCCESS)
		d->compute_units = u;
	u = 0;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(u), &u, NULL) == CL_SUCCESS)
		d->clock_mhz = u;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof(sz), &sz, NULL) == CL_SUCCESS)
		d->max_wg = sz;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(ul), &ul, NULL) == CL_SUCCESS)
		d->global_mem = ul;
	ul = 0;
	if (e->f.clGetDeviceInfo(e->dev, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof(ul), &ul, NULL) == CL_SUCCESS)
		d->max_alloc = ul;
	char ext[4096];
	dev_str(e, CL_DEVICE_EXTENSIONS, ext, sizeof(ext));
	d->fp16 = strstr(ext, "cl_khr_fp16") != NULL;
	if (d->max_wg == 0)
		d->max_wg = 1;
	cl_int rc;
	e->ctx = e->f.clCreateContext(NULL, 1, &e->dev, NULL, NULL, &rc);
	if (!e->ctx) {
		snprintf(err, errlen, "clCreateContext failed (%d) on %s", rc, d->name);
		cl_env_close(e);
		return -EIO;
	}
	e->q = e->f.clCreateCommandQueue(e->ctx, e->dev, CL_QUEUE_PROFILING_ENABLE, &rc);
	e->profiling = e->q != NULL;
	if (!e->q)
		e->q = e->f.clCreateCommandQueue(e->ctx, e->dev, 0, &rc);
	if (!e->q) {
		snprintf(err, errlen, "clCreateCommandQueue failed (%d) on %s", rc, d->name);
		cl_env_close(e);
		return -EIO;
	}
	if (!e->profiling)
		log_warn("%s: no profiling queue, timing kernels with the wall clock", d->name);
	*out = e;
	return 0;
}

void cl_env_close(struct cl_env *e)
{
	if (!e)
		return;
	if (e->q)
		e->f.clReleaseCommandQueue(e->q);
	if (e->ctx)
		e->f.clReleaseContext(e->ctx);
	/* No dlclose: drivers (PoCL included) keep threads and atexit handlers around. */
	free(e);
}

int cl_prog_build(struct cl_env *e, const char *src, const char *options, struct cl_prog **out, char *err,
		  size_t errlen)
{
	*out = NULL;
	cl_int rc;
	cl_program prog = e->f.clCreateProgramWithSource(e->ctx, 1, &src, NULL, &rc);
	if (!prog) {
		snprintf(err, errlen, "clCreateProgramWithSource failed (%d)", rc);
		return -EIO;
	}
	rc = e->f.clBuildProgram(prog, 1, &e->dev, options ? options : "", NULL, NULL);
	if (rc != CL_SUCCESS) {
		char log[2048] = "";
		e->f.clGetProgramBuildInfo(prog, e->dev, CL_PROGRAM_BUILD_LOG, sizeof(log), log, NULL);
		log[sizeof(log) - 1] = 0;
		snprintf(err, errlen, "kernel build failed (%d): %.900s", rc, log);
		e->f.clReleaseProgram(prog);
		return -EIO;
	}
	struct cl_prog *p = calloc(1, sizeof(*p));
	if (!p) {
		e->f.clReleaseProgram(prog);
		return -ENOMEM;
	}
	p->e = e;
	p->prog = prog;
	*out = p;
	return 0;
}

void cl_prog_free(struct cl_prog *p)
{
	if (!p)
		return;
	for (int i = 0; i < p->nkern; i++)
		p->e->f.clReleaseKernel(p->kern[i].k);
	p->e->f.clReleaseProgram(p->prog);
	free(p);
}

static cl_kernel kernel(struct cl_prog *p, const char *name)
{
	for (int i = 0; i < p->nkern; i++)
		if (strcmp(p->kern[i].name, name) == 0)
			return p->kern[i].k;
	if (p->nkern >= PROG_MAX_KERNELS)
		return NULL;
	cl_int rc;
	cl_kernel k = p->e->f.clCreateKernel(p->prog, name, &rc);
	if (!k) {
		log_debug("clCreateKernel %s failed (%d)", name, rc);
		return NULL;
	}
	snprintf(p->kern[p->nkern].name, sizeof(p->kern[p->nkern].name), "%s", name);
	p->kern[p->nkern++].k = k;
	return k;
}

size_t cl_kernel_wg_multiple(struct cl_prog *p, const char *name)
{
	cl_kernel k = kernel(p, name);
	size_t m = 0;
	if (!k || p->e->f.clGetKernelWorkGroupInfo(k, p->e->dev, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
						   sizeof(m), &m, NULL) != CL_SUCCESS)
		return 0;
	return m;
}

int cl_run(struct cl_prog *p, const char *name, const struct cl_arg *args, unsigned nargs, size_t global,
	   size_t local, double *seconds)
{
	struct cl_env *e = p->e;
	cl_kernel k = kernel(p, name);
	if (!k)
		return -ENOENT;
	for (unsigned i = 0; i < nargs; i++) {
		cl_int rc = args[i].buf ? e->f.clSetKernelArg(k, i, sizeof(cl_mem), &args[i].buf)
					: e->f.clSetKernelArg(k, i, args[i].size, args[i].ptr);
		if (rc != CL_SUCCESS) {
			log_debug("%s: clSetKernelArg %u failed (%d)", name, i, rc);
			return -EINVAL;
		}
	}
	cl_event ev = NULL;
	uint64_t t0 = clock_mono_ns();
	cl_int rc = e->f.clEnqueueNDRangeKernel(e->q, k, 1, NULL, &global, local ? &local : NULL, 0, NULL, &ev);
	if (rc != CL_SUCCESS) {
		log_debug("%s: clEnqueueNDRangeKernel(%zu, %zu) failed (%d)", name, global, local, rc);
		return rc == CL_OUT_OF_RESOURCES || rc == CL_INVALID_WORK_GROUP_SIZE ? -E2BIG : -EIO;
	}
	rc = e->f.clWaitForEvents(1, &ev);
	uint64_t t1 = clock_mono_ns();
	cl_ulong start = 0, end = 0;
	if (rc == CL_SUCCESS && e->profiling &&
	    e->f.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof(start), &start, NULL) == CL_SUCCESS &&
	    e->f.clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof(end), &end, NULL) == CL_SUCCESS &&
	    end > start)
		*seconds = (double)(end - start) / 1e9;
	else
		*seconds = (double)(t1 - t0) / 1e9;
	e->f.clReleaseEvent(ev);
	return rc == CL_SUCCESS ? 0 : -EIO;
}

int cl_buf_create(struct cl_env *e, size_t bytes, const void *host_data, cl_buf **out)
{
	cl_int rc;
	cl_mem m = e->f.clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | (host_data ? CL_MEM_COPY_HOST_PTR : 0), bytes,
				       (void *)host_data, &rc);
	*out = (cl_buf *)m;
	return m ? 0 : rc == CL_MEM_OBJECT_ALLOCATION_FAILURE || rc == CL_OUT_OF_HOST_MEMORY ? -ENOMEM : -EIO;
}

int cl_buf_create_host(struct cl_env *e, size_t bytes, void *host, cl_buf **out)
{
	cl_int rc;
	cl_mem m = e->f.clCreateBuffer(e->ctx, CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, bytes, host, &rc);
	*out = (cl_buf *)m;
	return m ? 0 : -ENOMEM;
}

int cl_buf_write(struct cl_env *e, cl_buf *b, const void *data, size_t bytes)
{
	return e->f.clEnqueueWriteBuffer(e->q, (cl_mem)b, CL_TRUE, 0, bytes, data, 0, NULL, NULL) == CL_SUCCESS ? 0 : -EIO;
}

int cl_buf_read(struct cl_env *e, cl_buf *b, void *data, size_t bytes)
{
	return e->f.clEnqueueReadBuffer(e->q, (cl_mem)b, CL_TRUE, 0, bytes, data, 0, NULL, NULL) == CL_SUCCESS ? 0 : -EIO;
}

void cl_buf_free(struct cl_env *e, cl_buf *b)
{
	if (e && b)
		e->f.clReleaseMemObject((cl_mem)b);
}

#endif
