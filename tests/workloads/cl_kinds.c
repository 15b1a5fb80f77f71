/* Every kind of enqueue the capture library times (issue #41), once each on
 * one in-order queue: image write, read, copy, copy to and from a buffer,
 * fill, map + unmap; buffer rect write, read, copy; a native kernel (when
 * the device runs them); markers (1.1 and 1.2) and a barrier; a migration;
 * SVM memcpy, fill, map + unmap, migrate (when the device has SVM). For each
 * enqueue the runtime accepted it prints "cmd TYPE BYTES" (CL_COMMAND_*
 * in hex, the bytes the profiler should report), the test's oracle
 * (test_opencl_kinds.c); the data is checked at the end ("cl_kinds: ok").
 * Usage: cl_kinds */
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 64
#define H 32

static int bad;

static void ok(const char *what, cl_int rc, unsigned type, unsigned long long bytes)
{
	if (rc == CL_SUCCESS)
		printf("cmd 0x%x %llu\n", type, bytes);
	else
		printf("%s: not run (%d)\n", what, rc);
}

static void CL_CALLBACK native(void *args)
{
	*(int *)args += 1;
}

int main(void)
{
	cl_platform_id plat;
	cl_device_id dev;
	cl_int rc;
	if (clGetPlatformIDs(1, &plat, NULL) != CL_SUCCESS || clGetDeviceIDs(plat, CL_DEVICE_TYPE_ALL, 1, &dev, NULL) != CL_SUCCESS) {
		fprintf(stderr, "cl_kinds: no OpenCL device\n");
		return 1;
	}
	cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &rc);
	cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &rc);
	if (!q) {
		fprintf(stderr, "cl_kinds: no queue (%d)\n", rc);
		return 1;
	}
	const cl_image_format fmt = {CL_RGBA, CL_UNSIGNED_INT8};
	const cl_image_desc desc = {.image_type = CL_MEM_OBJECT_IMAGE2D, .image_width = W, .image_height = H};
	cl_mem img = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &rc);
	cl_mem img2 = clCreateImage(ctx, CL_MEM_READ_WRITE, &fmt, &desc, NULL, &rc);
	cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * H * 4, NULL, &rc);
	cl_mem buf2 = clCreateBuffer(ctx, CL_MEM_READ_WRITE, W * H * 4, NULL, &rc);
	if (!img || !img2 || !buf || !buf2) {
		fprintf(stderr, "cl_kinds: cannot create images or buffers\n");
		return 1;
	}
	static unsigned char in[W * H * 4], out[W * H * 4];
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (unsigned char)(i * 7);
	const size_t origin[3] = {0, 0, 0}, region[3] = {W, H, 1}, half[3] = {W / 2, H, 1};
	const unsigned long long all = W * H * 4;

	ok("write image", clEnqueueWriteImage(q, img, CL_TRUE, origin, region, 0, 0, in, 0, NULL, NULL), 0x11F7, all);
	ok("copy image", clEnqueueCopyImage(q, img, img2, origin, origin, region, 0, NULL, NULL), 0x11F8, all);
	ok("copy image to buffer", clEnqueueCopyImageToBuffer(q, img2, buf, origin, region, 0, 0, NULL, NULL), 0x11F9, all);
	ok("read image", clEnqueueReadImage(q, img2, CL_TRUE, origin, half, 0, 0, out, 0, NULL, NULL), 0x11F6, all / 2);
	bad += memcmp(in, out, 4) != 0;
	ok("copy buffer to image", clEnqueueCopyBufferToImage(q, buf, img, 0, origin, region, 0, NULL, NULL), 0x11FA, all);
	const cl_uint color[4] = {1, 2, 3, 4};
	ok("fill image", clEnqueueFillImage(q, img2, color, origin, half, 0, NULL, NULL), 0x1208, all / 2);
	size_t rp = 0;
	void *p = clEnqueueMapImage(q, img2, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, origin, region, &rp, NULL, 0, NULL,
				    NULL, &rc);
	ok("map image", p ? CL_SUCCESS : rc, 0x11FC, all);
	if (p) {
		bad += ((unsigned char *)p)[0] != 1;
		ok("unmap image", clEnqueueUnmapMemObject(q, img2, p, 0, NULL, NULL), 0x11FD, all);
	}
	/* rects over the buffer seen as W*4 bytes x H rows */
	const size_t rregion[3] = {W * 4 / 2, H / 2, 1};
	const unsigned long long rbytes = W * 4 / 2 * (H / 2);
	ok("write buffer rect", clEnqueueWriteBufferRect(q, buf2, CL_TRUE, origin, origin, rregion, W * 4, 0, W * 4, 0, in, 0, NULL, NULL), 0x1202, rbytes);
	ok("copy buffer rect", clEnqueueCopyBufferRect(q, buf2, buf, origin, origin, rregion, W * 4, 0, W * 4, 0, 0, NULL, NULL), 0x1203, rbytes);
	memset(out, 0, sizeof(out));
	ok("read buffer rect", clEnqueueReadBufferRect(q, buf, CL_TRUE, origin, origin, rregion, W * 4, 0, W * 4, 0, out, 0, NULL, NULL), 0x1201, rbytes);
	bad += memcmp(in, out, 8) != 0;
	cl_device_exec_capabilities caps = 0;
	clGetDeviceInfo(dev, CL_DEVICE_EXECUTION_CAPABILITIES, sizeof(caps), &caps, NULL);
	if (caps & CL_EXEC_NATIVE_KERNEL) {
		int arg = 41;
		ok("native kernel", clEnqueueNativeKernel(q, native, &arg, sizeof(arg), 0, NULL, NULL, 0, NULL, NULL), 0x11F2, 0);
	} else {
		printf("native kernel: not run (the device runs none)\n");
	}
	cl_event m = NULL;
	ok("marker", clEnqueueMarkerWithWaitList(q, 0, NULL, &m), 0x11FE, 0);
	ok("barrier", clEnqueueBarrierWithWaitList(q, 1, &m, NULL), 0x1205, 0);
	cl_event m11 = NULL;
	ok("marker (1.1)", clEnqueueMarker(q, &m11), 0x11FE, 0);
	ok("migrate", clEnqueueMigrateMemObjects(q, 1, &buf, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL), 0x1206, all);
	cl_device_svm_capabilities svm = 0;
	if (clGetDeviceInfo(dev, CL_DEVICE_SVM_CAPABILITIES, sizeof(svm), &svm, NULL) == CL_SUCCESS && svm) {
		unsigned char *a = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0), *b = clSVMAlloc(ctx, CL_MEM_READ_WRITE, 4096, 0);
		if (a && b) {
			const unsigned char pat = 9;
			ok("svm fill", clEnqueueSVMMemFill(q, a, &pat, 1, 4096, 0, NULL, NULL), 0x120B, 4096);
			ok("svm memcpy", clEnqueueSVMMemcpy(q, CL_TRUE, b, a, 1024, 0, NULL, NULL), 0x120A, 1024);
			ok("svm map", clEnqueueSVMMap(q, CL_TRUE, CL_MAP_WRITE, b, 2048, 0, NULL, NULL), 0x120C, 2048);
			bad += b[0] != 9;
			ok("svm unmap", clEnqueueSVMUnmap(q, b, 0, NULL, NULL), 0x120D, 2048);
			const void *ptrs[1] = {a};
			ok("svm migrate", clEnqueueSVMMigrateMem(q, 1, ptrs, NULL, 0, 0, NULL, NULL), 0x120E, 4096);
		}
		clFinish(q);
		clSVMFree(ctx, a);
		clSVMFree(ctx, b);
	} else {
		printf("svm: not run (the device has no SVM)\n");
	}
	clFinish(q);
	clReleaseEvent(m);
	clReleaseEvent(m11);
	clReleaseMemObject(img);
	clReleaseMemObject(img2);
	clReleaseMemObject(buf);
	clReleaseMemObject(buf2);
	clReleaseCommandQueue(q);
	clReleaseContext(ctx);
	printf(bad ? "cl_kinds: WRONG data\n" : "cl_kinds: ok\n");
	return bad ? 3 : 0;
}
