/* The info queries whose answers the capture would change (issue #41): the
 * app sees what it would see without the library. A queue the layer made
 * profiling (pcl_clCreateCommandQueue*, forced_profiling) answers
 * CL_QUEUE_PROPERTIES and CL_QUEUE_PROPERTIES_ARRAY as the app created it,
 * and its events answer clGetEventProfilingInfo with
 * CL_PROFILING_INFO_NOT_AVAILABLE, as OpenCL 3.0 5.11 "Profiling Operations
 * on Memory Objects and Kernels" says for a queue without profiling. An
 * app's event the library still holds a reference on (until its reaper
 * has read the times) answers CL_EVENT_REFERENCE_COUNT without it. The
 * runtime is always asked first with the app's own arguments (into the
 * library's storage where the answer may change), so its errors for an
 * invalid handle or name are the app's as they would be. */
#include <sched.h>
#include <string.h>

#include "intercept.h"

#define MAX_PROPS 130 /* cl_queue_properties entries the library reads back */

/* CL_QUEUE_PROPERTIES_ARRAY of a forced queue, as the app gave it. */
static cl_int props_array(cl_command_queue q, const struct pcl_queue_info *qi, size_t size, void *value,
			  size_t *size_ret)
{
	cl_queue_properties p[MAX_PROPS];
	size_t got = 0;
	cl_int rc = pcl_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof(p), p, &got);
	if (rc != CL_SUCCESS) /* too long for us, or an error: the app's own call answers */
		return pcl_next.clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, size, value, size_ret);
	size_t n = got / sizeof(p[0]), out = 0;
	for (size_t i = 0; i + 1 < n; i += 2) {
		if (p[i] == CL_QUEUE_PROPERTIES && qi->props_added)
			continue; /* the pair the library appended */
		p[out] = p[i];
		p[out + 1] = p[i] == CL_QUEUE_PROPERTIES ? p[i + 1] & ~(cl_queue_properties)CL_QUEUE_PROFILING_ENABLE
							   : p[i + 1];
		out += 2;
	}
	if (n % 2) /* the terminating 0 */
		p[out++] = 0;
	if (out == 1 && qi->props_added == 2) /* the app passed no list: the runtime returns none for that */
		out = 0;
	size_t bytes = out * sizeof(p[0]);
	if (value && size < bytes)
		return CL_INVALID_VALUE;
	if (value && bytes)
		memcpy(value, p, bytes);
	if (size_ret)
		*size_ret = bytes;
	return CL_SUCCESS;
}

cl_int CL_API_CALL pcl_clGetCommandQueueInfo(cl_command_queue q, cl_command_queue_info name, size_t size, void *value,
					     size_t *size_ret)
{
	PCL_BEGIN(clGetCommandQueueInfo, pcl_next.clGetCommandQueueInfo(q, name, size, value, size_ret));
	struct pcl_queue_info qi;
	cl_int rc;
	if ((name != CL_QUEUE_PROPERTIES && name != CL_QUEUE_PROPERTIES_ARRAY) || !pcl_queue_lookup(q, &qi) ||
	    !qi.forced_profiling) {
		rc = pcl_next.clGetCommandQueueInfo(q, name, size, value, size_ret);
	} else if (name == CL_QUEUE_PROPERTIES) {
		rc = pcl_next.clGetCommandQueueInfo(q, name, size, value, size_ret);
		if (rc == CL_SUCCESS && value && size >= sizeof(cl_command_queue_properties))
			*(cl_command_queue_properties *)value &= ~(cl_command_queue_properties)CL_QUEUE_PROFILING_ENABLE;
	} else {
		rc = props_array(q, &qi, size, value, size_ret);
	}
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clGetEventProfilingInfo(cl_event e, cl_profiling_info name, size_t size, void *value,
					       size_t *size_ret)
{
	PCL_BEGIN(clGetEventProfilingInfo, pcl_next.clGetEventProfilingInfo(e, name, size, value, size_ret));
	if (!pcl_queues_forced()) { /* every queue profiles as its app asked: the runtime's answer as it is */
		cl_int rc = pcl_next.clGetEventProfilingInfo(e, name, size, value, size_ret);
		pcl_leave();
		return rc;
	}
	cl_ulong v = 0;
	size_t n = 0;
	/* The runtime first, into our storage: an answer means e is an event (the library may ask about it). */
	cl_int rc = pcl_next.clGetEventProfilingInfo(e, name, sizeof(v), &v, &n);
	struct pcl_queue_info qi;
	cl_command_queue q = rc == CL_SUCCESS ? pcl_rt_event_queue(e) : NULL;
	if (q && pcl_queue_lookup(q, &qi) && qi.forced_profiling)
		rc = CL_PROFILING_INFO_NOT_AVAILABLE; /* the app's queue has no profiling */
	else
		rc = pcl_next.clGetEventProfilingInfo(e, name, size, value, size_ret);
	pcl_leave();
	return rc;
}

#define REFS_TRIES 100 /* the reaper may release its reference while we ask: ask again */

cl_int CL_API_CALL pcl_clGetEventInfo(cl_event e, cl_event_info name, size_t size, void *value, size_t *size_ret)
{
	PCL_BEGIN(clGetEventInfo, pcl_next.clGetEventInfo(e, name, size, value, size_ret));
	cl_int rc;
	for (int i = 0;; i++) {
		uint8_t before = name == CL_EVENT_REFERENCE_COUNT ? pcl_event_layer(e) : PCL_EV_UNKNOWN;
		rc = pcl_next.clGetEventInfo(e, name, size, value, size_ret);
		if (before == PCL_EV_UNKNOWN || rc != CL_SUCCESS || !value || size < sizeof(cl_uint))
			break;
		uint8_t after = pcl_event_layer(e);
		if (after == before && after != PCL_EV_RELEASING) { /* the same all through the runtime's answer */
			if (after == PCL_EV_HELD && *(cl_uint *)value > 1)
				*(cl_uint *)value -= 1; /* the library's own reference */
			break;
		}
		if (i == REFS_TRIES)
			break;
		sched_yield();
	}
	pcl_leave();
	return rc;
}
