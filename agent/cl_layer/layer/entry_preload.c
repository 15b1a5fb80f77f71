/* Entry points of libprofcl_preload.so, the LD_PRELOAD shim for systems
 * where the app links the vendor library directly (Android, Mali blobs
 * without an ICD loader). The exported cl* functions interpose on the
 * library's; the real ones come from dlsym(RTLD_NEXT), or from
 * PROF_CL_LIBRARY / libOpenCL.so.1 when nothing is next. */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "pcl.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

#define NEXT_FUNCS(X)                                                                                      \
	X(clCreateCommandQueue)                                                                            \
	X(clCreateCommandQueueWithProperties)                                                              \
	X(clReleaseCommandQueue)                                                                           \
	X(clGetCommandQueueInfo)                                                                           \
	X(clCreateProgramWithSource)                                                                       \
	X(clCreateProgramWithBinary)                                                                       \
	X(clBuildProgram)                                                                                  \
	X(clCreateKernel)                                                                                  \
	X(clReleaseKernel)                                                                                 \
	X(clGetKernelInfo)                                                                                 \
	X(clGetKernelArgInfo)                                                                              \
	X(clSetKernelArg)                                                                                  \
	X(clCreateBuffer)                                                                                  \
	X(clReleaseMemObject)                                                                              \
	X(clGetMemObjectInfo)                                                                              \
	X(clEnqueueNDRangeKernel)                                                                          \
	X(clEnqueueReadBuffer)                                                                             \
	X(clEnqueueWriteBuffer)                                                                            \
	X(clEnqueueCopyBuffer)                                                                             \
	X(clEnqueueMapBuffer)                                                                              \
	X(clEnqueueUnmapMemObject)                                                                         \
	X(clFinish)                                                                                        \
	X(clWaitForEvents)                                                                                 \
	X(clReleaseEvent)                                                                                  \
	X(clRetainEvent)                                                                                   \
	X(clSetEventCallback)                                                                              \
	X(clGetEventProfilingInfo)

static void resolve(void)
{
	pcl_init();
	pcl_mode = PCL_MODE_PRELOAD;
	void *lib = NULL;
	const char *path = getenv("PROF_CL_LIBRARY");
	if (path && *path)
		lib = dlopen(path, RTLD_NOW | RTLD_GLOBAL);
#define LOOKUP(f)                                                                                          \
	*(void **)&pcl_next.f = lib ? dlsym(lib, #f) : dlsym(RTLD_NEXT, #f);                               \
	if (!pcl_next.f && !lib) {                                                                         \
		lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);                                    \
		if (lib)                                                                                   \
			*(void **)&pcl_next.f = dlsym(lib, #f);                                            \
	}
	NEXT_FUNCS(LOOKUP)
#undef LOOKUP
	pcl_log("preload shim initialised (%s)", lib ? "explicit library" : "RTLD_NEXT");
}

#define READY() pthread_once(&once, resolve)

PCL_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueue(cl_context c, cl_device_id d,
							     cl_command_queue_properties p, cl_int *e)
{
	READY();
	return pcl_clCreateCommandQueue(c, d, p, e);
}

PCL_EXPORT cl_command_queue CL_API_CALL clCreateCommandQueueWithProperties(cl_context c, cl_device_id d,
									   const cl_queue_properties *p, cl_int *e)
{
	READY();
	if (!pcl_next.clCreateCommandQueueWithProperties) {
		if (e)
			*e = CL_INVALID_OPERATION;
		return NULL;
	}
	return pcl_clCreateCommandQueueWithProperties(c, d, p, e);
}

#define WRAP(ret, name, params, args)                                                                      \
	PCL_EXPORT ret CL_API_CALL name params                                                             \
	{                                                                                                  \
		READY();                                                                                   \
		return pcl_##name args;                                                                    \
	}

WRAP(cl_int, clReleaseCommandQueue, (cl_command_queue q), (q))
WRAP(cl_program, clCreateProgramWithSource, (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e),
     (c, n, s, l, e))
WRAP(cl_program, clCreateProgramWithBinary,
     (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b, cl_int *st,
      cl_int *e),
     (c, n, d, l, b, st, e))
WRAP(cl_int, clBuildProgram,
     (cl_program p, cl_uint n, const cl_device_id *d, const char *o, void(CL_CALLBACK *cb)(cl_program, void *),
      void *u),
     (p, n, d, o, cb, u))
WRAP(cl_kernel, clCreateKernel, (cl_program p, const char *n, cl_int *e), (p, n, e))
WRAP(cl_int, clReleaseKernel, (cl_kernel k), (k))
WRAP(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
WRAP(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e), (c, f, s, h, e))
WRAP(cl_int, clReleaseMemObject, (cl_mem m), (m))
WRAP(cl_int, clEnqueueNDRangeKernel,
     (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g, const size_t *l, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, k, d, o, g, l, nw, w, ev))
WRAP(cl_int, clEnqueueReadBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t cb, void *p, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, m, b, o, cb, p, nw, w, ev))
WRAP(cl_int, clEnqueueWriteBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t cb, const void *p, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, m, b, o, cb, p, nw, w, ev))
WRAP(cl_int, clEnqueueCopyBuffer,
     (cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t doff, size_t cb, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, s, d, so, doff, cb, nw, w, ev))
WRAP(void *, clEnqueueMapBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t cb, cl_uint nw,
      const cl_event *w, cl_event *ev, cl_int *e),
     (q, m, b, f, o, cb, nw, w, ev, e))
WRAP(cl_int, clEnqueueUnmapMemObject,
     (cl_command_queue q, cl_mem m, void *p, cl_uint nw, const cl_event *w, cl_event *ev), (q, m, p, nw, w, ev))
WRAP(cl_int, clFinish, (cl_command_queue q), (q))
WRAP(cl_int, clWaitForEvents, (cl_uint n, const cl_event *l), (n, l))
WRAP(cl_int, clReleaseEvent, (cl_event e), (e))
