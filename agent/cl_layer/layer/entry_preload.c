/* Entry points of libprofcl_preload.so, the LD_PRELOAD shim for systems
 * where the app links the vendor library directly (Android, Mali blobs
 * without an ICD loader). The exported cl* functions interpose on the
 * library's; the real ones come from PROF_CL_LIBRARY, from the libOpenCL the
 * program dlopen'ed (dlopen.c), from dlsym(RTLD_NEXT), or from libOpenCL.so.1
 * when nothing is next. A function the library lacks answers
 * CL_INVALID_OPERATION (intercept.h). */
#include <dlfcn.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "dlopen.h"
#include "pcl.h"

static pthread_once_t once = PTHREAD_ONCE_INIT;

/* Besides the intercepted functions, the ones the library calls on its own (runtime.c). */
#define OWN_FUNCS(X)                                                                                         \
	X(clGetKernelInfo)                                                                                   \
	X(clGetKernelArgInfo)                                                                                \
	X(clGetCommandQueueInfo)                                                                             \
	X(clGetEventInfo)                                                                                    \
	X(clGetEventProfilingInfo)                                                                           \
	X(clGetImageInfo)

static void resolve(void)
{
	pcl_init();
	pcl_mode = PCL_MODE_PRELOAD;
	void *lib = NULL;
	const char *how = "RTLD_NEXT";
	const char *path = getenv("PROF_CL_LIBRARY");
	if (path && *path) {
		lib = pcl_real_dlopen(path, RTLD_NOW | RTLD_GLOBAL);
		how = "PROF_CL_LIBRARY";
	}
	if (!lib && (lib = pcl_dlopened_library()) != NULL)
		how = "the library the program dlopen'ed";
#define LOOKUP(f)                                                                                            \
	*(void **)&pcl_next.f = lib ? dlsym(lib, #f) : dlsym(RTLD_NEXT, #f);                                 \
	if (!pcl_next.f && !lib) {                                                                           \
		lib = pcl_real_dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_GLOBAL);                             \
		how = "libOpenCL.so.1";                                                                      \
		if (lib)                                                                                     \
			*(void **)&pcl_next.f = dlsym(lib, #f);                                              \
	}
	PCL_FNS(LOOKUP)
	OWN_FUNCS(LOOKUP)
#undef LOOKUP
	pcl_log("preload shim initialised (%s)", how);
	pcl_send_note(PCL_NOTE_SHIM_ACTIVE, how);
}

void pcl_preload_ready(void)
{
	pthread_once(&once, resolve);
}

#define WRAP(ret, name, params, args)                                                                        \
	PCL_EXPORT ret CL_API_CALL name params                                                               \
	{                                                                                                    \
		pcl_preload_ready();                                                                         \
		return pcl_##name args;                                                                      \
	}

WRAP(cl_command_queue, clCreateCommandQueue,
     (cl_context c, cl_device_id d, cl_command_queue_properties p, cl_int *e), (c, d, p, e))
WRAP(cl_command_queue, clCreateCommandQueueWithProperties,
     (cl_context c, cl_device_id d, const cl_queue_properties *p, cl_int *e), (c, d, p, e))
WRAP(cl_int, clRetainCommandQueue, (cl_command_queue q), (q))
WRAP(cl_int, clReleaseCommandQueue, (cl_command_queue q), (q))
WRAP(cl_program, clCreateProgramWithSource,
     (cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e), (c, n, s, l, e))
WRAP(cl_program, clCreateProgramWithBinary,
     (cl_context c, cl_uint n, const cl_device_id *d, const size_t *l, const unsigned char **b, cl_int *st,
      cl_int *e),
     (c, n, d, l, b, st, e))
WRAP(cl_program, clCreateProgramWithIL, (cl_context c, const void *il, size_t l, cl_int *e), (c, il, l, e))
WRAP(cl_program, clCreateProgramWithBuiltInKernels,
     (cl_context c, cl_uint n, const cl_device_id *d, const char *k, cl_int *e), (c, n, d, k, e))
WRAP(cl_int, clBuildProgram,
     (cl_program p, cl_uint n, const cl_device_id *d, const char *o,
      void(CL_CALLBACK *cb)(cl_program, void *), void *u),
     (p, n, d, o, cb, u))
WRAP(cl_int, clCompileProgram,
     (cl_program p, cl_uint n, const cl_device_id *d, const char *o, cl_uint nh, const cl_program *h,
      const char **hn, void(CL_CALLBACK *cb)(cl_program, void *), void *u),
     (p, n, d, o, nh, h, hn, cb, u))
WRAP(cl_program, clLinkProgram,
     (cl_context c, cl_uint n, const cl_device_id *d, const char *o, cl_uint ni, const cl_program *in,
      void(CL_CALLBACK *cb)(cl_program, void *), void *u, cl_int *e),
     (c, n, d, o, ni, in, cb, u, e))
WRAP(cl_int, clRetainProgram, (cl_program p), (p))
WRAP(cl_int, clReleaseProgram, (cl_program p), (p))
WRAP(cl_kernel, clCreateKernel, (cl_program p, const char *n, cl_int *e), (p, n, e))
WRAP(cl_int, clCreateKernelsInProgram, (cl_program p, cl_uint n, cl_kernel *k, cl_uint *nr), (p, n, k, nr))
WRAP(cl_kernel, clCloneKernel, (cl_kernel k, cl_int *e), (k, e))
WRAP(cl_int, clRetainKernel, (cl_kernel k), (k))
WRAP(cl_int, clReleaseKernel, (cl_kernel k), (k))
WRAP(cl_int, clSetKernelArg, (cl_kernel k, cl_uint i, size_t s, const void *v), (k, i, s, v))
WRAP(cl_int, clSetKernelArgSVMPointer, (cl_kernel k, cl_uint i, const void *v), (k, i, v))
WRAP(cl_mem, clCreateBuffer, (cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e), (c, f, s, h, e))
WRAP(cl_mem, clCreateBufferWithProperties,
     (cl_context c, const cl_mem_properties *p, cl_mem_flags f, size_t s, void *h, cl_int *e),
     (c, p, f, s, h, e))
WRAP(cl_mem, clCreateSubBuffer, (cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void *i, cl_int *e),
     (b, f, t, i, e))
WRAP(cl_mem, clCreateImage,
     (cl_context c, cl_mem_flags f, const cl_image_format *fm, const cl_image_desc *d, void *h, cl_int *e),
     (c, f, fm, d, h, e))
WRAP(cl_mem, clCreateImageWithProperties,
     (cl_context c, const cl_mem_properties *p, cl_mem_flags f, const cl_image_format *fm,
      const cl_image_desc *d, void *h, cl_int *e),
     (c, p, f, fm, d, h, e))
WRAP(cl_mem, clCreateImage2D,
     (cl_context c, cl_mem_flags f, const cl_image_format *fm, size_t w, size_t ht, size_t rp, void *h,
      cl_int *e),
     (c, f, fm, w, ht, rp, h, e))
WRAP(cl_mem, clCreateImage3D,
     (cl_context c, cl_mem_flags f, const cl_image_format *fm, size_t w, size_t ht, size_t dp, size_t rp,
      size_t sp, void *h, cl_int *e),
     (c, f, fm, w, ht, dp, rp, sp, h, e))
WRAP(cl_mem, clCreatePipe,
     (cl_context c, cl_mem_flags f, cl_uint ps, cl_uint mp, const cl_pipe_properties *p, cl_int *e),
     (c, f, ps, mp, p, e))
WRAP(cl_int, clRetainMemObject, (cl_mem m), (m))
WRAP(cl_int, clReleaseMemObject, (cl_mem m), (m))
WRAP(cl_sampler, clCreateSampler,
     (cl_context c, cl_bool n, cl_addressing_mode a, cl_filter_mode f, cl_int *e), (c, n, a, f, e))
WRAP(cl_sampler, clCreateSamplerWithProperties, (cl_context c, const cl_sampler_properties *p, cl_int *e),
     (c, p, e))
WRAP(cl_int, clRetainSampler, (cl_sampler s), (s))
WRAP(cl_int, clReleaseSampler, (cl_sampler s), (s))
WRAP(void *, clSVMAlloc, (cl_context c, cl_svm_mem_flags f, size_t s, cl_uint a), (c, f, s, a))
WRAP(cl_int, clEnqueueNDRangeKernel,
     (cl_command_queue q, cl_kernel k, cl_uint d, const size_t *o, const size_t *g, const size_t *l,
      cl_uint nw, const cl_event *w, cl_event *ev),
     (q, k, d, o, g, l, nw, w, ev))
WRAP(cl_int, clEnqueueTask, (cl_command_queue q, cl_kernel k, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, k, nw, w, ev))
WRAP(cl_int, clEnqueueReadBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t cb, void *p, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, m, b, o, cb, p, nw, w, ev))
WRAP(cl_int, clEnqueueWriteBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, size_t o, size_t cb, const void *p, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, m, b, o, cb, p, nw, w, ev))
WRAP(cl_int, clEnqueueCopyBuffer,
     (cl_command_queue q, cl_mem s, cl_mem d, size_t so, size_t dof, size_t cb, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, s, d, so, dof, cb, nw, w, ev))
WRAP(cl_int, clEnqueueFillBuffer,
     (cl_command_queue q, cl_mem m, const void *p, size_t ps, size_t o, size_t cb, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, m, p, ps, o, cb, nw, w, ev))
WRAP(void *, clEnqueueMapBuffer,
     (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, size_t o, size_t cb, cl_uint nw,
      const cl_event *w, cl_event *ev, cl_int *e),
     (q, m, b, f, o, cb, nw, w, ev, e))
WRAP(cl_int, clEnqueueUnmapMemObject,
     (cl_command_queue q, cl_mem m, void *p, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, m, p, nw, w, ev))
WRAP(cl_int, clEnqueueSVMFree,
     (cl_command_queue q, cl_uint n, void *p[],
      void(CL_CALLBACK *cb)(cl_command_queue, cl_uint, void *[], void *), void *u, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, n, p, cb, u, nw, w, ev))
WRAP(cl_int, clFinish, (cl_command_queue q), (q))
WRAP(cl_int, clWaitForEvents, (cl_uint n, const cl_event *l), (n, l))
WRAP(cl_int, clRetainEvent, (cl_event e), (e))
WRAP(cl_int, clReleaseEvent, (cl_event e), (e))
WRAP(cl_int, clGetCommandQueueInfo, (cl_command_queue q, cl_command_queue_info n, size_t s, void *v, size_t *r),
     (q, n, s, v, r))
WRAP(cl_int, clEnqueueReadImage,
     (cl_command_queue q, cl_mem m, cl_bool b, const size_t *o, const size_t *r, size_t rp, size_t sp, void *p,
      cl_uint nw, const cl_event *w, cl_event *ev),
     (q, m, b, o, r, rp, sp, p, nw, w, ev))
WRAP(cl_int, clEnqueueWriteImage,
     (cl_command_queue q, cl_mem m, cl_bool b, const size_t *o, const size_t *r, size_t rp, size_t sp,
      const void *p, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, m, b, o, r, rp, sp, p, nw, w, ev))
WRAP(cl_int, clEnqueueCopyImage,
     (cl_command_queue q, cl_mem s, cl_mem d, const size_t *so, const size_t *dof, const size_t *r, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, s, d, so, dof, r, nw, w, ev))
WRAP(cl_int, clEnqueueCopyImageToBuffer,
     (cl_command_queue q, cl_mem s, cl_mem d, const size_t *so, const size_t *r, size_t dof, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, s, d, so, r, dof, nw, w, ev))
WRAP(cl_int, clEnqueueCopyBufferToImage,
     (cl_command_queue q, cl_mem s, cl_mem d, size_t so, const size_t *dof, const size_t *r, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, s, d, so, dof, r, nw, w, ev))
WRAP(cl_int, clEnqueueFillImage,
     (cl_command_queue q, cl_mem m, const void *c, const size_t *o, const size_t *r, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, m, c, o, r, nw, w, ev))
WRAP(void *, clEnqueueMapImage,
     (cl_command_queue q, cl_mem m, cl_bool b, cl_map_flags f, const size_t *o, const size_t *r, size_t *rp,
      size_t *sp, cl_uint nw, const cl_event *w, cl_event *ev, cl_int *e),
     (q, m, b, f, o, r, rp, sp, nw, w, ev, e))
WRAP(cl_int, clEnqueueReadBufferRect,
     (cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo, const size_t *ho, const size_t *r, size_t brp,
      size_t bsp, size_t hrp, size_t hsp, void *p, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, m, b, bo, ho, r, brp, bsp, hrp, hsp, p, nw, w, ev))
WRAP(cl_int, clEnqueueWriteBufferRect,
     (cl_command_queue q, cl_mem m, cl_bool b, const size_t *bo, const size_t *ho, const size_t *r, size_t brp,
      size_t bsp, size_t hrp, size_t hsp, const void *p, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, m, b, bo, ho, r, brp, bsp, hrp, hsp, p, nw, w, ev))
WRAP(cl_int, clEnqueueCopyBufferRect,
     (cl_command_queue q, cl_mem s, cl_mem d, const size_t *so, const size_t *dof, const size_t *r, size_t srp,
      size_t ssp, size_t drp, size_t dsp, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, s, d, so, dof, r, srp, ssp, drp, dsp, nw, w, ev))
WRAP(cl_int, clEnqueueNativeKernel,
     (cl_command_queue q, void(CL_CALLBACK *fn)(void *), void *a, size_t cb, cl_uint nm, const cl_mem *ml,
      const void **loc, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, fn, a, cb, nm, ml, loc, nw, w, ev))
WRAP(cl_int, clEnqueueMarkerWithWaitList, (cl_command_queue q, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, nw, w, ev))
WRAP(cl_int, clEnqueueBarrierWithWaitList, (cl_command_queue q, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, nw, w, ev))
WRAP(cl_int, clEnqueueMarker, (cl_command_queue q, cl_event *ev), (q, ev))
WRAP(cl_int, clEnqueueMigrateMemObjects,
     (cl_command_queue q, cl_uint n, const cl_mem *m, cl_mem_migration_flags f, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, n, m, f, nw, w, ev))
WRAP(cl_int, clEnqueueSVMMemcpy,
     (cl_command_queue q, cl_bool b, void *d, const void *s, size_t n, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, b, d, s, n, nw, w, ev))
WRAP(cl_int, clEnqueueSVMMemFill,
     (cl_command_queue q, void *p, const void *pat, size_t ps, size_t n, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, p, pat, ps, n, nw, w, ev))
WRAP(cl_int, clEnqueueSVMMap,
     (cl_command_queue q, cl_bool b, cl_map_flags f, void *p, size_t n, cl_uint nw, const cl_event *w,
      cl_event *ev),
     (q, b, f, p, n, nw, w, ev))
WRAP(cl_int, clEnqueueSVMUnmap, (cl_command_queue q, void *p, cl_uint nw, const cl_event *w, cl_event *ev),
     (q, p, nw, w, ev))
WRAP(cl_int, clEnqueueSVMMigrateMem,
     (cl_command_queue q, cl_uint n, const void **p, const size_t *s, cl_mem_migration_flags f, cl_uint nw,
      const cl_event *w, cl_event *ev),
     (q, n, p, s, f, nw, w, ev))
WRAP(cl_int, clGetEventInfo, (cl_event e, cl_event_info n, size_t s, void *v, size_t *r), (e, n, s, v, r))
WRAP(cl_int, clGetEventProfilingInfo, (cl_event e, cl_profiling_info n, size_t s, void *v, size_t *r),
     (e, n, s, v, r))

PCL_EXPORT void CL_API_CALL clSVMFree(cl_context c, void *p)
{
	pcl_preload_ready();
	pcl_clSVMFree(c, p);
}
