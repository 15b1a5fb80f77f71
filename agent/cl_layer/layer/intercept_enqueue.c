/* The intercepted enqueues and synchronisation calls. Every enqueue becomes
 * a tracked command: before the runtime's call, its queue order, wait list
 * (table look-ups of the app's events, never calls with them) and host time;
 * after a successful call, the event (the app's, or one the layer asked for
 * when the app passed none) is tracked until it completes (track.c). A queue
 * or kernel the layer did not see created is learned only after the runtime
 * accepted it in this call. */
#include <stdlib.h>
#include <string.h>

#include "intercept.h"

/* Before the runtime's call: a record with the queue order, wait list and host time. */
void pcl_enq_begin(struct enq *e, cl_command_queue q, cl_uint type, cl_uint nwait, const cl_event *wait,
		      cl_event *app_ev)
{
	e->own = NULL;
	e->queue_known = false;
	e->p = pcl_pending_new();
	/* an event of the layer's own only for a command it tracks (nobody would release it otherwise) */
	e->evp = app_ev ? app_ev : e->p ? &e->own : NULL;
	if (!e->p)
		return;
	struct pcl_cmd *c = &e->p->cmd;
	c->type = type;
	struct pcl_queue_info qi;
	e->queue_known = pcl_queue_next(q, c->id, &qi);
	if (e->queue_known) {
		c->queue_id = qi.id;
		c->prev_in_queue = qi.last_cmd;
		c->forced_profiling = qi.forced_profiling;
		e->p->in_order = qi.in_order;
	}
	for (cl_uint i = 0; wait && i < nwait && c->n_wait < PCL_MAX_DEPS; i++) {
		uint64_t id = pcl_event_cmd(wait[i]);
		if (id)
			c->wait[c->n_wait++] = id;
	}
	c->host_enqueue = pcl_now_ns();
}

/* After it: track the command, or forget it when the enqueue failed. */
void pcl_enq_end(struct enq *e, cl_int rc, cl_command_queue q, cl_event *app_ev)
{
	if (!e->p)
		return;
	if (rc != CL_SUCCESS || !*e->evp) {
		pcl_pending_abandon(e->p);
		return;
	}
	struct pcl_cmd *c = &e->p->cmd;
	if (!e->queue_known) {
		struct pcl_queue_info qi;
		pcl_queue_learn(q, c->id, &qi);
		c->queue_id = qi.id;
		c->prev_in_queue = qi.last_cmd;
		e->p->in_order = qi.in_order;
	}
	cl_event ev = *e->evp;
	if (app_ev)
		pcl_event_map(ev, c->id, c->queue_id);
	pcl_track(e->p, ev, app_ev == NULL);
}

uint64_t pcl_enq_mem_id(cl_mem m)
{
	struct pcl_mem_info mi;
	return pcl_mem_lookup(m, &mi) ? mi.id : 0;
}

/* A transfer's record: its bytes, the memory it reads and the one it writes (NULL: none). */
void pcl_enq_transfer(struct enq *e, uint64_t bytes, cl_mem rd, cl_mem wr)
{
	if (!e->p)
		return;
	struct pcl_cmd *c = &e->p->cmd;
	c->bytes = bytes;
	uint64_t r = rd ? pcl_enq_mem_id(rd) : 0, w = wr ? pcl_enq_mem_id(wr) : 0;
	if (r)
		pcl_add_id(c->read, &c->n_read, r);
	if (w)
		pcl_add_id(c->written, &c->n_written, w);
}

/* A kernel launch: shape and arguments (a kernel unknown until the runtime accepts it is learned after). */
static cl_int launch(cl_command_queue q, cl_kernel k, cl_uint type, cl_uint dim, const size_t *offset,
		     const size_t *global, const size_t *local, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	struct enq e;
	pcl_enq_begin(&e, q, type, nwait, wait, ev);
	bool known = false;
	if (e.p) {
		struct pcl_cmd *c = &e.p->cmd;
		c->work_dim = dim > 3 ? 3 : dim;
		c->has_local = local != NULL;
		c->has_offset = offset != NULL;
		for (cl_uint i = 0; i < c->work_dim; i++) {
			c->global[i] = global ? global[i] : 0;
			c->local[i] = local ? local[i] : 0;
			c->offset[i] = offset ? offset[i] : 0;
		}
		known = pcl_kernel_launch(k, c);
		c->host_enqueue = pcl_now_ns();
	}
	cl_int rc = type == CL_COMMAND_TASK ? pcl_next.clEnqueueTask(q, k, nwait, wait, e.evp)
					    : pcl_next.clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait,
									      wait, e.evp);
	if (e.p && rc == CL_SUCCESS && !known) {
		pcl_kernel_learn(k);
		pcl_kernel_launch(k, &e.p->cmd);
	}
	pcl_enq_end(&e, rc, q, ev);
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
					      const size_t *global, const size_t *local, cl_uint nwait,
					      const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueNDRangeKernel,
		  pcl_next.clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, ev));
	cl_int rc = launch(q, k, CL_COMMAND_NDRANGE_KERNEL, dim, offset, global, local, nwait, wait, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueTask(cl_command_queue q, cl_kernel k, cl_uint nwait, const cl_event *wait,
				     cl_event *ev)
{
	PCL_BEGIN(clEnqueueTask, pcl_next.clEnqueueTask(q, k, nwait, wait, ev));
	static const size_t one[1] = {1}; /* a task is a one-work-item NDRange (OpenCL 1.2, 5.8) */
	cl_int rc = launch(q, k, CL_COMMAND_TASK, 1, NULL, one, one, nwait, wait, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t cb,
					   void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueReadBuffer, pcl_next.clEnqueueReadBuffer(q, m, block, off, cb, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_READ_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, cb, m, NULL);
	cl_int rc = pcl_next.clEnqueueReadBuffer(q, m, block, off, cb, ptr, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t cb,
					    const void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueWriteBuffer, pcl_next.clEnqueueWriteBuffer(q, m, block, off, cb, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_WRITE_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, cb, NULL, m);
	cl_int rc = pcl_next.clEnqueueWriteBuffer(q, m, block, off, cb, ptr, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t soff, size_t doff,
					   size_t cb, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueCopyBuffer, pcl_next.clEnqueueCopyBuffer(q, src, dst, soff, doff, cb, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_COPY_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, cb, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyBuffer(q, src, dst, soff, doff, cb, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueFillBuffer(cl_command_queue q, cl_mem m, const void *pattern, size_t psize,
					   size_t off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueFillBuffer,
		  pcl_next.clEnqueueFillBuffer(q, m, pattern, psize, off, cb, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_FILL_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, cb, NULL, m);
	cl_int rc = pcl_next.clEnqueueFillBuffer(q, m, pattern, psize, off, cb, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

void *CL_API_CALL pcl_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags flags,
					 size_t off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *ev,
					 cl_int *err)
{
	PCL_BEGIN_ERR(clEnqueueMapBuffer, err,
		      pcl_next.clEnqueueMapBuffer(q, m, block, flags, off, cb, nwait, wait, ev, err));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_MAP_BUFFER, nwait, wait, ev);
	pcl_enq_transfer(&e, cb, m, NULL);
	cl_int rc = CL_SUCCESS;
	void *ptr = pcl_next.clEnqueueMapBuffer(q, m, block, flags, off, cb, nwait, wait, e.evp, &rc);
	if (ptr)
		pcl_map_remember(ptr, m, cb, (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
	pcl_enq_end(&e, ptr ? CL_SUCCESS : rc, q, ev);
	if (err)
		*err = rc;
	pcl_leave();
	return ptr;
}

cl_int CL_API_CALL pcl_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *ptr, cl_uint nwait,
					       const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueUnmapMemObject, pcl_next.clEnqueueUnmapMemObject(q, m, ptr, nwait, wait, ev));
	struct enq e;
	pcl_enq_begin(&e, q, CL_COMMAND_UNMAP_MEM_OBJECT, nwait, wait, ev);
	cl_mem mm;
	uint64_t bytes = 0;
	bool write = false;
	/* a write-back only if it was mapped for writing */
	if (pcl_map_forget(ptr, &mm, &bytes, &write))
		pcl_enq_transfer(&e, write ? bytes : 0, NULL, write ? m : NULL);
	cl_int rc = pcl_next.clEnqueueUnmapMemObject(q, m, ptr, nwait, wait, e.evp);
	pcl_enq_end(&e, rc, q, ev);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueSVMFree(cl_command_queue q, cl_uint n, void *ptrs[],
					void(CL_CALLBACK *fn)(cl_command_queue, cl_uint, void *[], void *),
					void *user, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PCL_BEGIN(clEnqueueSVMFree, pcl_next.clEnqueueSVMFree(q, n, ptrs, fn, user, nwait, wait, ev));
	/* The app may not use the pointers once the free is enqueued: forget them (not a tracked command). */
	for (cl_uint i = 0; ptrs && i < n; i++)
		pcl_svm_freed(ptrs[i]);
	cl_int rc = pcl_next.clEnqueueSVMFree(q, n, ptrs, fn, user, nwait, wait, ev);
	pcl_leave();
	return rc;
}

/* ---------------------------------------------------------------- synchronisation, events */
cl_int CL_API_CALL pcl_clFinish(cl_command_queue q)
{
	PCL_BEGIN(clFinish, pcl_next.clFinish(q));
	cl_int rc = pcl_next.clFinish(q);
	uint32_t id = pcl_queue_id(q); /* its queue's commands (all, for a queue the layer does not know) */
	pcl_track_kick(&id, id ? 1 : 0, true);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clWaitForEvents(cl_uint n, const cl_event *list)
{
	PCL_BEGIN(clWaitForEvents, pcl_next.clWaitForEvents(n, list));
	cl_int rc = pcl_next.clWaitForEvents(n, list);
	/* The queues of the commands it waited for (every queue: an event the layer does not know,
	 * such as a user event, or more than PCL_KICK_QUEUES of them). */
	uint32_t ids[PCL_KICK_QUEUES];
	unsigned nids = 0;
	for (cl_uint i = 0; list && i < n; i++) {
		uint32_t id = pcl_event_queue_id(list[i]);
		unsigned j = 0;
		while (j < nids && ids[j] != id)
			j++;
		if (!id || (j == nids && nids == PCL_KICK_QUEUES)) {
			nids = 0;
			break;
		}
		if (j == nids)
			ids[nids++] = id;
	}
	pcl_track_kick(ids, nids, false);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clRetainEvent(cl_event ev)
{
	PCL_BEGIN(clRetainEvent, pcl_next.clRetainEvent(ev));
	cl_int rc = pcl_next.clRetainEvent(ev);
	if (rc == CL_SUCCESS)
		pcl_event_retained(ev);
	pcl_leave();
	return rc;
}

/* The app's reference goes; the layer's own (taken at enqueue) keeps the
 * event alive until the reaper has read its profiling info. */
cl_int CL_API_CALL pcl_clReleaseEvent(cl_event ev)
{
	PCL_BEGIN(clReleaseEvent, pcl_next.clReleaseEvent(ev));
	pcl_event_released(ev);
	cl_int rc = pcl_next.clReleaseEvent(ev);
	pcl_leave();
	return rc;
}
