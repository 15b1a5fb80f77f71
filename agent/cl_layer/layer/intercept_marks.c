/* Commands that move no data of their own (issue #41): native kernels,
 * markers and barriers (OpenCL 1.2's with wait lists, 1.1's clEnqueueMarker)
 * and migrations of memory objects, tracked like every enqueue
 * (intercept_enqueue.c) so that their time on the queue and their place in
 * the DAG show. A migration's bytes are the sizes of the buffers the library
 * knows; the 1.1 clEnqueueBarrier and clEnqueueWaitForEvents return no
 * event and are not timed. */
#include "intercept.h"

cl_int CL_API_CALL pcl_clEnqueueNativeKernel(cl_command_queue q, void(CL_CALLBACK *fn)(void *), void *args,
					     size_t cb, cl_uint nmem, const cl_mem *mems, const void **locs,
					     cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueNativeKernel,
		  pcl_next.clEnqueueNativeKernel(q, fn, args, cb, nmem, mems, locs, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_NATIVE_KERNEL, nwait, wait, ev);
	for (cl_uint i = 0; mems && i < nmem; i++) /* table look-ups only: it may read and write each */
		pcl_enq_transfer(&e, 0, mems[i], mems[i]);
	cl_int rc = pcl_next.clEnqueueNativeKernel(q, fn, args, cb, nmem, mems, locs, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueMarkerWithWaitList(cl_command_queue q, cl_uint nwait, const cl_event *wait,
						   cl_event *ev)
{
	PCL_BEGIN(clEnqueueMarkerWithWaitList, pcl_next.clEnqueueMarkerWithWaitList(q, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_MARKER, nwait, wait, ev);
	cl_int rc = pcl_next.clEnqueueMarkerWithWaitList(q, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueBarrierWithWaitList(cl_command_queue q, cl_uint nwait, const cl_event *wait,
						    cl_event *ev)
{
	PCL_BEGIN(clEnqueueBarrierWithWaitList, pcl_next.clEnqueueBarrierWithWaitList(q, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_BARRIER, nwait, wait, ev);
	cl_int rc = pcl_next.clEnqueueBarrierWithWaitList(q, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueMarker(cl_command_queue q, cl_event *ev)
{
	PCL_BEGIN(clEnqueueMarker, pcl_next.clEnqueueMarker(q, ev));
	if (!ev) { /* an error for the runtime to return */
		pcl_leave();
		return pcl_next.clEnqueueMarker(q, ev);
	}
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_MARKER, 0, NULL, ev);
	cl_int rc = pcl_next.clEnqueueMarker(q, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueMigrateMemObjects(cl_command_queue q, cl_uint n, const cl_mem *mems,
						  cl_mem_migration_flags flags, cl_uint nwait, const cl_event *wait,
						  cl_event *ev)
{
	PCL_BEGIN(clEnqueueMigrateMemObjects, pcl_next.clEnqueueMigrateMemObjects(q, n, mems, flags, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_MIGRATE_MEM_OBJECTS, nwait, wait, ev);
	uint64_t bytes = 0;
	for (cl_uint i = 0; mems && i < n; i++) {
		struct pcl_mem_info mi;
		if (pcl_mem_lookup(mems[i], &mi))
			bytes += mi.size;
		pcl_enq_transfer(&e, 0, NULL, mems[i]); /* where its contents live changes: a write */
	}
	if (e.p && !(flags & CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED))
		e.p->cmd.bytes = bytes;
	cl_int rc = pcl_next.clEnqueueMigrateMemObjects(q, n, mems, flags, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}
