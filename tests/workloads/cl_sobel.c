/* Sobel edge detection (Mali paper's image-processing workload) on a
 * generated W x H grey image, the output mapped back with
 * clEnqueueMapBuffer; checked against a CPU reference.
 * Usage: cl_sobel [W] [H] [REPEATS]  -- exit 0 if the result is correct. */
#include <math.h>

#include "cl_common.h"

static const char *src =
	"__kernel void sobel(__global const uchar *in, __global float *out, int w, int h) {\n"
	"  int x = get_global_id(0), y = get_global_id(1);\n"
	"  if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1) { out[y * w + x] = 0.0f; return; }\n"
	"  #define P(dx, dy) ((float)in[(y + (dy)) * w + x + (dx)])\n"
	"  float gx = -P(-1,-1) - 2.0f*P(-1,0) - P(-1,1) + P(1,-1) + 2.0f*P(1,0) + P(1,1);\n"
	"  float gy = -P(-1,-1) - 2.0f*P(0,-1) - P(1,-1) + P(-1,1) + 2.0f*P(0,1) + P(1,1);\n"
	"  out[y * w + x] = sqrt(gx * gx + gy * gy);\n"
	"}\n";

static float ref_at(const unsigned char *in, int w, int h, int x, int y)
{
	if (x < 1 || y < 1 || x >= w - 1 || y >= h - 1)
		return 0;
#define P(dx, dy) ((float)in[(y + (dy)) * w + x + (dx)])
	float gx = -P(-1, -1) - 2.0f * P(-1, 0) - P(-1, 1) + P(1, -1) + 2.0f * P(1, 0) + P(1, 1);
	float gy = -P(-1, -1) - 2.0f * P(0, -1) - P(1, -1) + P(-1, 1) + 2.0f * P(0, 1) + P(1, 1);
#undef P
	return sqrtf(gx * gx + gy * gy);
}

int main(int argc, char **argv)
{
	int w = argc > 1 ? atoi(argv[1]) : 1024;
	int h = argc > 2 ? atoi(argv[2]) : 768;
	int reps = argc > 3 ? atoi(argv[3]) : 5;
	if (w < 8 || h < 8 || w > 8192 || h > 8192 || reps < 1)
		return 2;
	size_t npix = (size_t)w * h;
	unsigned char *img = malloc(npix);
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			img[(size_t)y * w + x] = (unsigned char)(((x / 16 + y / 16) % 2) * 160 + (x * 7 + y * 3) % 64);
	struct clw wk;
	clw_init(&wk, "cl_sobel");
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(wk.ctx, wk.dev, 0, &err);
	CHECK(err);
	cl_program prog = clw_build(&wk, src, "");
	cl_kernel k = clw_kernel(prog, "sobel");
	cl_mem din = clw_buffer(&wk, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, npix, img);
	cl_mem dout = clw_buffer(&wk, CL_MEM_WRITE_ONLY, npix * sizeof(float), NULL);
	CHECK(clSetKernelArg(k, 0, sizeof(din), &din));
	CHECK(clSetKernelArg(k, 1, sizeof(dout), &dout));
	CHECK(clSetKernelArg(k, 2, sizeof(w), &w));
	CHECK(clSetKernelArg(k, 3, sizeof(h), &h));
	size_t global[2] = {(size_t)w, (size_t)h};
	for (int r = 0; r < reps; r++)
		CHECK(clEnqueueNDRangeKernel(q, k, 2, NULL, global, NULL, 0, NULL, NULL));
	float *out = clEnqueueMapBuffer(q, dout, CL_TRUE, CL_MAP_READ, 0, npix * sizeof(float), 0, NULL, NULL, &err);
	CHECK(err);
	int bad = 0;
	for (int y = 0; y < h && !bad; y += 7)
		for (int x = 0; x < w; x += 5) {
			float ref = ref_at(img, w, h, x, y), got = out[(size_t)y * w + x];
			if (fabsf(ref - got) > 1e-3f * fabsf(ref) + 1e-3f) {
				fprintf(stderr, "cl_sobel: mismatch at %d,%d: %f vs %f\n", x, y, got, ref);
				bad = 1;
				break;
			}
		}
	CHECK(clEnqueueUnmapMemObject(q, dout, out, 0, NULL, NULL));
	CHECK(clFinish(q));
	printf("cl_sobel: %dx%d x%d on %s: %s\n", w, h, reps, wk.name, bad ? "WRONG" : "ok");
	clReleaseMemObject(din);
	clReleaseMemObject(dout);
	clReleaseKernel(k);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clw_free(&wk);
	free(img);
	return bad;
}
