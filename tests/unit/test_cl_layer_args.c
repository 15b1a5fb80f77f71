/* The capture library's argument tracking against a fake OpenCL runtime
 * (issue 24): whatever 8-byte values an app passes as kernel arguments, and
 * whatever handles it has released, the library never hands the runtime one
 * of them on its own account.
 *
 * The library is driven as the ICD loader drives a layer: clInitLayer (the
 * real entry_layer.c) with the fake's dispatch table as the target, then
 * every call through the layer dispatch it returns. The fake stands for what
 * the real stack does with a handle: ocl-icd 2.3.1's loader forwards every
 * call through the handle's first word (icd_generator.rb,
 * generate_ocl_icd_loader_gen_source: "((struct _cl_mem *)memobj)->dispatch
 * ->clGetMemObjectInfo(...)"), and PoCL then checks the object's magic words
 * (lib/CL/pocl_cl.h, IS_CL_OBJECT_VALID); so a value that is not a live handle
 * of the right kind crashes the app. The fake instead looks every handle up
 * among the objects it created and counts a violation when one is unknown,
 * of another kind, or released by the app (a handle the app released may
 * still be alive inside the runtime — a kernel argument keeps its buffer —
 * but the app may no longer use it, OpenCL 3.0 section 5.5.1, and neither
 * may the layer). Runtime functions the fake does not implement count as
 * unexpected calls. Every command is complete at once; the checks wait until
 * the layer's reaper thread has let go of every event. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <pthread.h>
#include <unistd.h>

#include "cl_layer/layer/pcl.h"

#include <CL/cl_layer.h>

enum fk { FK_CONTEXT = 1, FK_QUEUE, FK_PROGRAM, FK_KERNEL, FK_MEM, FK_SAMPLER, FK_EVENT };

struct fake_obj {
	uint64_t magic; /* first word, as a real handle's dispatch pointer */
	enum fk kind;
	int app_refs, runtime_refs; /* alive while either is > 0; usable by the app while app_refs > 0 */
	bool accepted; /* created through the layer, or accepted by the runtime in one of the app's calls */
	cl_kernel_arg_address_qualifier quals[PCL_MAX_ARGS]; /* kernels: what clGetKernelArgInfo answers */
	bool arg_info;
	struct fake_obj *args[PCL_MAX_ARGS]; /* kernels: memory objects they hold (a runtime reference each) */
};

#define FAKE_MAGIC 0xfa4e0b1ec7ull
#define MAX_OBJS 8192

static struct fake_obj *objs[MAX_OBJS];
static size_t nobjs;
static int violations, unexpected, own_calls;
static char first_violation[256];
static struct {
	void *p;
	size_t size;
	bool live;
} svm[64];

/* The layer's reaper thread calls the fake too: one lock around its state. */
static pthread_mutex_t fake_mu = PTHREAD_MUTEX_INITIALIZER;

static struct fake_obj *made(enum fk kind)
{
	struct fake_obj *o = calloc(1, sizeof(*o));
	assert_non_null(o);
	o->magic = FAKE_MAGIC;
	o->kind = kind;
	o->app_refs = 1;
	o->accepted = true;
	pthread_mutex_lock(&fake_mu);
	bool room = nobjs < MAX_OBJS;
	if (room)
		objs[nobjs++] = o;
	pthread_mutex_unlock(&fake_mu);
	assert_true(room);
	return o;
}

static void violation(const char *fn, const void *h)
{
	pthread_mutex_lock(&fake_mu);
	if (violations++ == 0)
		snprintf(first_violation, sizeof(first_violation), "%s(%p)", fn, h);
	pthread_mutex_unlock(&fake_mu);
}

/* The handle h of kind, usable by its holder: else a violation (the real stack would crash or misbehave). */
static struct fake_obj *use(const char *fn, const void *h, enum fk kind)
{
	struct fake_obj *found = NULL;
	pthread_mutex_lock(&fake_mu);
	for (size_t i = 0; i < nobjs && !found; i++)
		if (objs[i] == h && objs[i]->kind == kind && objs[i]->app_refs > 0)
			found = objs[i];
	pthread_mutex_unlock(&fake_mu);
	if (!found)
		violation(fn, h);
	return found;
}

#define USE(h, kind) use(__func__, (h), (kind))

/* In the app's own call: the runtime now knows h is of that kind (the layer may ask about it after). */
static struct fake_obj *accept(const char *fn, const void *h, enum fk kind)
{
	struct fake_obj *o = use(fn, h, kind);
	if (o)
		o->accepted = true;
	return o;
}

#define ACCEPT(h, kind) accept(__func__, (h), (kind))

/* In a call of the layer's own: only a handle the layer can know. */
static struct fake_obj *own(const char *fn, const void *h, enum fk kind)
{
	__atomic_fetch_add(&own_calls, 1, __ATOMIC_SEQ_CST);
	struct fake_obj *o = use(fn, h, kind);
	if (o && !o->accepted)
		violation(fn, h);
	return o;
}

#define OWN(h, kind) own(__func__, (h), (kind))

static void unexpected_call(void)
{
	__atomic_fetch_add(&unexpected, 1, __ATOMIC_SEQ_CST);
}

/* ---------------------------------------------------------------- the fake runtime */
static cl_command_queue CL_API_CALL f_create_queue(cl_context c, cl_device_id d, cl_command_queue_properties p,
						   cl_int *e)
{
	USE(c, FK_CONTEXT);
	if (e)
		*e = CL_SUCCESS;
	return (cl_command_queue)made(FK_QUEUE);
}

static cl_int CL_API_CALL f_get_queue_info(cl_command_queue q, cl_command_queue_info what, size_t size, void *v,
					   size_t *ret)
{
	OWN(q, FK_QUEUE);
	if (what == CL_QUEUE_PROPERTIES && v && size >= sizeof(cl_command_queue_properties))
		*(cl_command_queue_properties *)v = CL_QUEUE_PROFILING_ENABLE;
	return CL_SUCCESS;
}

static cl_program CL_API_CALL f_create_program(cl_context c, cl_uint n, const char **s, const size_t *l, cl_int *e)
{
	USE(c, FK_CONTEXT);
	if (e)
		*e = CL_SUCCESS;
	return (cl_program)made(FK_PROGRAM);
}

static cl_int CL_API_CALL f_build(cl_program p, cl_uint n, const cl_device_id *d, const char *o,
				  void(CL_CALLBACK *cb)(cl_program, void *), void *u)
{
	USE(p, FK_PROGRAM);
	return CL_SUCCESS;
}

static cl_kernel CL_API_CALL f_create_kernel(cl_program p, const char *name, cl_int *e)
{
	USE(p, FK_PROGRAM);
	if (e)
		*e = CL_SUCCESS;
	struct fake_obj *k = made(FK_KERNEL);
	for (int i = 0; i < PCL_MAX_ARGS; i++)
		k->quals[i] = CL_KERNEL_ARG_ADDRESS_GLOBAL;
	return (cl_kernel)k;
}

static cl_int CL_API_CALL f_kernel_info(cl_kernel k, cl_kernel_info what, size_t size, void *v, size_t *ret)
{
	OWN(k, FK_KERNEL);
	static const char name[] = "fake_kernel";
	if (what != CL_KERNEL_FUNCTION_NAME)
		return CL_INVALID_VALUE;
	if (ret)
		*ret = sizeof(name);
	if (v && size >= sizeof(name))
		memcpy(v, name, sizeof(name));
	return CL_SUCCESS;
}

static cl_int CL_API_CALL f_arg_info(cl_kernel k, cl_uint idx, cl_kernel_arg_info what, size_t size, void *v,
				     size_t *ret)
{
	struct fake_obj *o = OWN(k, FK_KERNEL);
	if (!o || !o->arg_info || idx >= PCL_MAX_ARGS)
		return CL_KERNEL_ARG_INFO_NOT_AVAILABLE;
	if (what == CL_KERNEL_ARG_ADDRESS_QUALIFIER && size >= sizeof(cl_kernel_arg_address_qualifier))
		*(cl_kernel_arg_address_qualifier *)v = o->quals[idx];
	else if (what == CL_KERNEL_ARG_TYPE_QUALIFIER && size >= sizeof(cl_kernel_arg_type_qualifier))
		*(cl_kernel_arg_type_qualifier *)v = 0;
	else
		return CL_INVALID_VALUE;
	return CL_SUCCESS;
}

/* What a runtime does with clSetKernelArg: a memory object argument is kept (a reference of its
 * own, PoCL's clSetKernelArg retains it), anything else is copied as bytes. The fake reads the
 * bytes as the real one does, only for a global pointer argument. */
static cl_int CL_API_CALL f_set_arg(cl_kernel k, cl_uint idx, size_t size, const void *value)
{
	struct fake_obj *o = ACCEPT(k, FK_KERNEL);
	if (!o || idx >= PCL_MAX_ARGS)
		return CL_INVALID_ARG_INDEX;
	if (o->args[idx])
		o->args[idx]->runtime_refs--;
	o->args[idx] = NULL;
	if (o->quals[idx] == CL_KERNEL_ARG_ADDRESS_GLOBAL && value && size == sizeof(cl_mem)) {
		cl_mem m;
		memcpy(&m, value, sizeof(m));
		for (size_t i = 0; m && i < nobjs; i++)
			if (objs[i] == (void *)m && objs[i]->kind == FK_MEM && objs[i]->app_refs > 0) {
				o->args[idx] = objs[i];
				objs[i]->runtime_refs++;
			}
	}
	return CL_SUCCESS;
}

static cl_int CL_API_CALL f_set_arg_svm(cl_kernel k, cl_uint idx, const void *p)
{
	ACCEPT(k, FK_KERNEL);
	return CL_SUCCESS;
}

static cl_mem CL_API_CALL f_create_buffer(cl_context c, cl_mem_flags f, size_t s, void *h, cl_int *e)
{
	USE(c, FK_CONTEXT);
	if (e)
		*e = CL_SUCCESS;
	return (cl_mem)made(FK_MEM);
}

static cl_mem CL_API_CALL f_create_sub_buffer(cl_mem b, cl_mem_flags f, cl_buffer_create_type t, const void *info,
					      cl_int *e)
{
	USE(b, FK_MEM);
	if (e)
		*e = CL_SUCCESS;
	return (cl_mem)made(FK_MEM);
}

static cl_sampler CL_API_CALL f_create_sampler(cl_context c, cl_bool n, cl_addressing_mode a, cl_filter_mode f,
					       cl_int *e)
{
	USE(c, FK_CONTEXT);
	if (e)
		*e = CL_SUCCESS;
	return (cl_sampler)made(FK_SAMPLER);
}

static void *CL_API_CALL f_svm_alloc(cl_context c, cl_svm_mem_flags f, size_t size, cl_uint align)
{
	USE(c, FK_CONTEXT);
	for (size_t i = 0; i < 64; i++)
		if (!svm[i].p) {
			svm[i].p = calloc(1, size);
			svm[i].size = size;
			svm[i].live = true;
			return svm[i].p;
		}
	return NULL;
}

static void CL_API_CALL f_svm_free(cl_context c, void *p)
{
	USE(c, FK_CONTEXT);
	for (size_t i = 0; i < 64; i++)
		if (svm[i].p == p)
			svm[i].live = false; /* kept allocated: the address is not handed out again */
}

#define RELEASE_FNS(Obj, kind)                                                                             \
	static cl_int CL_API_CALL f_retain_##Obj(void *h)                                                  \
	{                                                                                                  \
		struct fake_obj *o = USE(h, kind);                                                         \
		if (!o)                                                                                    \
			return CL_INVALID_VALUE;                                                           \
		__atomic_fetch_add(&o->app_refs, 1, __ATOMIC_SEQ_CST);                                     \
		return CL_SUCCESS;                                                                         \
	}                                                                                                  \
	static cl_int CL_API_CALL f_release_##Obj(void *h)                                                 \
	{                                                                                                  \
		struct fake_obj *o = USE(h, kind);                                                         \
		if (!o)                                                                                    \
			return CL_INVALID_VALUE;                                                           \
		__atomic_fetch_sub(&o->app_refs, 1, __ATOMIC_SEQ_CST);                                     \
		return CL_SUCCESS;                                                                         \
	}

RELEASE_FNS(mem, FK_MEM)
RELEASE_FNS(kernel, FK_KERNEL)
RELEASE_FNS(sampler, FK_SAMPLER)
RELEASE_FNS(program, FK_PROGRAM)
RELEASE_FNS(queue, FK_QUEUE)
RELEASE_FNS(event, FK_EVENT)

static cl_int CL_API_CALL f_ndrange(cl_command_queue q, cl_kernel k, cl_uint dim, const size_t *o, const size_t *g,
				    const size_t *l, cl_uint nw, const cl_event *w, cl_event *ev)
{
	ACCEPT(q, FK_QUEUE);
	ACCEPT(k, FK_KERNEL);
	for (cl_uint i = 0; i < nw; i++)
		USE(w[i], FK_EVENT);
	if (ev)
		*ev = (cl_event)made(FK_EVENT);
	return CL_SUCCESS;
}

/* Every command is complete at once. */
static cl_int CL_API_CALL f_event_info(cl_event e, cl_event_info what, size_t size, void *v, size_t *ret)
{
	if (!OWN(e, FK_EVENT))
		return CL_INVALID_EVENT;
	if (what != CL_EVENT_COMMAND_EXECUTION_STATUS || size < sizeof(cl_int))
		return CL_INVALID_VALUE;
	*(cl_int *)v = CL_COMPLETE;
	return CL_SUCCESS;
}

static cl_int CL_API_CALL f_profiling(cl_event e, cl_profiling_info what, size_t size, void *v, size_t *ret)
{
	OWN(e, FK_EVENT);
	if (v && size >= sizeof(cl_ulong))
		*(cl_ulong *)v = 1000 + (what - CL_PROFILING_COMMAND_QUEUED);
	return CL_SUCCESS;
}

static cl_int CL_API_CALL f_finish(cl_command_queue q)
{
	USE(q, FK_QUEUE);
	return CL_SUCCESS;
}

/* ---------------------------------------------------------------- the layer over it */
static cl_icd_dispatch target;
static const cl_icd_dispatch *layer;
static cl_context ctx;
static cl_command_queue queue;
static cl_program program;

static int group_setup(void **state)
{
	void (**slot)(void) = (void (**)(void))&target;
	for (size_t i = 0; i < sizeof(target) / sizeof(void *); i++)
		slot[i] = unexpected_call; /* anything the fake does not implement */
	target.clCreateCommandQueue = f_create_queue;
	target.clGetCommandQueueInfo = f_get_queue_info;
	target.clCreateProgramWithSource = f_create_program;
	target.clBuildProgram = f_build;
	target.clCreateKernel = f_create_kernel;
	target.clGetKernelInfo = f_kernel_info;
	target.clGetKernelArgInfo = f_arg_info;
	target.clSetKernelArg = f_set_arg;
	target.clSetKernelArgSVMPointer = f_set_arg_svm;
	target.clCreateBuffer = f_create_buffer;
	target.clCreateSubBuffer = f_create_sub_buffer;
	target.clCreateSampler = f_create_sampler;
	target.clSVMAlloc = f_svm_alloc;
	target.clSVMFree = f_svm_free;
	target.clRetainMemObject = (cl_int(CL_API_CALL *)(cl_mem))f_retain_mem;
	target.clReleaseMemObject = (cl_int(CL_API_CALL *)(cl_mem))f_release_mem;
	target.clRetainKernel = (cl_int(CL_API_CALL *)(cl_kernel))f_retain_kernel;
	target.clReleaseKernel = (cl_int(CL_API_CALL *)(cl_kernel))f_release_kernel;
	target.clRetainSampler = (cl_int(CL_API_CALL *)(cl_sampler))f_retain_sampler;
	target.clReleaseSampler = (cl_int(CL_API_CALL *)(cl_sampler))f_release_sampler;
	target.clRetainProgram = (cl_int(CL_API_CALL *)(cl_program))f_retain_program;
	target.clReleaseProgram = (cl_int(CL_API_CALL *)(cl_program))f_release_program;
	target.clRetainCommandQueue = (cl_int(CL_API_CALL *)(cl_command_queue))f_retain_queue;
	target.clReleaseCommandQueue = (cl_int(CL_API_CALL *)(cl_command_queue))f_release_queue;
	target.clRetainEvent = (cl_int(CL_API_CALL *)(cl_event))f_retain_event;
	target.clReleaseEvent = (cl_int(CL_API_CALL *)(cl_event))f_release_event;
	target.clEnqueueNDRangeKernel = f_ndrange;
	target.clGetEventInfo = f_event_info;
	target.clGetEventProfilingInfo = f_profiling;
	target.clFinish = f_finish;
	cl_uint n = 0;
	assert_int_equal(clInitLayer(sizeof(target) / sizeof(void *), &target, &n, &layer), CL_SUCCESS);
	assert_non_null(layer);
	ctx = (cl_context)made(FK_CONTEXT);
	cl_int e;
	queue = layer->clCreateCommandQueue(ctx, NULL, 0, &e);
	const char *src = "kernel";
	program = layer->clCreateProgramWithSource(ctx, 1, &src, NULL, &e);
	assert_int_equal(layer->clBuildProgram(program, 0, NULL, "-D X", NULL, NULL), CL_SUCCESS);
	(void)state;
	return 0;
}

static int setup(void **state)
{
	violations = unexpected = own_calls = 0;
	first_violation[0] = 0;
	(void)state;
	return 0;
}

/* Until the layer has let go of every event (its reaper looks every few ms), at most 5 s. */
static void wait_for_reaper(void)
{
	for (int waited = 0; waited < 5000; waited += 5) {
		bool held = false;
		pthread_mutex_lock(&fake_mu);
		for (size_t i = 0; i < nobjs && !held; i++)
			held = objs[i]->kind == FK_EVENT && __atomic_load_n(&objs[i]->app_refs, __ATOMIC_SEQ_CST) > 0;
		pthread_mutex_unlock(&fake_mu);
		if (!held)
			return;
		usleep(5000);
	}
	fail_msg("the layer still holds events after 5 s");
}

static void assert_clean(void)
{
	wait_for_reaper(); /* its calls count too */
	if (violations || unexpected)
		fprintf(stderr, "violations %d (first: %s), unexpected runtime calls %d\n", violations, first_violation,
			unexpected);
	assert_int_equal(violations, 0);
	assert_int_equal(unexpected, 0);
}

static cl_kernel new_kernel(bool arg_info)
{
	cl_int e;
	cl_kernel k = layer->clCreateKernel(program, "fake_kernel", &e);
	assert_non_null(k);
	((struct fake_obj *)k)->arg_info = arg_info;
	return k;
}

static uint64_t rnd_state = 0x9e3779b97f4a7c15ull;

static uint64_t rnd(void)
{
	rnd_state ^= rnd_state << 13;
	rnd_state ^= rnd_state >> 7;
	rnd_state ^= rnd_state << 17;
	return rnd_state;
}

static void launch(cl_kernel k)
{
	size_t g = 64;
	cl_event ev = NULL;
	assert_int_equal(layer->clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, &ev), CL_SUCCESS);
	assert_int_equal(layer->clReleaseEvent(ev), CL_SUCCESS);
}

/* Random 8-byte values, values next to live handles, and the addresses of dead objects, as
 * the arguments of a kernel, with and without argument info: all scalars, no runtime call. */
static void test_cl_layer_random_scalars_never_reach_the_runtime(void **state)
{
	cl_kernel k = new_kernel(false), ki = new_kernel(true);
	cl_int e;
	cl_mem live = layer->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
	cl_mem dead = layer->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
	assert_int_equal(layer->clReleaseMemObject(dead), CL_SUCCESS);
	for (int i = 0; i < 20000; i++) {
		uint64_t v = rnd();
		switch (i % 5) {
		case 1: v = (uint64_t)(uintptr_t)live + 1 + (v % 64); break;	/* inside a live object */
		case 2: v = (uint64_t)(uintptr_t)dead; break;			/* a released handle */
		case 3: v = (uint64_t)(uintptr_t)objs[v % nobjs] ^ 8; break; /* next to any object */
		default: break;
		}
		cl_kernel kk = i & 1 ? k : ki;
		cl_uint idx = (cl_uint)(v % 8);
		assert_int_equal(layer->clSetKernelArg(kk, idx, sizeof(v), &v), CL_SUCCESS);
		assert_int_equal(pcl_kernel_arg_kind(kk, idx), PCL_ARG_SCALAR);
		if (i % 1000 == 0)
			launch(kk);
	}
	/* A live buffer is a buffer; the same bytes as a by-value argument (arg info says private) are not. */
	assert_int_equal(layer->clSetKernelArg(k, 0, sizeof(live), &live), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 0), PCL_ARG_MEM);
	((struct fake_obj *)ki)->quals[3] = CL_KERNEL_ARG_ADDRESS_PRIVATE;
	assert_int_equal(layer->clSetKernelArg(ki, 3, sizeof(live), &live), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(ki, 3), PCL_ARG_SCALAR);
	assert_int_equal(layer->clSetKernelArg(ki, 4, sizeof(live), &live), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(ki, 4), PCL_ARG_MEM);
	/* Shorter values, __local sizes, NULL buffers. */
	uint32_t small = 0xdeadbeef;
	assert_int_equal(layer->clSetKernelArg(k, 5, sizeof(small), &small), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 5), PCL_ARG_SCALAR);
	assert_int_equal(layer->clSetKernelArg(k, 6, 256, NULL), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 6), PCL_ARG_LOCAL);
	cl_mem null_mem = NULL;
	assert_int_equal(layer->clSetKernelArg(k, 7, sizeof(null_mem), &null_mem), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 7), PCL_ARG_SCALAR);
	launch(k);
	assert_int_equal(layer->clFinish(queue), CL_SUCCESS);
	assert_true(own_calls > 0); /* the layer did call the runtime, with what it knows */
	assert_clean();
	layer->clReleaseMemObject(live);
	layer->clReleaseKernel(k);
	layer->clReleaseKernel(ki);
}

/* Released handles are forgotten at the app's last release, though the runtime keeps the object
 * alive (the kernel argument's reference); retains count. */
static void test_cl_layer_freed_handles_are_forgotten(void **state)
{
	cl_kernel k = new_kernel(false);
	cl_int e;
	cl_mem b = layer->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
	assert_int_equal(layer->clSetKernelArg(k, 0, sizeof(b), &b), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 0), PCL_ARG_MEM);
	assert_int_equal(layer->clRetainMemObject(b), CL_SUCCESS);
	assert_int_equal(layer->clReleaseMemObject(b), CL_SUCCESS); /* one reference left */
	assert_int_equal(layer->clSetKernelArg(k, 1, sizeof(b), &b), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 1), PCL_ARG_MEM);
	assert_int_equal(layer->clReleaseMemObject(b), CL_SUCCESS); /* the app's last */
	assert_true(((struct fake_obj *)b)->runtime_refs > 0);	    /* still alive in the runtime */
	assert_int_equal(layer->clSetKernelArg(k, 2, sizeof(b), &b), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 2), PCL_ARG_SCALAR);
	launch(k);
	/* A sub-buffer and a sampler, then released. */
	cl_mem parent = layer->clCreateBuffer(ctx, CL_MEM_READ_ONLY, 64, NULL, &e);
	cl_buffer_region region = {0, 32};
	cl_mem sub = layer->clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &e);
	cl_sampler smp = layer->clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_NONE, CL_FILTER_NEAREST, &e);
	assert_int_equal(layer->clSetKernelArg(k, 3, sizeof(sub), &sub), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 3), PCL_ARG_MEM);
	assert_int_equal(layer->clSetKernelArg(k, 4, sizeof(smp), &smp), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 4), PCL_ARG_SAMPLER);
	launch(k);
	assert_int_equal(layer->clReleaseMemObject(sub), CL_SUCCESS);
	assert_int_equal(layer->clReleaseSampler(smp), CL_SUCCESS);
	assert_int_equal(layer->clSetKernelArg(k, 3, sizeof(sub), &sub), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 3), PCL_ARG_SCALAR);
	assert_int_equal(layer->clSetKernelArg(k, 4, sizeof(smp), &smp), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 4), PCL_ARG_SCALAR);
	assert_int_equal(layer->clReleaseKernel(k), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 0), PCL_ARG_UNSET); /* the kernel is forgotten too */
	/* A kernel and a queue the layer never saw created (made by the runtime for someone else): the
	 * layer asks about them only after the runtime accepted them in the app's own call. */
	cl_kernel raw = (cl_kernel)made(FK_KERNEL);
	cl_command_queue rawq = (cl_command_queue)made(FK_QUEUE);
	((struct fake_obj *)raw)->accepted = ((struct fake_obj *)rawq)->accepted = false;
	size_t g = 16;
	cl_event ev;
	assert_int_equal(layer->clEnqueueNDRangeKernel(rawq, raw, 1, NULL, &g, NULL, 0, NULL, &ev), CL_SUCCESS);
	layer->clReleaseEvent(ev);
	assert_clean();
	layer->clReleaseMemObject(parent);
}

/* SVM pointers: inside an allocation they name it; after clSVMFree they are nothing. */
static void test_cl_layer_svm_pointers(void **state)
{
	cl_kernel k = new_kernel(false);
	char *p = layer->clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0);
	assert_non_null(p);
	assert_int_equal(layer->clSetKernelArgSVMPointer(k, 0, p + 100), CL_SUCCESS);
	assert_int_equal(pcl_kernel_arg_kind(k, 0), PCL_ARG_SVM);
	struct pcl_cmd c;
	memset(&c, 0, sizeof(c));
	assert_true(pcl_kernel_launch(k, &c));
	assert_int_equal(c.n_read, 1);
	assert_int_equal(c.n_written, 1);
	/* a buffer argument replaced by an SVM pointer no longer reads the buffer */
	cl_int e;
	cl_mem b = layer->clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &e);
	assert_int_equal(layer->clSetKernelArg(k, 1, sizeof(b), &b), CL_SUCCESS);
	assert_int_equal(layer->clSetKernelArgSVMPointer(k, 1, p), CL_SUCCESS);
	memset(&c, 0, sizeof(c));
	assert_true(pcl_kernel_launch(k, &c));
	assert_int_equal(c.n_read, 1);
	launch(k);
	layer->clSVMFree(ctx, p);
	assert_int_equal(layer->clSetKernelArgSVMPointer(k, 0, p + 100), CL_SUCCESS);
	assert_int_equal(layer->clSetKernelArgSVMPointer(k, 1, p), CL_SUCCESS);
	memset(&c, 0, sizeof(c));
	assert_true(pcl_kernel_launch(k, &c));
	assert_int_equal(c.n_read, 0);
	assert_clean();
	layer->clReleaseMemObject(b);
	layer->clReleaseKernel(k);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup(test_cl_layer_random_scalars_never_reach_the_runtime, setup),
		cmocka_unit_test_setup(test_cl_layer_freed_handles_are_forgotten, setup),
		cmocka_unit_test_setup(test_cl_layer_svm_pointers, setup),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
