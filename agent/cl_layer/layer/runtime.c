/* Every call the capture library makes into the OpenCL runtime on its own
 * account (not forwarding one of the app's): the audit list of the rule in
 * pcl.h. Callers pass only handles the library knows to be of that kind:
 *   - kernels: created through the library (clCreateKernel, clCreateKernels-
 *     InProgram, clCloneKernel) or just accepted by the runtime in the app's
 *     own clSetKernelArg / clEnqueueNDRangeKernel (which returned CL_SUCCESS);
 *   - queues: just accepted by the runtime in the app's enqueue;
 *   - events: returned by the runtime from an enqueue the library forwarded,
 *     and held with the library's own reference until it is done with them.
 * Application values that are not such handles (kernel argument bytes, SVM
 * pointers, wait-list events, user events, callbacks and their data, image
 * descriptions, host pointers) are only ever forwarded, never passed here.
 * Each call is marked in the thread's state slot (state.c) as the library's
 * own, so a crash inside one is attributed to the profiler. */
#include <stdlib.h>
#include <string.h>

#include "pcl.h"

bool pcl_rt_kernel_name(cl_kernel k, char *name, size_t cap)
{
	if (!pcl_next.clGetKernelInfo || cap == 0)
		return false;
	size_t need = 0;
	pcl_own_begin(PCL_FN_clGetKernelInfo);
	cl_int rc = pcl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, 0, NULL, &need);
	if (rc == CL_SUCCESS && need <= cap)
		rc = pcl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, cap, name, NULL);
	else if (rc == CL_SUCCESS) {
		char *full = need < (1u << 16) ? malloc(need) : NULL; /* a longer name is cut, not refused */
		rc = full ? pcl_next.clGetKernelInfo(k, CL_KERNEL_FUNCTION_NAME, need, full, NULL) : CL_OUT_OF_HOST_MEMORY;
		if (rc == CL_SUCCESS)
			memcpy(name, full, cap);
		free(full);
	}
	pcl_own_end();
	name[cap - 1] = 0;
	return rc == CL_SUCCESS;
}

bool pcl_rt_arg_qualifiers(cl_kernel k, cl_uint idx, cl_kernel_arg_address_qualifier *addr,
			   cl_kernel_arg_type_qualifier *type)
{
	if (!pcl_next.clGetKernelArgInfo)
		return false;
	*addr = 0;
	*type = 0;
	/* Answers only when the program was built with -cl-kernel-arg-info, or when the runtime keeps the
	 * information anyway (PoCL does); CL_KERNEL_ARG_INFO_NOT_AVAILABLE otherwise. */
	pcl_own_begin(PCL_FN_clGetKernelArgInfo);
	cl_int rc = pcl_next.clGetKernelArgInfo(k, idx, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof(*addr), addr, NULL);
	if (rc == CL_SUCCESS &&
	    pcl_next.clGetKernelArgInfo(k, idx, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof(*type), type, NULL) != CL_SUCCESS)
		*type = 0;
	pcl_own_end();
	return rc == CL_SUCCESS;
}

cl_command_queue_properties pcl_rt_queue_properties(cl_command_queue q)
{
	cl_command_queue_properties props = 0;
	if (!pcl_next.clGetCommandQueueInfo)
		return 0;
	pcl_own_begin(PCL_FN_clGetCommandQueueInfo);
	if (pcl_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof(props), &props, NULL) != CL_SUCCESS)
		props = 0;
	pcl_own_end();
	return props;
}

cl_int pcl_rt_retain_event(cl_event e)
{
	pcl_own_begin(PCL_FN_clRetainEvent);
	cl_int rc = pcl_next.clRetainEvent(e);
	pcl_own_end();
	return rc;
}

cl_int pcl_rt_event_status(cl_event e)
{
	cl_int st = CL_COMPLETE;
	pcl_own_begin(PCL_FN_clGetEventInfo);
	if (pcl_next.clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(st), &st, NULL) != CL_SUCCESS)
		st = CL_COMPLETE; /* the runtime cannot say: take it as done (its times tell the rest) */
	pcl_own_end();
	return st;
}

void pcl_rt_profiling(cl_event e, uint64_t t[4])
{
	static const cl_profiling_info what[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
						  CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
	pcl_own_begin(PCL_FN_clGetEventProfilingInfo);
	for (int i = 0; i < 4; i++) {
		cl_ulong v = 0;
		t[i] = pcl_next.clGetEventProfilingInfo(e, what[i], sizeof(v), &v, NULL) == CL_SUCCESS ? v : 0;
	}
	pcl_own_end();
}

uint64_t pcl_rt_image_element_size(cl_mem img)
{
	size_t sz = 0;
	if (!pcl_next.clGetImageInfo)
		return 0;
	pcl_own_begin(PCL_FN_clGetImageInfo);
	if (pcl_next.clGetImageInfo(img, CL_IMAGE_ELEMENT_SIZE, sizeof(sz), &sz, NULL) != CL_SUCCESS)
		sz = 0;
	pcl_own_end();
	return sz;
}

cl_command_queue pcl_rt_event_queue(cl_event e)
{
	cl_command_queue q = NULL;
	pcl_own_begin(PCL_FN_clGetEventInfo);
	if (pcl_next.clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof(q), &q, NULL) != CL_SUCCESS)
		q = NULL;
	pcl_own_end();
	return q;
}

void pcl_rt_release_event(cl_event e)
{
	pcl_own_begin(PCL_FN_clReleaseEvent);
	pcl_next.clReleaseEvent(e);
	pcl_own_end();
}
