/* The intercepted object calls: each forwards to pcl_next and tells the
 * tables what the runtime created (queues with CL_QUEUE_PROFILING_ENABLE
 * added, the app's other properties kept; programs with their hash and
 * build options; kernels; buffers, sub-buffers, images, pipes, samplers,
 * SVM allocations), the app's retains and releases, and, after the runtime
 * accepted it, what each kernel argument is. The app's values are only
 * forwarded here; what the tables learn comes from the runtime's results. */
#include <stdlib.h>
#include <string.h>

#include "intercept.h"

/* ---------------------------------------------------------------- queues */
cl_command_queue CL_API_CALL pcl_clCreateCommandQueue(cl_context ctx, cl_device_id dev,
						      cl_command_queue_properties props, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateCommandQueue, err, pcl_next.clCreateCommandQueue(ctx, dev, props, err));
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
	pcl_leave();
	return q;
}

#define MAX_QPROPS 64

cl_command_queue CL_API_CALL pcl_clCreateCommandQueueWithProperties(cl_context ctx, cl_device_id dev,
								    const cl_queue_properties *props, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateCommandQueueWithProperties, err,
		      pcl_next.clCreateCommandQueueWithProperties(ctx, dev, props, err));
	cl_queue_properties mine[MAX_QPROPS + 3];
	size_t n = 0;
	bool have = false, forced = true, in_order = true, added = false;
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
			added = true;
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
	if (q && forced && added)
		pcl_queue_props_added(q, props ? 1 : 2);
	if (err)
		*err = e;
	pcl_leave();
	return q;
}

/* clRetain* / clRelease* of the tables' kinds: the app's reference counts. A
 * release is counted before the runtime's (after it, the address may already
 * belong to a new object another thread created). */
#define RETAIN_RELEASE(type, Obj, kind)                                                                    \
	cl_int CL_API_CALL pcl_clRetain##Obj(type h)                                                       \
	{                                                                                                  \
		PCL_BEGIN(clRetain##Obj, pcl_next.clRetain##Obj(h));                                       \
		cl_int rc = pcl_next.clRetain##Obj(h);                                                     \
		if (rc == CL_SUCCESS)                                                                      \
			pcl_retained(kind, h);                                                             \
		pcl_leave();                                                                               \
		return rc;                                                                                 \
	}                                                                                                  \
	cl_int CL_API_CALL pcl_clRelease##Obj(type h)                                                      \
	{                                                                                                  \
		PCL_BEGIN(clRelease##Obj, pcl_next.clRelease##Obj(h));                                     \
		pcl_released(kind, h);                                                                     \
		cl_int rc = pcl_next.clRelease##Obj(h);                                                    \
		pcl_leave();                                                                               \
		return rc;                                                                                 \
	}

RETAIN_RELEASE(cl_command_queue, CommandQueue, PCL_OBJ_QUEUE)
RETAIN_RELEASE(cl_program, Program, PCL_OBJ_PROGRAM)
RETAIN_RELEASE(cl_mem, MemObject, PCL_OBJ_MEM)
RETAIN_RELEASE(cl_sampler, Sampler, PCL_OBJ_SAMPLER)

/* ---------------------------------------------------------------- programs */
static cl_program program_made(cl_program p, uint64_t hash)
{
	if (p)
		pcl_program_created(p, hash);
	pcl_leave();
	return p;
}

cl_program CL_API_CALL pcl_clCreateProgramWithSource(cl_context ctx, cl_uint count, const char **strings,
						     const size_t *lengths, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateProgramWithSource, err,
		      pcl_next.clCreateProgramWithSource(ctx, count, strings, lengths, err));
	cl_program p = pcl_next.clCreateProgramWithSource(ctx, count, strings, lengths, err);
	uint64_t h = PCL_HASH_INIT;
	for (cl_uint i = 0; p && i < count; i++) /* the runtime accepted these strings */
		if (strings[i])
			h = pcl_hash(h, strings[i], lengths && lengths[i] ? lengths[i] : strlen(strings[i]));
	return program_made(p, h);
}

cl_program CL_API_CALL pcl_clCreateProgramWithBinary(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
						     const size_t *lengths, const unsigned char **bins,
						     cl_int *status, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateProgramWithBinary, err,
		      pcl_next.clCreateProgramWithBinary(ctx, ndev, devs, lengths, bins, status, err));
	cl_program p = pcl_next.clCreateProgramWithBinary(ctx, ndev, devs, lengths, bins, status, err);
	uint64_t h = PCL_HASH_INIT;
	for (cl_uint i = 0; p && i < ndev; i++)
		if (bins && bins[i] && lengths)
			h = pcl_hash(h, bins[i], lengths[i]);
	return program_made(p, h);
}

cl_program CL_API_CALL pcl_clCreateProgramWithIL(cl_context ctx, const void *il, size_t length, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateProgramWithIL, err, pcl_next.clCreateProgramWithIL(ctx, il, length, err));
	cl_program p = pcl_next.clCreateProgramWithIL(ctx, il, length, err);
	return program_made(p, p ? pcl_hash(PCL_HASH_INIT, il, length) : 0);
}

cl_program CL_API_CALL pcl_clCreateProgramWithBuiltInKernels(cl_context ctx, cl_uint ndev,
							     const cl_device_id *devs, const char *names,
							     cl_int *err)
{
	PCL_BEGIN_ERR(clCreateProgramWithBuiltInKernels, err,
		      pcl_next.clCreateProgramWithBuiltInKernels(ctx, ndev, devs, names, err));
	cl_program p = pcl_next.clCreateProgramWithBuiltInKernels(ctx, ndev, devs, names, err);
	return program_made(p, p ? pcl_hash(PCL_HASH_INIT, names, strlen(names)) : 0);
}

cl_int CL_API_CALL pcl_clBuildProgram(cl_program p, cl_uint ndev, const cl_device_id *devs, const char *options,
				      void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
	PCL_BEGIN(clBuildProgram, pcl_next.clBuildProgram(p, ndev, devs, options, notify, user));
	uint64_t t0 = pcl_now_ns();
	cl_int rc = pcl_next.clBuildProgram(p, ndev, devs, options, notify, user);
	if (rc == CL_SUCCESS || notify) /* with a callback the build may still be running */
		pcl_program_built(p, options);
	pcl_log("clBuildProgram(\"%s\") = %d in %.1f ms", options ? options : "", rc,
		(double)(pcl_now_ns() - t0) / 1e6);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clCompileProgram(cl_program p, cl_uint ndev, const cl_device_id *devs, const char *options,
					cl_uint nhdr, const cl_program *hdrs, const char **hdr_names,
					void(CL_CALLBACK *notify)(cl_program, void *), void *user)
{
	PCL_BEGIN(clCompileProgram,
		  pcl_next.clCompileProgram(p, ndev, devs, options, nhdr, hdrs, hdr_names, notify, user));
	cl_int rc = pcl_next.clCompileProgram(p, ndev, devs, options, nhdr, hdrs, hdr_names, notify, user);
	if (rc == CL_SUCCESS || notify)
		pcl_program_built(p, options);
	pcl_leave();
	return rc;
}

cl_program CL_API_CALL pcl_clLinkProgram(cl_context ctx, cl_uint ndev, const cl_device_id *devs,
					 const char *options, cl_uint nin, const cl_program *in,
					 void(CL_CALLBACK *notify)(cl_program, void *), void *user, cl_int *err)
{
	PCL_BEGIN_ERR(clLinkProgram, err, pcl_next.clLinkProgram(ctx, ndev, devs, options, nin, in, notify, user, err));
	cl_program p = pcl_next.clLinkProgram(ctx, ndev, devs, options, nin, in, notify, user, err);
	if (p) {
		/* The linked program: its inputs' hashes (table look-ups only) and the link options. */
		uint64_t h = PCL_HASH_INIT;
		for (cl_uint i = 0; i < nin; i++) {
			uint64_t ih = 0;
			char opt[PCL_MAX_OPTIONS + 1];
			if (pcl_program_lookup(in[i], &ih, opt, sizeof(opt)))
				h = pcl_hash(pcl_hash(h, &ih, sizeof(ih)), opt, strlen(opt));
		}
		pcl_program_created(p, h);
		pcl_program_built(p, options);
	}
	pcl_leave();
	return p;
}

/* ---------------------------------------------------------------- kernels */
cl_kernel CL_API_CALL pcl_clCreateKernel(cl_program p, const char *name, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateKernel, err, pcl_next.clCreateKernel(p, name, err));
	cl_kernel k = pcl_next.clCreateKernel(p, name, err);
	if (k)
		pcl_kernel_created(k, p, name);
	pcl_leave();
	return k;
}

cl_int CL_API_CALL pcl_clCreateKernelsInProgram(cl_program p, cl_uint n, cl_kernel *kernels, cl_uint *n_ret)
{
	PCL_BEGIN(clCreateKernelsInProgram, pcl_next.clCreateKernelsInProgram(p, n, kernels, n_ret));
	cl_uint made = 0;
	cl_int rc = pcl_next.clCreateKernelsInProgram(p, n, kernels, &made);
	if (n_ret)
		*n_ret = made;
	for (cl_uint i = 0; rc == CL_SUCCESS && kernels && i < made && i < n; i++)
		if (kernels[i])
			pcl_kernel_created(kernels[i], p, NULL);
	pcl_leave();
	return rc;
}

cl_kernel CL_API_CALL pcl_clCloneKernel(cl_kernel src, cl_int *err)
{
	PCL_BEGIN_ERR(clCloneKernel, err, pcl_next.clCloneKernel(src, err));
	cl_kernel k = pcl_next.clCloneKernel(src, err);
	if (k)
		pcl_kernel_cloned(src, k);
	pcl_leave();
	return k;
}

cl_int CL_API_CALL pcl_clRetainKernel(cl_kernel k)
{
	PCL_BEGIN(clRetainKernel, pcl_next.clRetainKernel(k));
	cl_int rc = pcl_next.clRetainKernel(k);
	if (rc == CL_SUCCESS)
		pcl_kernel_retained(k);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clReleaseKernel(cl_kernel k)
{
	PCL_BEGIN(clReleaseKernel, pcl_next.clReleaseKernel(k));
	pcl_kernel_released(k);
	cl_int rc = pcl_next.clReleaseKernel(k);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clSetKernelArg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	PCL_BEGIN(clSetKernelArg, pcl_next.clSetKernelArg(k, idx, size, value));
	cl_int rc = pcl_next.clSetKernelArg(k, idx, size, value);
	if (rc == CL_SUCCESS)
		pcl_kernel_set_arg(k, idx, size, value);
	pcl_leave();
	return rc;
}

cl_int CL_API_CALL pcl_clSetKernelArgSVMPointer(cl_kernel k, cl_uint idx, const void *ptr)
{
	PCL_BEGIN(clSetKernelArgSVMPointer, pcl_next.clSetKernelArgSVMPointer(k, idx, ptr));
	cl_int rc = pcl_next.clSetKernelArgSVMPointer(k, idx, ptr);
	if (rc == CL_SUCCESS)
		pcl_kernel_set_arg_svm(k, idx, ptr);
	pcl_leave();
	return rc;
}

/* ---------------------------------------------------------------- memory objects */
static cl_mem mem_made(cl_mem m, enum pcl_mem_kind kind, cl_mem_flags flags, uint64_t size)
{
	if (m)
		pcl_mem_created(m, kind, flags, size, NULL);
	pcl_leave();
	return m;
}

cl_mem CL_API_CALL pcl_clCreateBuffer(cl_context ctx, cl_mem_flags flags, size_t size, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateBuffer, err, pcl_next.clCreateBuffer(ctx, flags, size, host, err));
	return mem_made(pcl_next.clCreateBuffer(ctx, flags, size, host, err), PCL_MEM_BUFFER, flags, size);
}

cl_mem CL_API_CALL pcl_clCreateBufferWithProperties(cl_context ctx, const cl_mem_properties *props,
						    cl_mem_flags flags, size_t size, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateBufferWithProperties, err,
		      pcl_next.clCreateBufferWithProperties(ctx, props, flags, size, host, err));
	return mem_made(pcl_next.clCreateBufferWithProperties(ctx, props, flags, size, host, err), PCL_MEM_BUFFER,
			flags, size);
}

cl_mem CL_API_CALL pcl_clCreateSubBuffer(cl_mem buf, cl_mem_flags flags, cl_buffer_create_type type,
					 const void *info, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateSubBuffer, err, pcl_next.clCreateSubBuffer(buf, flags, type, info, err));
	cl_mem m = pcl_next.clCreateSubBuffer(buf, flags, type, info, err);
	if (m) {
		/* The runtime accepted buf as a buffer and info as a region. Access flags not given are the parent's. */
		struct pcl_mem_info parent = {0};
		bool known = pcl_mem_lookup(buf, &parent);
		const cl_mem_flags access = CL_MEM_READ_WRITE | CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY;
		if (!(flags & access) && known)
			flags |= parent.flags & access;
		uint64_t size = type == CL_BUFFER_CREATE_TYPE_REGION ? ((const cl_buffer_region *)info)->size : 0;
		pcl_mem_created(m, PCL_MEM_SUB_BUFFER, flags, size, known ? buf : NULL);
	}
	pcl_leave();
	return m;
}

cl_mem CL_API_CALL pcl_clCreateImage(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt,
				     const cl_image_desc *desc, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateImage, err, pcl_next.clCreateImage(ctx, flags, fmt, desc, host, err));
	return mem_made(pcl_next.clCreateImage(ctx, flags, fmt, desc, host, err), PCL_MEM_IMAGE, flags, 0);
}

cl_mem CL_API_CALL pcl_clCreateImageWithProperties(cl_context ctx, const cl_mem_properties *props,
						   cl_mem_flags flags, const cl_image_format *fmt,
						   const cl_image_desc *desc, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateImageWithProperties, err,
		      pcl_next.clCreateImageWithProperties(ctx, props, flags, fmt, desc, host, err));
	return mem_made(pcl_next.clCreateImageWithProperties(ctx, props, flags, fmt, desc, host, err), PCL_MEM_IMAGE,
			flags, 0);
}

cl_mem CL_API_CALL pcl_clCreateImage2D(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt, size_t w,
				       size_t h, size_t pitch, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateImage2D, err, pcl_next.clCreateImage2D(ctx, flags, fmt, w, h, pitch, host, err));
	return mem_made(pcl_next.clCreateImage2D(ctx, flags, fmt, w, h, pitch, host, err), PCL_MEM_IMAGE, flags, 0);
}

cl_mem CL_API_CALL pcl_clCreateImage3D(cl_context ctx, cl_mem_flags flags, const cl_image_format *fmt, size_t w,
				       size_t h, size_t d, size_t rpitch, size_t spitch, void *host, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateImage3D, err,
		      pcl_next.clCreateImage3D(ctx, flags, fmt, w, h, d, rpitch, spitch, host, err));
	return mem_made(pcl_next.clCreateImage3D(ctx, flags, fmt, w, h, d, rpitch, spitch, host, err),
			PCL_MEM_IMAGE, flags, 0);
}

cl_mem CL_API_CALL pcl_clCreatePipe(cl_context ctx, cl_mem_flags flags, cl_uint packet, cl_uint max_packets,
				    const cl_pipe_properties *props, cl_int *err)
{
	PCL_BEGIN_ERR(clCreatePipe, err, pcl_next.clCreatePipe(ctx, flags, packet, max_packets, props, err));
	return mem_made(pcl_next.clCreatePipe(ctx, flags, packet, max_packets, props, err), PCL_MEM_PIPE, flags,
			(uint64_t)packet * max_packets);
}

/* ---------------------------------------------------------------- samplers, SVM */
static cl_sampler sampler_made(cl_sampler s)
{
	if (s)
		pcl_sampler_created(s);
	pcl_leave();
	return s;
}

cl_sampler CL_API_CALL pcl_clCreateSampler(cl_context ctx, cl_bool norm, cl_addressing_mode am,
					   cl_filter_mode fm, cl_int *err)
{
	PCL_BEGIN_ERR(clCreateSampler, err, pcl_next.clCreateSampler(ctx, norm, am, fm, err));
	return sampler_made(pcl_next.clCreateSampler(ctx, norm, am, fm, err));
}

cl_sampler CL_API_CALL pcl_clCreateSamplerWithProperties(cl_context ctx, const cl_sampler_properties *props,
							 cl_int *err)
{
	PCL_BEGIN_ERR(clCreateSamplerWithProperties, err, pcl_next.clCreateSamplerWithProperties(ctx, props, err));
	return sampler_made(pcl_next.clCreateSamplerWithProperties(ctx, props, err));
}

void *CL_API_CALL pcl_clSVMAlloc(cl_context ctx, cl_svm_mem_flags flags, size_t size, cl_uint align)
{
	if (!pcl_next.clSVMAlloc)
		return NULL;
	if (pcl_nested())
		return pcl_next.clSVMAlloc(ctx, flags, size, align);
	pcl_enter(PCL_FN_clSVMAlloc);
	void *p = pcl_next.clSVMAlloc(ctx, flags, size, align);
	if (p)
		pcl_svm_allocated(p, size, flags);
	pcl_leave();
	return p;
}

void CL_API_CALL pcl_clSVMFree(cl_context ctx, void *p)
{
	if (!pcl_next.clSVMFree)
		return;
	if (pcl_nested()) {
		pcl_next.clSVMFree(ctx, p);
		return;
	}
	pcl_enter(PCL_FN_clSVMFree);
	pcl_svm_freed(p); /* before: after it, the range may be handed out again */
	pcl_next.clSVMFree(ctx, p);
	pcl_leave();
}
