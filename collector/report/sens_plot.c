/* Slowdown-vs-latency chart (see sens_plot.h). */
#include "sens_plot.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "report/svg.h"
#include "report/svg_layout.h"

#define SENS_POINTS 41

int sens_plot_svg(FILE *f, const struct sens_row *r, const char *unit, double scale)
{
	/* m = 1, 2, 4 and the row's own m (the 10 % marker lies on that curve) */
	double ms[4] = {1, 2, 4, r->m};
	static const char *const colors[] = {"#d62728", "#2ca02c", "#1f77b4", "#000000"};
	size_t nm = r->m == 1 || r->m == 2 || r->m == 4 || !(r->m >= 1) ? 3 : 4;
	if (!(r->alpha0 > 0) || !(scale > 0))
		return -EINVAL;
	double dmax = 2 * r->alpha0; /* up to +200% of the baseline latency, or past the 10 % point */
	if (isfinite(r->delta10) && r->delta10 > 0.8 * dmax && r->delta10 < 100 * r->alpha0)
		dmax = 1.25 * r->delta10;
	double ymax = 0;
	for (size_t k = 0; k < nm; k++)
		ymax = fmax(ymax, sens_slowdown(r, ms[k], dmax) * 100);
	ymax = fmax(ymax * 1.1, 12);
	struct svg_plot p = {.x0 = 0, .x1 = dmax * scale, .y0 = 0, .y1 = ymax, .left = 70, .top = 40,
			     .width = SENS_PLOT_WIDTH - 100, .height = SENS_PLOT_HEIGHT - 100};
	char title[160], xl[80], lab[96];
	snprintf(title, sizeof(title), "Latency sensitivity: %s", r->name);
	snprintf(xl, sizeof(xl), "added memory latency (%s; baseline %.4g)", unit, r->alpha0 * scale);
	svg_begin(f, SENS_PLOT_WIDTH, SENS_PLOT_HEIGHT, title);
	svg_axes(f, &p, xl, "predicted slowdown (%)");
	double y10 = svg_py(&p, 10);
	svg_line(f, p.left, y10, p.left + p.width, y10, "#888888", 1, "4,3", "ten-percent");
	struct svg_labels *ls = calloc(1, sizeof(*ls));
	if (!ls)
		return -ENOMEM;
	ls->left = p.left + 2;
	ls->right = p.left + p.width - 2;
	ls->top = p.top + 2;
	ls->bottom = p.top + p.height - 2;
	for (size_t k = 0; k < nm; k++) {
		snprintf(lab, sizeof(lab), k == 3 ? "m = %g (calibrated)" : "m = %g", ms[k]);
		svg_labels_add(ls, p.left + 10, p.top + 16 + 14.0 * (double)k, "start", 12, colors[k], "legend", lab);
	}
	for (size_t k = 0; k < nm; k++) {
		double xs[SENS_POINTS], ys[SENS_POINTS];
		for (size_t i = 0; i < SENS_POINTS; i++) {
			double d = dmax * (double)i / (SENS_POINTS - 1);
			xs[i] = svg_px(&p, d * scale);
			ys[i] = svg_py(&p, sens_slowdown(r, ms[k], d) * 100);
		}
		char cls[32];
		snprintf(cls, sizeof(cls), "curve m%g", ms[k]);
		svg_polyline(f, xs, ys, SENS_POINTS, colors[k], k == 3 ? 2.5 : 2, k == 3 ? "8,3" : NULL, cls, NULL);
	}
	if (isfinite(r->delta10) && r->delta10 <= dmax) {
		/* on the curve of the row's m: sens_slowdown(r, r->m, delta10) = 10 % */
		double x = svg_px(&p, r->delta10 * scale);
		svg_circle(f, x, y10, 4, "black", "delta10", NULL);
		snprintf(lab, sizeof(lab), "+%.3g %s costs 10 %% (m = %g)", r->delta10 * scale, unit, r->m);
		svg_labels_add(ls, x + 6, y10 + 14, "start", 11, "black", "delta10-label", lab);
	}
	svg_labels_add(ls, p.left + p.width - 4, y10 - 4, "end", 10, "#555555", "ten-percent-label", "10 %");
	svg_labels_write(ls, f);
	free(ls);
	svg_end(f);
	return ferror(f) ? -EIO : 0;
}
