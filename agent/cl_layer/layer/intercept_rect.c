/* The rectangular buffer transfers (issue #41): read, write and copy of a
 * 3-D region of a buffer, tracked like the plain ones (intercept_enqueue.c).
 * Bytes: region[0] (bytes) x region[1] x region[2], read after the runtime
 * accepted the call. */
#include "intercept.h"

static void rect_bytes(struct enq *e, cl_int rc, const size_t *region)
{
	if (e->p && rc == CL_SUCCESS && region)
		e->p->cmd.bytes = (uint64_t)region[0] * region[1] * region[2];
}

cl_int CL_API_CALL pcl_clEnqueueReadBufferRect(cl_command_queue q, cl_mem m, cl_bool block, const size_t *bo,
					       const size_t *ho, const size_t *region, size_t brp, size_t bsp,
					       size_t hrp, size_t hsp, void *ptr, cl_uint nwait, const cl_event *wait,
					       cl_event *ev)
{
	PCL_BEGIN(clEnqueueReadBufferRect, pcl_next.clEnqueueReadBufferRect(q, m, block, bo, ho, region, brp, bsp, hrp,
									    hsp, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_READ_BUFFER_RECT, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, m, NULL);
	cl_int rc = pcl_next.clEnqueueReadBufferRect(q, m, block, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait, wait,
						     e.evp);
	rect_bytes(&e, rc, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueWriteBufferRect(cl_command_queue q, cl_mem m, cl_bool block, const size_t *bo,
						const size_t *ho, const size_t *region, size_t brp, size_t bsp,
						size_t hrp, size_t hsp, const void *ptr, cl_uint nwait,
						const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueWriteBufferRect, pcl_next.clEnqueueWriteBufferRect(q, m, block, bo, ho, region, brp, bsp,
									      hrp, hsp, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_WRITE_BUFFER_RECT, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, NULL, m);
	cl_int rc = pcl_next.clEnqueueWriteBufferRect(q, m, block, bo, ho, region, brp, bsp, hrp, hsp, ptr, nwait,
						      wait, e.evp);
	rect_bytes(&e, rc, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyBufferRect(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
					       const size_t *dor, const size_t *region, size_t srp, size_t ssp,
					       size_t drp, size_t dsp, cl_uint nwait, const cl_event *wait,
					       cl_event *ev)
{
	PCL_BEGIN(clEnqueueCopyBufferRect, pcl_next.clEnqueueCopyBufferRect(q, src, dst, so, dor, region, srp, ssp,
									    drp, dsp, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_COPY_BUFFER_RECT, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyBufferRect(q, src, dst, so, dor, region, srp, ssp, drp, dsp, nwait, wait,
						     e.evp);
	rect_bytes(&e, rc, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}
