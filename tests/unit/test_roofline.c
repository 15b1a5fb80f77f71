/* Unit tests of collector/roofline (the model), the roofline and sensitivity
 * charts (parsed back from the SVG), the W/Q models and the PNG step. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include "calib/calib_model.h"
#include "calib/calib_phys.h"
#include "report/roofline_plot.h"
#include "report/sens_plot.h"
#include "report/sensitivity.h"
#include "report/svg_layout.h"
#include "report/svg_png.h"
#include "report/work_model.h"
#include "roofline/roofline.h"

static void basic_roof(struct roofline *r)
{
	memset(r, 0, sizeof(*r));
	snprintf(r->device, sizeof(r->device), "test");
	assert_int_equal(roofline_add(r, ROOFLINE_COMPUTE, "peak", 100, "peak_gflops"), 0);
	assert_int_equal(roofline_add(r, ROOFLINE_COMPUTE, "no SIMD", 25, "gflops_float1"), 0);
	assert_int_equal(roofline_add(r, ROOFLINE_BANDWIDTH, "DRAM", 10, "peak_gbps"), 0);
	assert_int_equal(roofline_add(r, ROOFLINE_BANDWIDTH, "triad", 8, "bw_triad_gbps"), 0);
}

static void test_roofline_ridge_and_attainable(void **state)
{
	(void)state;
	struct roofline r;
	basic_roof(&r);
	assert_true(roofline_complete(&r));
	assert_float_equal(roofline_pi(&r), 100, 1e-12);
	assert_float_equal(roofline_beta(&r), 10, 1e-12);
	assert_float_equal(roofline_ridge(&r), 10, 1e-12);
	assert_float_equal(roofline_attainable(&r, 1), 10, 1e-12);    /* beta * I */
	assert_float_equal(roofline_attainable(&r, 10), 100, 1e-12);  /* the ridge */
	assert_float_equal(roofline_attainable(&r, 1000), 100, 1e-12); /* pi */
	assert_float_equal(roofline_attainable(&r, 0), 0, 0);
	assert_float_equal(roofline_attainable_under(25, 8, 2), 16, 1e-12);
	assert_int_equal(roofline_add(&r, ROOFLINE_COMPUTE, "bad", -1, ""), -EINVAL);
	assert_int_equal(roofline_add(&r, ROOFLINE_COMPUTE, "bad", NAN, ""), -EINVAL);
}

static void test_roofline_place_boundedness(void **state)
{
	(void)state;
	struct roofline r;
	basic_roof(&r);
	struct roofline_point p;
	/* I = 1 FLOP/B, 1 GFLOP/s achieved: memory-bound, attainable 10, 10% */
	assert_int_equal(roofline_place(&r, 1e9, 1e9, 1, &p), 0);
	assert_float_equal(p.intensity, 1, 1e-12);
	assert_float_equal(p.achieved, 1, 1e-12);
	assert_float_equal(p.attainable, 10, 1e-12);
	assert_float_equal(p.fraction, 0.1, 1e-12);
	assert_int_equal(p.bound, ROOFLINE_MEMORY_BOUND);
	/* I = 20: compute-bound, 50 GFLOP/s of 100 */
	assert_int_equal(roofline_place(&r, 100e9, 5e9, 2, &p), 0);
	assert_float_equal(p.intensity, 20, 1e-12);
	assert_float_equal(p.achieved, 50, 1e-12);
	assert_float_equal(p.attainable, 100, 1e-12);
	assert_float_equal(p.fraction, 0.5, 1e-12);
	assert_int_equal(p.bound, ROOFLINE_COMPUTE_BOUND);
	assert_string_equal(roofline_bound_name(p.bound), "compute-bound");
	/* exactly at the ridge counts as compute-bound */
	assert_int_equal(roofline_place(&r, 10, 1, 1, &p), 0);
	assert_int_equal(p.bound, ROOFLINE_COMPUTE_BOUND);
}

static void test_roofline_place_rejects_bad_input(void **state)
{
	(void)state;
	struct roofline r;
	basic_roof(&r);
	struct roofline_point p;
	assert_int_equal(roofline_place(&r, 0, 1, 1, &p), -EINVAL);
	assert_int_equal(roofline_place(&r, 1, 0, 1, &p), -EINVAL);
	assert_int_equal(roofline_place(&r, 1, 1, 0, &p), -EINVAL);
	assert_int_equal(roofline_place(&r, INFINITY, 1, 1, &p), -EINVAL);
	struct roofline empty = {0};
	assert_false(roofline_complete(&empty));
	assert_float_equal(roofline_ridge(&empty), 0, 0);
	assert_int_equal(roofline_place(&empty, 1, 1, 1, &p), -ENODATA);
}

static void test_roofline_walls_dedupe(void **state)
{
	(void)state;
	const char *names[] = {"L1", "L2", "L3"};
	double bytes[] = {4000, 1000, 1001}; /* L3 traffic ~ L2: no new wall */
	struct roofline_wall w[4];
	size_t n = roofline_walls(8000, names, bytes, 3, w, 4);
	assert_int_equal(n, 2);
	assert_string_equal(w[0].name, "L1");
	assert_float_equal(w[0].intensity, 2, 1e-12);
	assert_string_equal(w[1].name, "L2");
	assert_float_equal(w[1].intensity, 8, 1e-12);
	assert_int_equal(roofline_walls(0, names, bytes, 3, w, 4), 0);
}

static void test_roofline_from_calib_ceilings(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	snprintf(m->device, sizeof(m->device), "Mali-T628");
	assert_int_equal(calib_model_put(m, "peak_gflops", 60, "GFLOP/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "peak_gbps", 6, "GB/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "bw_copy_gbps", 5, "GB/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "compute_units", 4, "count", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "clock_mhz", 500, "MHz", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "tput_float_mad_per_cycle_cu", 8, "ops/cycle/CU", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "cpu_peak_gflops", 3, "GFLOP/s", "x", 0, 1), 0);
	struct roofline g, c;
	assert_int_equal(roofline_from_calib(m, false, &g), 4);
	assert_float_equal(roofline_pi(&g), 60, 1e-12);
	assert_float_equal(roofline_beta(&g), 6, 1e-12);
	bool mad = false;
	for (size_t i = 0; i < g.n; i++)
		if (strcmp(g.c[i].source, "tput_float_mad_per_cycle_cu") == 0) {
			mad = true;
			assert_float_equal(g.c[i].value, 8 * 2 * 4 * 500 / 1e3, 1e-9); /* 32 GFLOP/s */
		}
	assert_true(mad);
	assert_non_null(strstr(g.device, "Mali-T628"));
	assert_int_equal(roofline_from_calib(m, true, &c), 1);
	assert_false(roofline_complete(&c)); /* no CPU bandwidth: no roof */
	free(m);
}

/* A calibrated ceiling above the physical peak is never a roof: left out, and the
 * physical peak stands in when no possible ceiling of that kind is left. */
static void test_roofline_from_calib_leaves_out_impossible_ceilings(void **state)
{
	(void)state;
	struct calib_model *m = calloc(1, sizeof(*m));
	assert_non_null(m);
	assert_int_equal(calib_model_put(m, "peak_gflops", 273, "GFLOP/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "phys_peak_gflops", 166.4, "GFLOP/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "peak_gbps", 20, "GB/s", "x", 0, 1), 0);
	assert_int_equal(calib_model_put(m, "phys_peak_gbps", 665, "GB/s", "x", 0, 1), 0);
	struct roofline g;
	assert_int_equal(roofline_from_calib(m, false, &g), 2);
	assert_float_equal(roofline_pi(&g), 166.4, 1e-12);
	assert_float_equal(roofline_beta(&g), 20, 1e-12);
	bool phys = false;
	for (size_t i = 0; i < g.n; i++)
		if (g.c[i].kind == ROOFLINE_COMPUTE) {
			assert_string_equal(g.c[i].source, "phys_peak_gflops");
			assert_non_null(strstr(g.c[i].name, "impossible"));
			phys = true;
		}
	assert_true(phys);
	/* a possible compute ceiling is kept instead, the impossible one still left out */
	assert_int_equal(calib_model_put(m, "gflops_float1", 40, "GFLOP/s", "x", 0, 1), 0);
	assert_int_equal(roofline_from_calib(m, false, &g), 2);
	assert_float_equal(roofline_pi(&g), 40, 1e-12);
	free(m);
}

/* Physical peaks from what the machine says: cores x clock x lanes x FMA pipes x 2
 * for CPUs, published per-core rates for GPUs in the table, unknown otherwise. */
static void test_calib_phys_peaks(void **state)
{
	(void)state;
	char method[CALIB_METHOD_MAX];
	struct calib_phys_cpu cpu = {.cores = 2, .mhz = 2600, .isa = "avx512f", .fp32_lanes = 16};
	assert_float_equal(calib_phys_cpu_gflops(&cpu, method, sizeof(method)), 2 * 2600 * 16 * 2 * 2 / 1e3, 1e-9);
	assert_non_null(strstr(method, "assumed"));
	assert_non_null(strstr(method, "avx512f"));
	/* bandwidth: only what the platform states about its memory, else none (never the L1 ports) */
	assert_true(isnan(calib_phys_cpu_gbps(&cpu, method, sizeof(method))));
	assert_non_null(strstr(method, "no bound rather than a cache"));
	/* an SMBIOS 3.x type 17 entry (DSP0134 7.18): 64-bit data width, 16 GiB, speed 4800, configured 4400 MT/s */
	unsigned char t17[0x54] = {17, 0x54, 0x10, 0x00};
	t17[0x08] = 72, t17[0x0A] = 64;		  /* total width (ECC), data width */
	t17[0x0C] = 0x00, t17[0x0D] = 0x40;	  /* 16384 MB */
	t17[0x15] = 4800 & 0xff, t17[0x16] = 4800 >> 8; /* speed */
	t17[0x20] = 4400 & 0xff, t17[0x21] = 4400 >> 8; /* configured memory speed */
	assert_float_equal(calib_phys_smbios17_mbps(t17, sizeof(t17)), 4400 * 8, 1e-9);
	t17[0x20] = t17[0x21] = 0; /* configured speed unknown: the rated speed */
	assert_float_equal(calib_phys_smbios17_mbps(t17, sizeof(t17)), 4800 * 8, 1e-9);
	t17[0x0C] = t17[0x0D] = 0; /* empty slot */
	assert_float_equal(calib_phys_smbios17_mbps(t17, sizeof(t17)), 0, 1e-9);
	assert_float_equal(calib_phys_smbios17_mbps(t17, 3), 0, 1e-9);
	cpu.mem_mbps = 2 * 4400 * 8, cpu.mem_devices = 2; /* two channels of DDR5-4400 */
	assert_float_equal(calib_phys_cpu_gbps(&cpu, method, sizeof(method)), 70.4, 1e-9);
	assert_non_null(strstr(method, "SMBIOS type 17"));
	cpu.mhz = NAN;
	assert_true(isnan(calib_phys_cpu_gflops(&cpu, method, sizeof(method))));
	assert_non_null(strstr(method, "no clock"));
	/* Arndale Octa: Mali-T628, the 4-core OpenCL device at 533 MHz: 4 x 533 x 34 */
	assert_float_equal(calib_phys_gpu_gflops("Mali-T628", 4, 533, method, sizeof(method)), 4 * 533 * 34 / 1e3,
			   1e-9);
	assert_non_null(strstr(method, "AnandTech"));
	assert_true(isnan(calib_phys_gpu_gflops("Frobnicator 9000", 4, 533, method, sizeof(method))));
	assert_non_null(strstr(method, "no published per-core rate"));
	assert_null(calib_phys_gpu_lookup(NULL));
}

/* ---------------------------------------------------------------- SVG parse-back */

static double attr(const char *tag, const char *name)
{
	char key[32];
	snprintf(key, sizeof(key), " %s=\"", name);
	const char *p = strstr(tag, key);
	assert_non_null(p);
	return strtod(p + strlen(key), NULL);
}

/* Up to max tags starting with "<text" or "<circle" and containing needle: their starts. */
static size_t find_tags(const char *svg, const char *open, const char *needle, const char **out, size_t max)
{
	size_t n = 0;
	for (const char *p = strstr(svg, open); p && n < max; p = strstr(p + 1, open)) {
		const char *end = strchr(p, '>');
		assert_non_null(end);
		size_t len = (size_t)(end - p);
		char *tag = strndup(p, len);
		if (strstr(tag, needle))
			out[n++] = p;
		free(tag);
	}
	return n;
}

/* noinline: inlined, GCC 12 takes the returned buffer for the local `buf` that
 * open_memstream() filled and warns of dangling pointers (-Wdangling-pointer). */
__attribute__((noinline)) static char *render_roofline(const struct roofline *r, const struct rl_dot *d, size_t nd,
			     const struct roofline_wall *w, size_t nw)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_non_null(f);
	assert_int_equal(roofline_plot_svg(f, r, w, nw, d, nd, "test <chart>"), 0);
	assert_int_equal(fclose(f), 0);
	return buf;
}

static void test_roofline_svg_axes_and_dots(void **state)
{
	(void)state;
	struct roofline r;
	basic_roof(&r);
	struct rl_dot d[2];
	memset(d, 0, sizeof(d));
	snprintf(d[0].name, sizeof(d[0].name), "k&mem");
	assert_int_equal(roofline_place(&r, 1e9, 2e9, 1, &d[0].p), 0); /* I 0.5, 1 GFLOP/s */
	snprintf(d[1].name, sizeof(d[1].name), "compute");
	assert_int_equal(roofline_place(&r, 300e9, 10e9, 10, &d[1].p), 0); /* I 30, 30 GFLOP/s */
	struct roofline_wall w = {.name = "L1", .intensity = 3};
	char *svg = render_roofline(&r, d, 2, &w, 1);
	assert_non_null(strstr(svg, "test &lt;chart&gt;")); /* title escaped */
	assert_non_null(strstr(svg, "data-name=\"k&amp;mem\""));
	/* x ticks: decades, equally spaced on the log axis */
	const char *xt[16], *yt[16];
	size_t nx = find_tags(svg, "<text", "class=\"xtick\"", xt, 16);
	size_t ny = find_tags(svg, "<text", "class=\"ytick\"", yt, 16);
	assert_true(nx >= 4);
	assert_true(ny >= 3);
	double x0 = attr(xt[0], "x"), v0 = attr(xt[0], "data-v");
	double x1 = attr(xt[nx - 1], "x"), v1 = attr(xt[nx - 1], "data-v");
	double step = (x1 - x0) / log10(v1 / v0);
	for (size_t i = 0; i < nx; i++) {
		double v = attr(xt[i], "data-v");
		assert_float_equal(log10(v), round(log10(v)), 1e-9); /* a decade */
		assert_float_equal(attr(xt[i], "x"), x0 + step * log10(v / v0), 0.02);
	}
	double y0 = attr(yt[0], "y") - 4, w0 = attr(yt[0], "data-v"); /* labels sit 4 px below the tick */
	double y1 = attr(yt[ny - 1], "y") - 4, w1 = attr(yt[ny - 1], "data-v");
	assert_true(y1 < y0); /* up is larger */
	/* the axes span the dots, the ridge and the wall */
	assert_true(v0 <= 0.5 && v1 >= 30);
	/* dots: pixel position read back through the tick scale gives I and P */
	const char *dots[4];
	assert_int_equal(find_tags(svg, "<circle", "class=\"dot", dots, 4), 2);
	for (size_t i = 0; i < 2; i++) {
		double I = v0 * pow(10, (attr(dots[i], "cx") - x0) / step);
		double P = w0 * pow(10, (attr(dots[i], "cy") - y0) / (y1 - y0) * log10(w1 / w0));
		assert_float_equal(I / d[i].p.intensity, 1, 0.005);
		assert_float_equal(P / d[i].p.achieved, 1, 0.005);
		assert_float_equal(attr(dots[i], "data-i"), d[i].p.intensity, 1e-6);
	}
	/* the roof's corner is at the ridge point (10, 100) */
	const char *roof = strstr(svg, "class=\"roof\"");
	assert_non_null(roof);
	const char *pts = strstr(svg, "<polyline");
	const char *last = NULL;
	for (; pts && pts < roof; pts = strstr(pts + 1, "<polyline"))
		last = pts;
	assert_non_null(last);
	double ax, ay, bx, by;
	assert_int_equal(sscanf(strstr(last, "points=\"") + 8, "%lf,%lf %lf,%lf", &ax, &ay, &bx, &by), 4);
	assert_float_equal(v0 * pow(10, (bx - x0) / step), 10, 0.05);
	assert_float_equal(w0 * pow(10, (by - y0) / (y1 - y0) * log10(w1 / w0)), 100, 0.5);
	/* one wall, one lower bandwidth and one lower compute ceiling */
	assert_non_null(strstr(svg, "class=\"wall\""));
	assert_non_null(strstr(svg, "class=\"ceiling bandwidth\""));
	assert_non_null(strstr(svg, "class=\"ceiling compute\""));
	free(svg);
	struct roofline empty = {0};
	FILE *f = fopen("/dev/null", "w");
	assert_int_equal(roofline_plot_svg(f, &empty, NULL, 0, NULL, 0, "x"), -ENODATA);
	fclose(f);
}

/* ---------------------------------------------------------------- sensitivity */

/* The seed's example: Lambda*alpha0 = 0.2 with alpha0 = 100 ns: +50 ns costs 10%. */
/* The chart's labels inside the plot (class "...-label"), as the layout estimates their boxes. */
static size_t chart_labels(const char *svg, struct svg_label *out, size_t max)
{
	const char *t[SVG_LABELS_MAX];
	size_t n = find_tags(svg, "<text", "-label", t, SVG_LABELS_MAX), k = 0;
	for (size_t i = 0; i < n && k < max; i++) {
		struct svg_label *l = &out[k++];
		memset(l, 0, sizeof(*l));
		l->x = attr(t[i], "x");
		l->y = attr(t[i], "y");
		l->size = (int)attr(t[i], "font-size");
		l->anchor = strstr(t[i], "text-anchor=\"end\"") && strstr(t[i], "text-anchor=\"end\"") < strchr(t[i], '>')
				    ? "end"
				    : "start";
		const char *b = strchr(t[i], '>') + 1, *e = strstr(b, "</text>");
		snprintf(l->text, sizeof(l->text), "%.*s", (int)(e - b), b);
	}
	return k;
}

static void assert_no_overlap(const struct svg_label *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (size_t j = i + 1; j < n; j++) {
			double a0, a1, a2, a3, b0, b1, b2, b3;
			svg_label_box(&l[i], &a0, &a1, &a2, &a3);
			svg_label_box(&l[j], &b0, &b1, &b2, &b3);
			if (a0 < b2 && b0 < a2 && a1 < b3 && b1 < a3)
				fail_msg("labels overlap: '%s' at (%.1f, %.1f) and '%s' at (%.1f, %.1f)", l[i].text, l[i].x,
					 l[i].y, l[j].text, l[j].x, l[j].y);
		}
}

/* Close ceilings (their labels wanted the same place), several dots, one above its roof. */
static void test_roofline_svg_labels_do_not_overlap(void **state)
{
	(void)state;
	struct roofline r;
	memset(&r, 0, sizeof(r));
	snprintf(r.device, sizeof(r.device), "test");
	assert_int_equal(roofline_add(&r, ROOFLINE_COMPUTE, "peak", 100, "peak_gflops"), 0);
	assert_int_equal(roofline_add(&r, ROOFLINE_COMPUTE, "float4", 97, "gflops_float4"), 0);
	assert_int_equal(roofline_add(&r, ROOFLINE_COMPUTE, "float2", 94, "gflops_float2"), 0);
	assert_int_equal(roofline_add(&r, ROOFLINE_BANDWIDTH, "DRAM", 10, "peak_gbps"), 0);
	assert_int_equal(roofline_add(&r, ROOFLINE_BANDWIDTH, "copy", 9.8, "bw_copy_gbps"), 0);
	assert_int_equal(roofline_add(&r, ROOFLINE_BANDWIDTH, "triad", 9.6, "bw_triad_gbps"), 0);
	struct rl_dot d[3];
	memset(d, 0, sizeof(d));
	snprintf(d[0].name, sizeof(d[0].name), "matmul");
	assert_int_equal(roofline_place(&r, 1e9, 2e9, 1, &d[0].p), 0);
	snprintf(d[1].name, sizeof(d[1].name), "matmul_coarse");
	assert_int_equal(roofline_place(&r, 1.05e9, 2e9, 1, &d[1].p), 0); /* next to the first */
	snprintf(d[2].name, sizeof(d[2].name), "too_fast");
	assert_int_equal(roofline_place(&r, 100e9, 2e9, 1, &d[2].p), 0); /* 100 GFLOP/s at I = 50... */
	assert_int_equal(roofline_place(&r, 100e9, 20e9, 0.5, &d[2].p), 0); /* ...200 GFLOP/s at I = 5: above */
	assert_true(d[2].p.fraction > 1);
	char *svg = render_roofline(&r, d, 3, NULL, 0);
	struct svg_label l[SVG_LABELS_MAX];
	size_t n = chart_labels(svg, l, SVG_LABELS_MAX);
	assert_true(n >= 2 + 2 + 3 + 3); /* 2 ceilings, 2 legend entries, pi, beta, ridge, 3 dots */
	assert_no_overlap(l, n);
	/* inside the picture */
	for (size_t i = 0; i < n; i++) {
		double x0, y0, x1, y1;
		svg_label_box(&l[i], &x0, &y0, &x1, &y1);
		assert_true(x0 >= 0 && x1 <= RL_PLOT_WIDTH && y0 >= 0 && y1 <= RL_PLOT_HEIGHT);
	}
	/* the dot above its roof says so */
	const char *above[2];
	assert_int_equal(find_tags(svg, "<text", "above-roof", above, 2), 1);
	assert_non_null(strstr(svg, "too_fast: ABOVE its roof"));
	free(svg);
}

static void test_sensitivity_seed_example(void **state)
{
	(void)state;
	struct sens_row r = {.W = 100, .D = 100, .m = 1, .alpha0 = 100};
	/* lambda = 100; T0 = 100*100 + C; Lambda*alpha0 = 10000 / T0 = 0.2 -> C = 40000 */
	r.C = 40000;
	assert_int_equal(sens_compute(&r), 0);
	assert_float_equal(r.lambda, 100, 1e-12);
	assert_float_equal(r.mem_share, 0.2, 1e-12);
	assert_float_equal(r.Lambda, 0.002, 1e-15);
	assert_float_equal(r.delta10, 50, 1e-9);
	assert_float_equal(sens_slowdown(&r, 1, 50), 0.1, 1e-12);
	assert_float_equal(r.w_over_d, 1, 1e-12);
	/* more issue slots lower lambda when W > D */
	struct sens_row q = {.W = 400, .D = 100, .m = 2, .alpha0 = 100, .C = 0};
	assert_int_equal(sens_compute(&q), 0);
	assert_float_equal(q.lambda, 250, 1e-12);
	assert_true(sens_slowdown(&q, 4, 100) < sens_slowdown(&q, 1, 100) + 1e-12);
	assert_float_equal(sens_slowdown(&q, 1, 100), 1.0, 1e-12); /* all memory: +100% latency = +100% */
	struct sens_row bad = {.W = 1, .D = 2, .m = 1, .alpha0 = 1};
	assert_int_equal(sens_compute(&bad), -EINVAL);
}

static void test_sensitivity_svg_curves(void **state)
{
	(void)state;
	struct sens_row r = {.W = 100, .D = 100, .m = 1, .alpha0 = 100, .C = 40000};
	snprintf(r.name, sizeof(r.name), "t1");
	assert_int_equal(sens_compute(&r), 0);
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	assert_int_equal(sens_plot_svg(f, &r, "ns", 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "class=\"curve m1\""));
	assert_non_null(strstr(buf, "class=\"curve m2\""));
	assert_non_null(strstr(buf, "class=\"curve m4\""));
	assert_non_null(strstr(buf, "+50 ns costs 10 %"));
	free(buf);
	/* a calibrated m that is not 1, 2 or 4: its curve is drawn, so the 10 % marker sits on a plotted line */
	struct sens_row q = {.W = 4000, .D = 100, .m = 12, .alpha0 = 100, .C = 40000};
	snprintf(q.name, sizeof(q.name), "t2");
	assert_int_equal(sens_compute(&q), 0);
	f = open_memstream(&buf, &len);
	assert_int_equal(sens_plot_svg(f, &q, "cycles", 1), 0);
	fclose(f);
	assert_non_null(strstr(buf, "class=\"curve m12\""));
	assert_float_equal(sens_slowdown(&q, 12, q.delta10), 0.1, 1e-9);
	const char *c[2];
	assert_int_equal(find_tags(buf, "<circle", "delta10", c, 2), 1);
	struct svg_label l[SVG_LABELS_MAX];
	size_t n = chart_labels(buf, l, SVG_LABELS_MAX);
	assert_true(n >= 2); /* the marker's label and the 10 % line's */
	assert_no_overlap(l, n);
	for (size_t i = 0; i < n; i++) {
		double x0, y0, x1, y1;
		svg_label_box(&l[i], &x0, &y0, &x1, &y1);
		assert_true(x0 >= 0 && x1 <= SENS_PLOT_WIDTH && y0 >= 0 && y1 <= SENS_PLOT_HEIGHT);
	}
	free(buf);
}

/* ---------------------------------------------------------------- work models */

static void test_work_model_kernel_file_lines(void **state)
{
	(void)state;
	struct kernel_model_entry e;
	char err[200];
	assert_int_equal(kernel_model_parse_line("matmul ops=512 bytes=2052 # naive\n", &e, err, sizeof(err)), 1);
	assert_string_equal(e.name, "matmul");
	assert_float_equal(e.ops, 512, 0);
	assert_float_equal(e.bytes, 2052, 0);
	assert_int_equal(kernel_model_parse_line("  # only a comment\n", &e, err, sizeof(err)), 0);
	assert_int_equal(kernel_model_parse_line("\n", &e, err, sizeof(err)), 0);
	assert_int_equal(kernel_model_parse_line("k ops=1\n", &e, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "bytes"));
	assert_int_equal(kernel_model_parse_line("k ops=x bytes=1\n", &e, err, sizeof(err)), -EINVAL);
	assert_int_equal(kernel_model_parse_line("k ops=1 bytes=1 speed=3\n", &e, err, sizeof(err)), -EINVAL);
}

static void test_work_model_cpu_events(void **state)
{
	(void)state;
	struct work_cpu w;
	memset(&w, 0, sizeof(w));
	int best = 0;
	work_cpu_add(&w, "task-clock", 2000000000ull, &best); /* 2 s */
	work_cpu_add(&w, "fp_arith_inst_retired.256b_packed_double", 100, &best);
	work_cpu_add(&w, "VFP_SPEC", 10, &best);
	work_cpu_add(&w, "cache-misses", 1000, &best); /* worse than LLC: replaced */
	work_cpu_add(&w, "LLC-load-misses", 30, &best);
	work_cpu_add(&w, "LLC-store-misses", 10, &best);
	work_cpu_add(&w, "cycles", 12345, &best);
	work_cpu_finish(&w, 64);
	assert_true(w.have_flops && w.have_bytes);
	assert_float_equal(w.W, 410, 0);
	assert_float_equal(w.Q, 40 * 64, 0);
	assert_float_equal(w.seconds, 2, 1e-12);
	assert_string_equal(w.bytes_from, "LLC-load-misses+LLC-store-misses");
	struct work_event e;
	assert_false(work_event_classify("task-clock", &e));
	assert_true(work_event_classify("L2D_CACHE_REFILL", &e));
	assert_float_equal(e.lines_per_count, 1, 0);
}

/* ---------------------------------------------------------------- PNG */

static void test_roofline_png_size(void **state)
{
	(void)state;
	if (system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
		print_message("rsvg-convert not installed (apt-get install librsvg2-bin): PNG not tested\n");
		skip();
	}
	struct roofline r;
	basic_roof(&r);
	struct rl_dot d = {.name = "k"};
	assert_int_equal(roofline_place(&r, 1e9, 2e9, 1, &d.p), 0);
	char dir[] = "/tmp/roofline-png-XXXXXX";
	assert_non_null(mkdtemp(dir));
	char svg[128], png[128];
	snprintf(svg, sizeof(svg), "%s/r.svg", dir);
	snprintf(png, sizeof(png), "%s/r.png", dir);
	FILE *f = fopen(svg, "w");
	assert_non_null(f);
	assert_int_equal(roofline_plot_svg(f, &r, NULL, 0, &d, 1, "png test"), 0);
	fclose(f);
	assert_int_equal(svg_to_png(svg, png), 0);
	uint32_t w = 0, h = 0;
	assert_int_equal(png_size(png, &w, &h), 0);
	assert_int_equal(w, RL_PLOT_WIDTH);
	assert_int_equal(h, RL_PLOT_HEIGHT);
	assert_int_equal(png_size(svg, &w, &h), -EINVAL);
	unlink(svg);
	unlink(png);
	rmdir(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_roofline_ridge_and_attainable),
		cmocka_unit_test(test_roofline_place_boundedness),
		cmocka_unit_test(test_roofline_place_rejects_bad_input),
		cmocka_unit_test(test_roofline_walls_dedupe),
		cmocka_unit_test(test_roofline_from_calib_ceilings),
		cmocka_unit_test(test_roofline_svg_axes_and_dots),
		cmocka_unit_test(test_sensitivity_seed_example),
		cmocka_unit_test(test_sensitivity_svg_curves),
		cmocka_unit_test(test_roofline_svg_labels_do_not_overlap),
		cmocka_unit_test(test_work_model_kernel_file_lines),
		cmocka_unit_test(test_work_model_cpu_events),
		cmocka_unit_test(test_roofline_png_size),
		cmocka_unit_test(test_roofline_from_calib_leaves_out_impossible_ceilings),
		cmocka_unit_test(test_calib_phys_peaks),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
