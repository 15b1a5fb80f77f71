/* cl_info's second half (issue #41): every clGetContextInfo,
 * clGetProgramInfo, clGetProgramBuildInfo, clGetKernelInfo,
 * clGetKernelWorkGroupInfo, clGetKernelArgInfo, clGetMemObjectInfo (buffer,
 * sub-buffer, image), clGetImageInfo and clGetSamplerInfo answer printed: the
 * error code and size of a full query, of a size-only query and of one into a
 * 1-byte buffer, and the value (bytes in hex, strings as text, handles as
 * "same as the one made" or not; values that differ between two plain runs,
 * such as host pointers, by size only). The capture library must not change
 * one of them (test_opencl_info.c compares the whole output with the plain
 * run's). Included by cl_info.c only. */
#ifndef CL_INFO_OBJECTS_H
#define CL_INFO_OBJECTS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>

enum show { SHOW_BYTES, SHOW_TEXT, SHOW_HANDLE, SHOW_SIZE };

struct info_name {
	cl_uint name;
	const char *label;
	enum show how;
	const void *want; /* SHOW_HANDLE: the handle the answer should be */
};

/* One object's info function, its extra argument (device, argument index) bound by the caller. */
typedef cl_int (*info_fn)(const void *obj, const void *extra, cl_uint name, size_t size, void *value,
			  size_t *size_ret);

static void show_one(const char *what, info_fn fn, const void *obj, const void *extra,
		     const struct info_name *in)
{
	unsigned char v[1024];
	size_t n = 0, n0 = 0;
	memset(v, 0, sizeof(v));
	cl_int rc = fn(obj, extra, in->name, sizeof(v), v, &n);
	cl_int rc0 = fn(obj, extra, in->name, 0, NULL, &n0);
	unsigned char one = 0;
	cl_int rc1 = n0 > 1 ? fn(obj, extra, in->name, 1, &one, NULL) : CL_SUCCESS;
	printf("  %s %s: %d size %zu, size only %d %zu, short %d:", what, in->label, rc, n, rc0, n0, rc1);
	if (rc != CL_SUCCESS || n > sizeof(v)) {
		printf("\n");
		return;
	}
	switch (in->how) {
	case SHOW_BYTES:
		for (size_t i = 0; i < n; i++)
			printf("%s%02x", i && i % 8 == 0 ? " " : "", v[i]);
		break;
	case SHOW_TEXT:
		printf(" \"%.*s\"", (int)strnlen((const char *)v, n), (const char *)v);
		break;
	case SHOW_HANDLE: {
		const void *h = NULL;
		if (n >= sizeof(h))
			memcpy(&h, v, sizeof(h));
		printf(" %s", h == in->want ? "same" : h ? "other" : "null");
		break;
	}
	case SHOW_SIZE:
		break;
	}
	printf("\n");
}

static void show_all(const char *what, info_fn fn, const void *obj, const void *extra,
		     const struct info_name *names, size_t count)
{
	for (size_t i = 0; i < count; i++)
		show_one(what, fn, obj, extra, &names[i]);
	/* a name the runtime does not have: its error */
	size_t n = 12345;
	cl_int rc = fn(obj, extra, 0x7fff, 0, NULL, &n);
	printf("  %s bad name: %d%s\n", what, rc, n == 12345 ? " (size untouched)" : "");
}

#define INFO_FN(fn_name, type, call)                                                                         \
	static cl_int fn_name(const void *obj, const void *extra, cl_uint name, size_t size, void *value,    \
			      size_t *size_ret)                                                              \
	{                                                                                                    \
		(void)extra;                                                                                 \
		type o = (type)obj;                                                                          \
		return call;                                                                                 \
	}
INFO_FN(ctx_info, cl_context, clGetContextInfo(o, name, size, value, size_ret))
INFO_FN(prog_info, cl_program, clGetProgramInfo(o, name, size, value, size_ret))
INFO_FN(build_info, cl_program, clGetProgramBuildInfo(o, (cl_device_id)extra, name, size, value, size_ret))
INFO_FN(kernel_info, cl_kernel, clGetKernelInfo(o, name, size, value, size_ret))
INFO_FN(wg_info, cl_kernel, clGetKernelWorkGroupInfo(o, (cl_device_id)extra, name, size, value, size_ret))
INFO_FN(arg_info, cl_kernel, clGetKernelArgInfo(o, (cl_uint)(uintptr_t)extra, name, size, value, size_ret))
INFO_FN(mem_info, cl_mem, clGetMemObjectInfo(o, name, size, value, size_ret))
INFO_FN(image_info, cl_mem, clGetImageInfo(o, name, size, value, size_ret))
INFO_FN(sampler_info, cl_sampler, clGetSamplerInfo(o, name, size, value, size_ret))
#undef INFO_FN

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/* A memory object's answers; parent: the buffer a sub-buffer was made from (else NULL). */
static void mem_all(const char *what, cl_mem m, cl_context ctx, cl_mem parent)
{
	const struct info_name names[] = {
	    {CL_MEM_TYPE, "type", SHOW_BYTES, NULL},
	    {CL_MEM_FLAGS, "flags", SHOW_BYTES, NULL},
	    {CL_MEM_SIZE, "size", SHOW_BYTES, NULL},
	    {CL_MEM_HOST_PTR, "host pointer", SHOW_HANDLE, NULL},
	    {CL_MEM_MAP_COUNT, "map count", SHOW_BYTES, NULL},
	    {CL_MEM_REFERENCE_COUNT, "refs", SHOW_BYTES, NULL},
	    {CL_MEM_CONTEXT, "context", SHOW_HANDLE, ctx},
	    {CL_MEM_ASSOCIATED_MEMOBJECT, "associated", SHOW_HANDLE, parent},
	    {CL_MEM_OFFSET, "offset", SHOW_BYTES, NULL},
	    {CL_MEM_USES_SVM_POINTER, "uses SVM pointer", SHOW_BYTES, NULL},
	    {CL_MEM_PROPERTIES, "properties", SHOW_BYTES, NULL},
	};
	show_all(what, mem_info, m, NULL, names, COUNT(names));
}

/* Every object the app made but queues and events (cl_info.c's main does those): after its commands ran. */
static void objects_info(cl_context ctx, cl_device_id dev, cl_program prog, cl_kernel k, cl_mem buf,
			 const char *src)
{
	const struct info_name ctx_names[] = {
	    {CL_CONTEXT_REFERENCE_COUNT, "refs", SHOW_BYTES, NULL},
	    {CL_CONTEXT_NUM_DEVICES, "devices", SHOW_BYTES, NULL},
	    {CL_CONTEXT_DEVICES, "device", SHOW_HANDLE, dev},
	    {CL_CONTEXT_PROPERTIES, "properties", SHOW_BYTES, NULL},
	};
	printf("context:\n");
	show_all("context", ctx_info, ctx, NULL, ctx_names, COUNT(ctx_names));

	const struct info_name prog_names[] = {
	    {CL_PROGRAM_REFERENCE_COUNT, "refs", SHOW_BYTES, NULL},
	    {CL_PROGRAM_CONTEXT, "context", SHOW_HANDLE, ctx},
	    {CL_PROGRAM_NUM_DEVICES, "devices", SHOW_BYTES, NULL},
	    {CL_PROGRAM_DEVICES, "device", SHOW_HANDLE, dev},
	    {CL_PROGRAM_SOURCE, "source", SHOW_TEXT, NULL},
	    {CL_PROGRAM_IL, "IL", SHOW_BYTES, NULL},
	    {CL_PROGRAM_BINARY_SIZES, "binary sizes", SHOW_SIZE, NULL},
	    {CL_PROGRAM_NUM_KERNELS, "kernels", SHOW_BYTES, NULL},
	    {CL_PROGRAM_KERNEL_NAMES, "kernel names", SHOW_TEXT, NULL},
	    {CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT, "global ctors", SHOW_BYTES, NULL},
	    {CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT, "global dtors", SHOW_BYTES, NULL},
	};
	printf("program:\n");
	show_all("program", prog_info, prog, NULL, prog_names, COUNT(prog_names));
	char got[512] = "";
	cl_int src_rc = clGetProgramInfo(prog, CL_PROGRAM_SOURCE, sizeof(got), got, NULL);
	printf("  program source is the app's: %d %s\n", src_rc, strcmp(got, src) == 0 ? "yes" : "no");
	const struct info_name build_names[] = {
	    {CL_PROGRAM_BUILD_STATUS, "build status", SHOW_BYTES, NULL},
	    {CL_PROGRAM_BUILD_OPTIONS, "build options", SHOW_TEXT, NULL},
	    {CL_PROGRAM_BUILD_LOG, "build log", SHOW_TEXT, NULL},
	    {CL_PROGRAM_BINARY_TYPE, "binary type", SHOW_BYTES, NULL},
	    {CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, "global variables", SHOW_BYTES, NULL},
	};
	show_all("program build", build_info, prog, dev, build_names, COUNT(build_names));

	const struct info_name kernel_names[] = {
	    {CL_KERNEL_FUNCTION_NAME, "name", SHOW_TEXT, NULL},
	    {CL_KERNEL_NUM_ARGS, "args", SHOW_BYTES, NULL},
	    {CL_KERNEL_REFERENCE_COUNT, "refs", SHOW_BYTES, NULL},
	    {CL_KERNEL_CONTEXT, "context", SHOW_HANDLE, ctx},
	    {CL_KERNEL_PROGRAM, "program", SHOW_HANDLE, prog},
	    {CL_KERNEL_ATTRIBUTES, "attributes", SHOW_TEXT, NULL},
	};
	printf("kernel:\n");
	show_all("kernel", kernel_info, k, NULL, kernel_names, COUNT(kernel_names));
	const struct info_name wg_names[] = {
	    {CL_KERNEL_WORK_GROUP_SIZE, "work-group size", SHOW_BYTES, NULL},
	    {CL_KERNEL_COMPILE_WORK_GROUP_SIZE, "compile work-group size", SHOW_BYTES, NULL},
	    {CL_KERNEL_LOCAL_MEM_SIZE, "local memory", SHOW_BYTES, NULL},
	    {CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, "preferred multiple", SHOW_BYTES, NULL},
	    {CL_KERNEL_PRIVATE_MEM_SIZE, "private memory", SHOW_BYTES, NULL},
	};
	show_all("kernel work-group", wg_info, k, dev, wg_names, COUNT(wg_names));
	const struct info_name arg_names[] = {
	    {CL_KERNEL_ARG_ADDRESS_QUALIFIER, "address qualifier", SHOW_BYTES, NULL},
	    {CL_KERNEL_ARG_ACCESS_QUALIFIER, "access qualifier", SHOW_BYTES, NULL},
	    {CL_KERNEL_ARG_TYPE_NAME, "type name", SHOW_TEXT, NULL},
	    {CL_KERNEL_ARG_TYPE_QUALIFIER, "type qualifier", SHOW_BYTES, NULL},
	    {CL_KERNEL_ARG_NAME, "name", SHOW_TEXT, NULL},
	};
	show_all("kernel arg 0", arg_info, k, (const void *)(uintptr_t)0, arg_names, COUNT(arg_names));
	show_all("kernel arg 1 (none)", arg_info, k, (const void *)(uintptr_t)1, arg_names, 1);

	printf("buffer:\n");
	mem_all("buffer", buf, ctx, NULL);
	cl_int rc;
	cl_buffer_region region = {0, 16 * sizeof(int)};
	cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &region, &rc);
	printf("sub-buffer: %d\n", rc);
	if (sub) {
		mem_all("sub-buffer", sub, ctx, buf);
		clReleaseMemObject(sub);
	}

	cl_image_format fmt = {CL_RGBA, CL_UNORM_INT8};
	cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = 8, .image_height = 4};
	cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &rc);
	printf("image: %d\n", rc);
	if (img) {
		mem_all("image", img, ctx, NULL);
		const struct info_name image_names[] = {
		    {CL_IMAGE_FORMAT, "format", SHOW_BYTES, NULL},
		    {CL_IMAGE_ELEMENT_SIZE, "element size", SHOW_BYTES, NULL},
		    {CL_IMAGE_ROW_PITCH, "row pitch", SHOW_BYTES, NULL},
		    {CL_IMAGE_SLICE_PITCH, "slice pitch", SHOW_BYTES, NULL},
		    {CL_IMAGE_WIDTH, "width", SHOW_BYTES, NULL},
		    {CL_IMAGE_HEIGHT, "height", SHOW_BYTES, NULL},
		    {CL_IMAGE_DEPTH, "depth", SHOW_BYTES, NULL},
		    {CL_IMAGE_ARRAY_SIZE, "array size", SHOW_BYTES, NULL},
		    {CL_IMAGE_BUFFER, "buffer", SHOW_HANDLE, NULL},
		    {CL_IMAGE_NUM_MIP_LEVELS, "mip levels", SHOW_BYTES, NULL},
		    {CL_IMAGE_NUM_SAMPLES, "samples", SHOW_BYTES, NULL},
		};
		show_all("image", image_info, img, NULL, image_names, COUNT(image_names));
		clReleaseMemObject(img);
	}

	cl_sampler smp = clCreateSampler(ctx, CL_FALSE, CL_ADDRESS_CLAMP_TO_EDGE, CL_FILTER_NEAREST, &rc);
	printf("sampler: %d\n", rc);
	if (smp) {
		const struct info_name smp_names[] = {
		    {CL_SAMPLER_REFERENCE_COUNT, "refs", SHOW_BYTES, NULL},
		    {CL_SAMPLER_CONTEXT, "context", SHOW_HANDLE, ctx},
		    {CL_SAMPLER_NORMALIZED_COORDS, "normalized", SHOW_BYTES, NULL},
		    {CL_SAMPLER_ADDRESSING_MODE, "addressing", SHOW_BYTES, NULL},
		    {CL_SAMPLER_FILTER_MODE, "filter", SHOW_BYTES, NULL},
		    {CL_SAMPLER_PROPERTIES, "properties", SHOW_BYTES, NULL},
		};
		show_all("sampler", sampler_info, smp, NULL, smp_names, COUNT(smp_names));
		clReleaseSampler(smp);
	}
}

#undef COUNT

#endif
