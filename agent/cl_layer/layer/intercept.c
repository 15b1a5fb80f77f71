/* The intercepted OpenCL calls. Each forwards to pcl_next and records what
 * the profile needs: queues get CL_QUEUE_PROFILING_ENABLE added (the app's
 * other properties kept), programs their hash and build options, kernels
 * their buffer arguments, and every enqueue becomes a tracked command. A
 * thread-local depth guard makes calls the driver makes into the API from
 * inside a call pass straight through (preload mode). */
#include <stdlib.h>
#include <string.h>

#include "pcl.h"

static __thread int depth;

#define PASS_THROUGH_IF_NESTED(call)                                                                       \
	do {                                                                                               \
		if (depth > 0)                                                                             \
			return call;                                                                       \
	} while (0)

/* ---------------------------------------------------------------- queues */
cl_command_queue CL_API_CALL pcl_clCreateCommandQueue(cl_context ctx, cl_device_id dev,
						      cl_command_queue_properties props, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateCommandQueue(ctx, dev, props, err));
	depth++;
	bool forced = !(props & CL_QUEUE_PROFILING_ENABLE);
	cl_int e = CL_SUCCESS;
	cl_command_queue q = pcl_next.clCreateCommandQueue(ctx, dev, props | CL_QUEUE_PROFILING_ENABLE, &e);
	if (!q && forced) {
		pcl_log("queue with profiling refused (%d): creating it as asked, untimed", e);
		q = pcl_next.clCreateCommandQueue(ctx, dev, props, &e);
		forced = false;
	}
	if (q)
		pcl_queue_created(q, !(props & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), forced);
	if (err)
		*err = e;
	depth--;
	return q;
}

#define MAX_QPROPS 64

cl_command_queue CL_API_CALL pcl_clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
								    const cl_queue_properties *props, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateCommandQueueWithProperties(ctx, dev, props, err));
	depth++;
	cl_queue_properties mine[MAX_QPROPS + 3];
	size_t n = 0;
	bool have = false, forced = true, in_order = true;
	for (; props && props[n] && n + 2 <= MAX_QPROPS; n += 2) {
		mine[n] = props[n];
		mine[n + 1] = props[n + 1];
		if (props[n] == CL_QUEUE_PROPERTIES) {
			have = true;
			forced = !(props[n + 1] & CL_QUEUE_PROFILING_ENABLE);
			in_order = !(props[n + 1] & CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
			mine[n + 1] |= CL_QUEUE_PROFILING_ENABLE;
		}
	}
	cl_command_queue q = NULL;
	cl_int e = CL_SUCCESS;
	if (props && props[n]) {
		/* More properties than we copy: leave the call alone. */
		q = pcl_next.clCreateCommandQueueWithProperties(ctx, dev, props, &e);
		forced = false;
	} else {
		if (!have) {
			mine[n++] = CL_QUEUE_PROPERTIES;
			mine[n++] = CL_QUEUE_PROFILING_ENABLE;
		}
		mine[n] = 0;
		q = pcl_next.clCreateCommandQueueWithProperties(ctx, dev, mine, &e);
		if (!q && forced) {
			q = pcl_next.clCreateCommandQueueWithProperties(ctx, dev, props, &e);
			forced = false;
		}
	}
	if (q)
		pcl_queue_created(q, in_order, forced);
	if (err)
		*err = e;
	depth--;
	return q;
}

cl_int CL_API_CALL pcl_clReleaseCommandQueue(cl_command_queue q)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clReleaseCommandQueue(q));
	cl_uint refs = 0;
	if (pcl_next.clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof(refs), &refs, NULL) == CL_SUCCESS &&
	    refs == 1)
		pcl_queue_released(q);
	return pcl_next.clReleaseCommandQueue(q);
}

/* ---------------------------------------------------------------- programs, kernels, buffers */
cl_program CL_API_CALL pcl_clCreateProgramWithSource(cl_context ctx, cl_uint count, const char **strings,
						     const size_t *lengths, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateProgramWithSource(ctx, count, strings, lengths, err));
	depth++;
	cl_program p = pcl_next.clCreateProgramWithSource(ctx, count, strings, lengths, err);
	if (p) {
		uint64_t h = PCL_HASH_INIT;
		for (cl_uint i = 0; i < count; i++)
			if (strings[i])
				h = pcl_hash(h, strings[i], lengths && lengths[i] ? lengths[i] : strlen(strings[i]));
		pcl_program_created(p, h);
	}
	depth--;
	return p;
}

cl_program CL_API_CALL pcl_clCreateProgramWithBinary(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
						     const size_t *lengths, const unsigned char **bins,
						     cl_int *status, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateProgramWithBinary(ctx, ndev, devs, lengths, bins, status, err));
	depth++;
	cl_program p = pcl_next.clCreateProgramWithBinary(ctx, ndev, devs, lengths, bins, status, err);
	if (p) {
		uint64_t h = PCL_HASH_INIT;
		for (cl_uint i = 0; i < ndev; i++)
			if (bins && bins[i] && lengths)
				h = pcl_hash(h, bins[i], lengths[i]);
		pcl_program_created(p, h);
	}
	depth--;
	return p;
}

cl_int CL_API_CALL pcl_clBuildProgram(cl_program p, cl_uint ndev, const cl_device_id *devs, const char *options,
				      void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clBuildProgram(p, ndev, devs, options, notify, user));
	depth++;
	pcl_program_built(p, options);
	uint64_t t0 = pcl_now_ns();
	cl_int rc = pcl_next.clBuildProgram(p, ndev, devs, options, notify, user);
	pcl_log("clBuildProgram(\"%s\") = %d in %.1f ms", options ? options : "", rc,
		(double)(pcl_now_ns() - t0) / 1e6);
	depth--;
	return rc;
}

cl_kernel CL_API_CALL pcl_clCreateKernel(cl_program p, const char *name, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateKernel(p, name, err));
	depth++;
	cl_kernel k = pcl_next.clCreateKernel(p, name, err);
	if (k)
		pcl_kernel_created(k);
	depth--;
	return k;
}

cl_int CL_API_CALL pcl_clReleaseKernel(cl_kernel k)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clReleaseKernel(k));
	cl_uint refs = 0;
	if (pcl_next.clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof(refs), &refs, NULL) == CL_SUCCESS &&
	    refs == 1)
		pcl_kernel_released(k);
	return pcl_next.clReleaseKernel(k);
}

cl_int CL_API_CALL pcl_clSetKernelArg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clSetKernelArg(k, idx, size, value));
	depth++;
	cl_int rc = pcl_next.clSetKernelArg(k, idx, size, value);
	if (rc == CL_SUCCESS)
		pcl_kernel_set_arg(k, idx, size, value);
	depth--;
	return rc;
}

cl_mem CL_API_CALL pcl_clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host, cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clCreateBuffer(ctx, flags, size, host, err));
	depth++;
	cl_mem m = pcl_next.clCreateBuffer(ctx, flags, size, host, err);
	if (m)
		pcl_mem_created(m);
	depth--;
	return m;
}

cl_int CL_API_CALL pcl_clReleaseMemObject(cl_mem m)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clReleaseMemObject(m));
	cl_uint refs = 0;
	if (pcl_next.clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof(refs), &refs, NULL) == CL_SUCCESS &&
	    refs == 1)
		pcl_mem_released(m);
	return pcl_next.clReleaseMemObject(m);
}

/* ---------------------------------------------------------------- enqueues */
struct enq {
	struct pcl_pending *p;
	cl_event own;
	cl_event *evp; /* what to pass to the driver */
};

/* Before the driver call: a record with the queue order, wait list and host time. */
static void enq_begin(struct enq *e, cl_command_queue q, cl_uint type, cl_uint nwait, const cl_event *wait,
		      cl_event *app_ev)
{
	e->own = NULL;
	e->evp = app_ev;
	e->p = pcl_pending_new();
	if (!e->p)
		return;
	struct pcl_cmd *c = &e->p->cmd;
	c->type = type;
	struct pcl_queue_info qi;
	if (pcl_queue_next(q, c->id, &qi)) {
		c->queue_id = qi.id;
		c->prev_in_queue = qi.last_cmd;
		c->forced_profiling = qi.forced_profiling;
	}
	for (cl_uint i = 0; wait && i < nwait && c->n_wait < PCL_MAX_DEPS; i++) {
		uint64_t id = pcl_event_cmd(wait[i]);
		if (id)
			c->wait[c->n_wait++] = id;
	}
	if (!app_ev)
		e->evp = &e->own;
	c->host_enqueue = pcl_now_ns();
}

/* After it: track the command, or forget it when the enqueue failed. */
static void enq_end(struct enq *e, cl_int rc, cl_event *app_ev)
{
	if (!e->p)
		return;
	if (rc != CL_SUCCESS || !*e->evp) {
		pcl_pending_abandon(e->p);
		return;
	}
	cl_event ev = *e->evp;
	pcl_event_map(ev, e->p->cmd.id);
	pcl_track(e->p, ev, app_ev == NULL);
}

static void add_mem(uint64_t *list, uint32_t *n, uint64_t id)
{
	for (uint32_t i = 0; i < *n; i++)
		if (list[i] == id)
			return;
	if (*n < PCL_MAX_DEPS)
		list[(*n)++] = id;
}

static uint64_t mem_id(cl_mem m)
{
	struct pcl_mem_info mi;
	return pcl_mem_lookup(m, &mi) ? mi.id : 0;
}

/* A transfer's record: its bytes, the buffer it reads and the one it writes (NULL: none). */
static void enq_transfer(struct enq *e, uint64_t bytes, cl_mem rd, cl_mem wr)
{
	if (!e->p)
		return;
	struct pcl_cmd *c = &e->p->cmd;
	c->bytes = bytes;
	uint64_t r = rd ? mem_id(rd) : 0, w = wr ? mem_id(wr) : 0;
	if (r)
		add_mem(c->read, &c->n_read, r);
	if (w)
		add_mem(c->written, &c->n_written, w);
}

cl_int CL_API_CALL pcl_clEnqueueNDRangeKernel(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *offset,
					      const size_t *global, const size_t *local, cl_uint nwait,
					      const cl_event *wait, cl_event *ev)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, ev));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_NDRANGE_KERNEL, nwait, wait, ev);
	static __thread struct pcl_kernel_info ki;
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
		if (pcl_kernel_snapshot(k, &ki)) {
			memcpy(c->kernel, ki.name, sizeof(c->kernel));
			memcpy(c->options, ki.options, sizeof(c->options));
			c->program_hash = ki.program_hash;
			for (uint32_t i = 0; i < ki.nargs; i++) {
				if (!ki.args[i].mem_id)
					continue;
				if (ki.args[i].read)
					add_mem(c->read, &c->n_read, ki.args[i].mem_id);
				if (ki.args[i].written)
					add_mem(c->written, &c->n_written, ki.args[i].mem_id);
			}
		}
		if (!c->kernel[0])
			strcpy(c->kernel, "?");
		c->host_enqueue = pcl_now_ns();
	}
	cl_int rc = pcl_next.clEnqueueNDRangeKernel(q, k, dim, offset, global, local, nwait, wait, e.evp);
	enq_end(&e, rc, ev);
	depth--;
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueReadBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t cb,
					   void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueReadBuffer(q, m, block, off, cb, ptr, nwait, wait, ev));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_READ_BUFFER, nwait, wait, ev);
	enq_transfer(&e, cb, m, NULL);
	cl_int rc = pcl_next.clEnqueueReadBuffer(q, m, block, off, cb, ptr, nwait, wait, e.evp);
	enq_end(&e, rc, ev);
	depth--;
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueWriteBuffer(cl_command_queue q, cl_mem m, cl_bool block, size_t off, size_t cb,
					    const void *ptr, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueWriteBuffer(q, m, block, off, cb, ptr, nwait, wait, ev));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_WRITE_BUFFER, nwait, wait, ev);
	enq_transfer(&e, cb, NULL, m);
	cl_int rc = pcl_next.clEnqueueWriteBuffer(q, m, block, off, cb, ptr, nwait, wait, e.evp);
	enq_end(&e, rc, ev);
	depth--;
	return rc;
}

cl_int CL_API_CALL pcl_clEnqueueCopyBuffer(cl_command_queue q, cl_mem src, cl_mem dst, size_t soff, size_t doff,
					   size_t cb, cl_uint nwait, const cl_event *wait, cl_event *ev)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueCopyBuffer(q, src, dst, soff, doff, cb, nwait, wait, ev));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_COPY_BUFFER, nwait, wait, ev);
	enq_transfer(&e, cb, src, dst);
	cl_int rc = pcl_next.clEnqueueCopyBuffer(q, src, dst, soff, doff, cb, nwait, wait, e.evp);
	enq_end(&e, rc, ev);
	depth--;
	return rc;
}

void *CL_API_CALL pcl_clEnqueueMapBuffer(cl_command_queue q, cl_mem m, cl_bool block, cl_map_flags flags,
					 size_t off, size_t cb, cl_uint nwait, const cl_event *wait, cl_event *ev,
					 cl_int *err)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueMapBuffer(q, m, block, flags, off, cb, nwait, wait, ev, err));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_MAP_BUFFER, nwait, wait, ev);
	enq_transfer(&e, cb, m, NULL);
	cl_int rc = CL_SUCCESS;
	void *ptr = pcl_next.clEnqueueMapBuffer(q, m, block, flags, off, cb, nwait, wait, e.evp, &rc);
	if (ptr)
		pcl_map_remember(ptr, m, cb, (flags & (CL_MAP_WRITE | CL_MAP_WRITE_INVALIDATE_REGION)) != 0);
	enq_end(&e, ptr ? CL_SUCCESS : rc, ev);
	if (err)
		*err = rc;
	depth--;
	return ptr;
}

cl_int CL_API_CALL pcl_clEnqueueUnmapMemObject(cl_command_queue q, cl_mem m, void *ptr, cl_uint nwait,
					       const cl_event *wait, cl_event *ev)
{
	PASS_THROUGH_IF_NESTED(pcl_next.clEnqueueUnmapMemObject(q, m, ptr, nwait, wait, ev));
	depth++;
	struct enq e;
	enq_begin(&e, q, CL_COMMAND_UNMAP_MEM_OBJECT, nwait, wait, ev);
	cl_mem mm;
	uint64_t bytes = 0;
	bool write = false;
	/* a write-back only if it was mapped for writing */
	if (pcl_map_forget(ptr, &mm, &bytes, &write))
		enq_transfer(&e, write ? bytes : 0, NULL, write ? m : NULL);
	cl_int rc = pcl_next.clEnqueueUnmapMemObject(q, m, ptr, nwait, wait, e.evp);
	enq_end(&e, rc, ev);
	depth--;
	return rc;
}

/* ---------------------------------------------------------------- synchronisation */
cl_int CL_API_CALL pcl_clFinish(cl_command_queue q)
{
	cl_int rc = pcl_next.clFinish(q);
	if (depth == 0)
		pcl_kick();
	return rc;
}

cl_int CL_API_CALL pcl_clWaitForEvents(cl_uint n, const cl_event *list)
{
	cl_int rc = pcl_next.clWaitForEvents(n, list);
	if (depth == 0)
		pcl_kick();
	return rc;
}

/* The app's reference goes; ours (taken at enqueue) keeps the event alive
 * until the reaper has read its profiling info. */
cl_int CL_API_CALL pcl_clReleaseEvent(cl_event ev)
{
	return pcl_next.clReleaseEvent(ev);
}
