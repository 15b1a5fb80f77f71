/* The image enqueues (issue #41): reads, writes, copies (image to image, to
 * and from buffers), fills and maps, each a tracked command like the buffer
 * transfers of intercept_enqueue.c. Bytes: the region's pixels times the
 * image's element size, which the library asks the runtime for only after
 * the runtime accepted the image in the app's own call (runtime.c). */
#include "intercept.h"

/* region[0] x region[1] x region[2] pixels of image img (the call succeeded: both are valid). */
static void image_bytes(struct enq *e, cl_int rc, cl_mem img, const size_t *region)
{
	if (!e->p || rc != CL_SUCCESS || !region)
		return;
	e->p->cmd.bytes = (uint64_t)region[0] * region[1] * region[2] * pcl_rt_image_element_size(img);
}

cl_int CL_API_CALL pcl_clEnqueueReadImage(cl_command_queue q, cl_mem img, cl_bool block, const size_t *origin,
					  const size_t *region, size_t rp, size_t sp, void *ptr, cl_uint nwait,
					  const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueReadImage,
		  pcl_next.clEnqueueReadImage(q, img, block, origin, region, rp, sp, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_READ_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, img, NULL);
	cl_int rc = pcl_next.clEnqueueReadImage(q, img, block, origin, region, rp, sp, ptr, nwait, wait, e.evp);
	image_bytes(&e, rc, img, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueWriteImage(cl_command_queue q, cl_mem img, cl_bool block, const size_t *origin,
					   const size_t *region, size_t rp, size_t sp, const void *ptr, cl_uint nwait,
					   const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueWriteImage,
		  pcl_next.clEnqueueWriteImage(q, img, block, origin, region, rp, sp, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_WRITE_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, NULL, img);
	cl_int rc = pcl_next.clEnqueueWriteImage(q, img, block, origin, region, rp, sp, ptr, nwait, wait, e.evp);
	image_bytes(&e, rc, img, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyImage(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
					  const size_t *dor, const size_t *region, cl_uint nwait, const cl_event *wait,
					  cl_event *ev)
{
	PCL_BEGIN(clEnqueueCopyImage, pcl_next.clEnqueueCopyImage(q, src, dst, so, dor, region, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_COPY_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyImage(q, src, dst, so, dor, region, nwait, wait, e.evp);
	image_bytes(&e, rc, src, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyImageToBuffer(cl_command_queue q, cl_mem src, cl_mem dst, const size_t *so,
						  const size_t *region, size_t doff, cl_uint nwait,
						  const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueCopyImageToBuffer,
		  pcl_next.clEnqueueCopyImageToBuffer(q, src, dst, so, region, doff, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_COPY_IMAGE_TO_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyImageToBuffer(q, src, dst, so, region, doff, nwait, wait, e.evp);
	image_bytes(&e, rc, src, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyBufferToImage(cl_command_queue q, cl_mem src, cl_mem dst, size_t soff,
						  const size_t *dor, const size_t *region, cl_uint nwait,
						  const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueCopyBufferToImage,
		  pcl_next.clEnqueueCopyBufferToImage(q, src, dst, soff, dor, region, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_COPY_BUFFER_TO_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyBufferToImage(q, src, dst, soff, dor, region, nwait, wait, e.evp);
	image_bytes(&e, rc, dst, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueFillImage(cl_command_queue q, cl_mem img, const void *color, const size_t *origin,
					  const size_t *region, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueFillImage, pcl_next.clEnqueueFillImage(q, img, color, origin, region, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_FILL_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, NULL, img);
	cl_int rc = pcl_next.clEnqueueFillImage(q, img, color, origin, region, nwait, wait, e.evp);
	image_bytes(&e, rc, img, region);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

void *CL_API_CALL pcl_clEnqueueMapImage(cl_command_queue q, cl_mem img, cl_bool block, cl_map_flags flags,
					const size_t *origin, const size_t *region, size_t *rp, size_t *sp,
					cl_uint nwait, const cl_event *wait, cl_event *ev, cl_int *err)
{
	PCL_BEGIN_ERR(clEnqueueMapImage, err,
		      pcl_next.clEnqueueMapImage(q, img, block, flags, origin, region, rp, sp, nwait, wait, ev, err));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_MAP_IMAGE, nwait, wait, ev);
	pcl_enq_transfer(&e, 0, img, NULL);
	cl_int rc = CL_SUCCESS;
	void *ptr = pcl_next.clEnqueueMapImage(q, img, block, flags, origin, region, rp, sp, nwait, wait, e.evp, &rc);
	image_bytes(&e, ptr ? CL_SUCCESS : rc, img, region);
	if (ptr && e.p) /* the unmap's bytes (a write-back only if mapped for writing) */
		pcl_map_remember(ptr, img, e.p->cmd.bytes,
				 (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
	pcl_enq_end(&e, ptr ? CL_SUCCESS : rc, q, ev);
	if (err)
		*err = rc;
	pcl_leave();
	return ptr;
}
