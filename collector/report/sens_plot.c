/* Slowdown-vs-latency chart (see sens_plot.h). */
#include "sens_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>

#include "report/svg.h"

#define SENS_POINTS 41

int sens_plot_svg(FILE *f, const struct sens_row *r, const char *unit, double scale)
{
	static const double ms[] = {1, 2, 4};
	static const char *const colors[] = {"#d62728", "#2ca02c", "#1f77b4"};
	if (!(r->alpha0 > 0) || !(scale > 0))
		return -EINVAL;
	double dmax = 2 * r->alpha0; /* up to +200% of the baseline latency */
	double ymax = 0;
	for (size_t k = 0; k < 3; k++)
		ymax = fmax(ymax, sens_slowdown(r, ms[k], dmax) * 100);
	ymax = fmax(ymax * 1.1, 12);
	struct svg_plot p = {.x0 = 0, .x1 = dmax * scale, .y0 = 0, .y1 = ymax, .left = 70, .top = 40,
			     .width = SENS_PLOT_WIDTH - 100, .height = SENS_PLOT_HEIGHT - 100};
	char title[160], xl[80], lab[64];
	snprintf(title, sizeof(title), "Latency sensitivity: %s", r->name);
	snprintf(xl, sizeof(xl), "added memory latency (%s; baseline %.4g)", unit, r->alpha0 * scale);
	svg_begin(f, SENS_PLOT_WIDTH, SENS_PLOT_HEIGHT, title);
	svg_axes(f, &p, xl, "predicted slowdown (%)");
	double y10 = svg_py(&p, 10);
	svg_line(f, p.left, y10, p.left + p.width, y10, "#888888", 1, "4,3", "ten-percent");
	svg_text(f, p.left + p.width - 4, y10 - 4, "end", 10, "#555555", NULL, "10%");
	for (size_t k = 0; k < 3; k++) {
		double xs[SENS_POINTS], ys[SENS_POINTS];
		for (size_t i = 0; i < SENS_POINTS; i++) {
			double d = dmax * (double)i / (SENS_POINTS - 1);
			xs[i] = svg_px(&p, d * scale);
			ys[i] = svg_py(&p, sens_slowdown(r, ms[k], d) * 100);
		}
		char cls[32];
		snprintf(cls, sizeof(cls), "curve m%g", ms[k]);
		svg_polyline(f, xs, ys, SENS_POINTS, colors[k], 2, NULL, cls, NULL);
		snprintf(lab, sizeof(lab), "m = %g", ms[k]);
		svg_text(f, p.left + 10, p.top + 16 + 14.0 * (double)k, "start", 12, colors[k], "legend", lab);
	}
	if (isfinite(r->delta10) && r->delta10 <= dmax) {
		double x = svg_px(&p, r->delta10 * scale);
		svg_circle(f, x, y10, 4, "black", "delta10", NULL);
		snprintf(lab, sizeof(lab), "+%.3g %s costs 10%% (m = %g)", r->delta10 * scale, unit, r->m);
		svg_text(f, x + 6, y10 + 14, "start", 11, "black", "delta10-label", lab);
	}
	svg_end(f);
	return ferror(f) ? -EIO : 0;
}
