/* HOG-like gradient histogram: kernel 1 computes per-pixel gradient
 * magnitude and orientation bin, kernel 2 sums them into 9-bin histograms
 * of 8x8-pixel cells (one work-item per cell). Checked against a CPU
 * reference. Usage: cl_hog [W] [H] [REPEATS]  -- exit 0 if correct. */
#include <math.h>

#include "cl_common.h"

#define CELL 8
#define BINS 9

static const char *src =
	"#define CELL 8\n#define BINS 9\n"
	"__kernel void gradient(__global const float *in, __global float *mag, __global int *bin, int w, int h) {\n"
	"  int x = get_global_id(0), y = get_global_id(1);\n"
	"  int xl = max(x - 1, 0), xr = min(x + 1, w - 1), yu = max(y - 1, 0), yd = min(y + 1, h - 1);\n"
	"  float gx = in[y * w + xr] - in[y * w + xl], gy = in[yd * w + x] - in[yu * w + x];\n"
	"  mag[y * w + x] = sqrt(gx * gx + gy * gy);\n"
	"  float ang = atan2(gy, gx); if (ang < 0) ang += M_PI_F;\n"
	"  int b = (int)(ang * BINS / M_PI_F); bin[y * w + x] = min(b, BINS - 1);\n"
	"}\n"
	"__kernel void cell_hist(__global const float *mag, __global const int *bin, __global float *hist, int w) {\n"
	"  int cx = get_global_id(0), cy = get_global_id(1), ncx = get_global_size(0);\n"
	"  float hst[BINS]; for (int i = 0; i < BINS; i++) hst[i] = 0.0f;\n"
	"  for (int dy = 0; dy < CELL; dy++) for (int dx = 0; dx < CELL; dx++) {\n"
	"    int p = (cy * CELL + dy) * w + cx * CELL + dx; hst[bin[p]] += mag[p]; }\n"
	"  for (int i = 0; i < BINS; i++) hist[(cy * ncx + cx) * BINS + i] = hst[i];\n"
	"}\n";

int main(int argc, char **argv)
{
	int w = argc > 1 ? atoi(argv[1]) : 1024;
	int h = argc > 2 ? atoi(argv[2]) : 768;
	int reps = argc > 3 ? atoi(argv[3]) : 4;
	if (w < CELL || h < CELL || w % CELL || h % CELL || w > 8192 || h > 8192 || reps < 1)
		return 2;
	size_t npix = (size_t)w * h, ncells = npix / (CELL * CELL);
	float *img = malloc(npix * sizeof(float)), *hist = malloc(ncells * BINS * sizeof(float));
	for (int y = 0; y < h; y++)
		for (int x = 0; x < w; x++)
			img[(size_t)y * w + x] = (float)((x * x + 3 * y) % 97) + (float)((x / 13 + y / 9) % 2) * 50.0f;
	struct clw wk;
	clw_init(&wk, "cl_hog");
	cl_int err;
	cl_command_queue q = clCreateCommandQueue(wk.ctx, wk.dev, 0, &err);
	CHECK(err);
	cl_program prog = clw_build(&wk, src, "");
	cl_kernel kg = clw_kernel(prog, "gradient"), kh = clw_kernel(prog, "cell_hist");
	cl_mem din = clw_buffer(&wk, CL_MEM_READ_ONLY, npix * sizeof(float), NULL);
	cl_mem dmag = clw_buffer(&wk, CL_MEM_READ_WRITE, npix * sizeof(float), NULL);
	cl_mem dbin = clw_buffer(&wk, CL_MEM_READ_WRITE, npix * sizeof(int), NULL);
	cl_mem dhist = clw_buffer(&wk, CL_MEM_WRITE_ONLY, ncells * BINS * sizeof(float), NULL);
	CHECK(clEnqueueWriteBuffer(q, din, CL_FALSE, 0, npix * sizeof(float), img, 0, NULL, NULL));
	CHECK(clSetKernelArg(kg, 0, sizeof(din), &din));
	CHECK(clSetKernelArg(kg, 1, sizeof(dmag), &dmag));
	CHECK(clSetKernelArg(kg, 2, sizeof(dbin), &dbin));
	CHECK(clSetKernelArg(kg, 3, sizeof(w), &w));
	CHECK(clSetKernelArg(kg, 4, sizeof(h), &h));
	CHECK(clSetKernelArg(kh, 0, sizeof(dmag), &dmag));
	CHECK(clSetKernelArg(kh, 1, sizeof(dbin), &dbin));
	CHECK(clSetKernelArg(kh, 2, sizeof(dhist), &dhist));
	CHECK(clSetKernelArg(kh, 3, sizeof(w), &w));
	size_t gpix[2] = {(size_t)w, (size_t)h}, gcell[2] = {(size_t)w / CELL, (size_t)h / CELL};
	for (int r = 0; r < reps; r++) {
		CHECK(clEnqueueNDRangeKernel(q, kg, 2, NULL, gpix, NULL, 0, NULL, NULL));
		CHECK(clEnqueueNDRangeKernel(q, kh, 2, NULL, gcell, NULL, 0, NULL, NULL));
	}
	CHECK(clEnqueueReadBuffer(q, dhist, CL_TRUE, 0, ncells * BINS * sizeof(float), hist, 0, NULL, NULL));
	CHECK(clFinish(q));
	/* CPU reference on a sample of cells; bins may differ at exact boundaries, so compare cell totals
	 * and require most bins to match. */
	int bad = 0, mism = 0, checked = 0;
	int ncx = w / CELL;
	for (size_t c = 0; c < ncells && !bad; c += 37) {
		int cx = (int)(c % (size_t)ncx), cy = (int)(c / (size_t)ncx);
		double ref[BINS] = {0}, tot = 0, got_tot = 0;
		for (int dy = 0; dy < CELL; dy++)
			for (int dx = 0; dx < CELL; dx++) {
				int x = cx * CELL + dx, y = cy * CELL + dy;
				int xl = x > 0 ? x - 1 : 0, xr = x < w - 1 ? x + 1 : w - 1;
				int yu = y > 0 ? y - 1 : 0, yd = y < h - 1 ? y + 1 : h - 1;
				float gx = img[(size_t)y * w + xr] - img[(size_t)y * w + xl];
				float gy = img[(size_t)yd * w + x] - img[(size_t)yu * w + x];
				float m = sqrtf(gx * gx + gy * gy), a = atan2f(gy, gx);
				if (a < 0)
					a += (float)M_PI;
				int b = (int)(a * BINS / (float)M_PI);
				ref[b < BINS - 1 ? b : BINS - 1] += m;
				tot += m;
			}
		for (int i = 0; i < BINS; i++) {
			got_tot += hist[c * BINS + i];
			if (fabs(ref[i] - hist[c * BINS + i]) > 1e-2 * fabs(ref[i]) + 1e-2)
				mism++;
			checked++;
		}
		if (fabs(tot - got_tot) > 1e-3 * tot + 1e-3) {
			fprintf(stderr, "cl_hog: cell %zu total %f vs %f\n", c, got_tot, tot);
			bad = 1;
		}
	}
	if (mism > checked / 50) {
		fprintf(stderr, "cl_hog: %d of %d bins differ from the reference\n", mism, checked);
		bad = 1;
	}
	printf("cl_hog: %dx%d x%d on %s: %s\n", w, h, reps, wk.name, bad ? "WRONG" : "ok");
	clReleaseMemObject(din);
	clReleaseMemObject(dmag);
	clReleaseMemObject(dbin);
	clReleaseMemObject(dhist);
	clReleaseKernel(kg);
	clReleaseKernel(kh);
	clReleaseProgram(prog);
	clReleaseCommandQueue(q);
	clw_free(&wk);
	free(img);
	free(hist);
	return bad;
}
