/* Where the capture library is, per thread of the profiled processes: a small
 * file the agent creates (PROF_CL_STATE) and the library maps shared. Each
 * thread that enters the library claims a slot and keeps in it how deep it
 * is inside, in which intercepted function, and whether the library is at
 * that moment making a call of its own into the runtime (a query, a retain,
 * a callback registration) rather than forwarding the app's call. When the
 * program dies by a signal, the agent reads the slots of the dead pid: the
 * threads that were inside the library then. It cannot tell which thread
 * crashed, so it says which threads were inside and doing what, nothing
 * more. Shared by the library and the agent (cl_launch.c); no allocation. */
#ifndef AGENT_CL_LAYER_CL_STATE_H
#define AGENT_CL_LAYER_CL_STATE_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#define PCL_STATE_MAGIC 0x50434c53u /* "PCLS" */
#define PCL_STATE_SLOTS 1024u

/* The intercepted functions (one name each, used for the slots' fn field). */
#define PCL_FNS(X)                                                                                         \
	X(clCreateCommandQueue)                                                                            \
	X(clCreateCommandQueueWithProperties)                                                              \
	X(clRetainCommandQueue)                                                                            \
	X(clReleaseCommandQueue)                                                                           \
	X(clCreateProgramWithSource)                                                                       \
	X(clCreateProgramWithBinary)                                                                       \
	X(clCreateProgramWithIL)                                                                           \
	X(clCreateProgramWithBuiltInKernels)                                                               \
	X(clBuildProgram)                                                                                  \
	X(clCompileProgram)                                                                                \
	X(clLinkProgram)                                                                                   \
	X(clRetainProgram)                                                                                 \
	X(clReleaseProgram)                                                                                \
	X(clCreateKernel)                                                                                  \
	X(clCreateKernelsInProgram)                                                                        \
	X(clCloneKernel)                                                                                   \
	X(clRetainKernel)                                                                                  \
	X(clReleaseKernel)                                                                                 \
	X(clSetKernelArg)                                                                                  \
	X(clSetKernelArgSVMPointer)                                                                        \
	X(clCreateBuffer)                                                                                  \
	X(clCreateBufferWithProperties)                                                                    \
	X(clCreateSubBuffer)                                                                               \
	X(clCreateImage)                                                                                   \
	X(clCreateImageWithProperties)                                                                     \
	X(clCreateImage2D)                                                                                 \
	X(clCreateImage3D)                                                                                 \
	X(clCreatePipe)                                                                                    \
	X(clRetainMemObject)                                                                               \
	X(clReleaseMemObject)                                                                              \
	X(clCreateSampler)                                                                                 \
	X(clCreateSamplerWithProperties)                                                                   \
	X(clRetainSampler)                                                                                 \
	X(clReleaseSampler)                                                                                \
	X(clSVMAlloc)                                                                                      \
	X(clSVMFree)                                                                                       \
	X(clEnqueueNDRangeKernel)                                                                          \
	X(clEnqueueTask)                                                                                   \
	X(clEnqueueReadBuffer)                                                                             \
	X(clEnqueueWriteBuffer)                                                                            \
	X(clEnqueueCopyBuffer)                                                                             \
	X(clEnqueueFillBuffer)                                                                             \
	X(clEnqueueMapBuffer)                                                                              \
	X(clEnqueueUnmapMemObject)                                                                         \
	X(clEnqueueSVMFree)                                                                                \
	X(clFinish)                                                                                        \
	X(clWaitForEvents)                                                                                 \
	X(clRetainEvent)                                                                                   \
	X(clReleaseEvent)                                                                                  \
	X(clGetCommandQueueInfo)                                                                           \
	X(clGetEventInfo)                                                                                  \
	X(clGetEventProfilingInfo)                                                                         \
	X(clEnqueueReadImage)                                                                              \
	X(clEnqueueWriteImage)                                                                             \
	X(clEnqueueCopyImage)                                                                              \
	X(clEnqueueCopyImageToBuffer)                                                                      \
	X(clEnqueueCopyBufferToImage)                                                                      \
	X(clEnqueueFillImage)                                                                              \
	X(clEnqueueMapImage)                                                                               \
	X(clEnqueueReadBufferRect)                                                                         \
	X(clEnqueueWriteBufferRect)                                                                        \
	X(clEnqueueCopyBufferRect)                                                                         \
	X(clEnqueueNativeKernel)                                                                           \
	X(clEnqueueMarkerWithWaitList)                                                                     \
	X(clEnqueueBarrierWithWaitList)                                                                    \
	X(clEnqueueMarker)                                                                                 \
	X(clEnqueueMigrateMemObjects)                                                                      \
	X(clEnqueueSVMMemcpy)                                                                              \
	X(clEnqueueSVMMemFill)                                                                             \
	X(clEnqueueSVMMap)                                                                                 \
	X(clEnqueueSVMUnmap)                                                                               \
	X(clEnqueueSVMMigrateMem)

enum pcl_fn {
	PCL_FN_NONE = 0,
#define PCL_FN_ENUM(f) PCL_FN_##f,
	PCL_FNS(PCL_FN_ENUM)
#undef PCL_FN_ENUM
	PCL_FN_REAPER, /* the library's own thread: finds completed commands, reads their times, sends them */
	/* runtime functions only the library itself calls (own_fn) */
	PCL_FN_clGetKernelInfo,
	PCL_FN_clGetKernelArgInfo,
	PCL_FN_clGetImageInfo,
	PCL_FN__N,
};

struct pcl_state_slot {
	_Atomic int32_t pid, tid; /* 0: free */
	_Atomic uint32_t depth;	  /* > 0: inside the library */
	_Atomic uint32_t fn;	  /* enum pcl_fn of the outermost call */
	_Atomic uint32_t own;	  /* > 0: in a call of the library's own into the runtime */
	_Atomic uint32_t own_fn;  /* which runtime function that is (enum pcl_fn, or PCL_FN_NONE: another) */
	uint32_t pad[2];
};

struct pcl_state_file {
	uint32_t magic, nslots;
	_Atomic uint32_t untracked; /* threads that found no free slot */
	uint32_t pad;
	struct pcl_state_slot slot[PCL_STATE_SLOTS];
};

/* "clSetKernelArg", "the reaper thread", ... ("?" out of range). */
const char *pcl_fn_name(uint32_t fn);

#endif
