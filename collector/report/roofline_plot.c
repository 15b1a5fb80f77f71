/* Roofline chart (see roofline_plot.h). */
#include "roofline_plot.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "report/svg_layout.h"

static double decade_floor(double v)
{
	return pow(10, floor(log10(v)));
}

static double decade_ceil(double v)
{
	return pow(10, ceil(log10(v)));
}

int roofline_plot_area(const struct roofline *roof, const struct roofline_wall *walls, size_t nwalls,
		       const struct rl_dot *dots, size_t ndots, struct svg_plot *out)
{
	if (!roofline_complete(roof))
		return -ENODATA;
	double pi = roofline_pi(roof), beta = roofline_beta(roof), ridge = pi / beta;
	double xlo = ridge / 64, xhi = ridge * 64, ylo = pi, yhi = pi * 2;
	for (size_t i = 0; i < nwalls; i++) {
		xlo = fmin(xlo, walls[i].intensity / 2);
		xhi = fmax(xhi, walls[i].intensity * 2);
	}
	for (size_t i = 0; i < ndots; i++) {
		if (!(dots[i].p.intensity > 0) || !(dots[i].p.achieved > 0))
			continue;
		xlo = fmin(xlo, dots[i].p.intensity / 2);
		xhi = fmax(xhi, dots[i].p.intensity * 2);
		ylo = fmin(ylo, dots[i].p.achieved / 2);
		yhi = fmax(yhi, dots[i].p.achieved * 2);
	}
	struct svg_plot p = {.xlog = true, .ylog = true, .left = 80, .top = 40, .width = RL_PLOT_WIDTH - 110,
			     .height = RL_PLOT_HEIGHT - 100};
	p.x0 = decade_floor(xlo);
	p.x1 = decade_ceil(xhi);
	ylo = fmin(ylo, beta * p.x0);
	for (size_t i = 0; i < roof->n; i++)
		if (roof->c[i].kind == ROOFLINE_COMPUTE)
			ylo = fmin(ylo, roof->c[i].value / 2);
	p.y1 = decade_ceil(yhi);
	p.y0 = fmax(decade_floor(ylo), p.y1 / 1e8);
	if (p.x1 / p.x0 > 1e10)
		p.x0 = p.x1 / 1e10;
	*out = p;
	return 0;
}

static const char *dot_color(const struct rl_dot *d)
{
	return d->cpu ? "#1f77b4" : "#ff7f0e";
}

int roofline_plot_svg(FILE *f, const struct roofline *roof, const struct roofline_wall *walls, size_t nwalls,
		      const struct rl_dot *dots, size_t ndots, const char *title)
{
	struct svg_plot p;
	int rc = roofline_plot_area(roof, walls, nwalls, dots, ndots, &p);
	if (rc < 0)
		return rc;
	double pi = roofline_pi(roof), beta = roofline_beta(roof), ridge = pi / beta;
	char buf[160], n1[32], n2[32];
	/* every label goes through one layout, so that none overlaps another */
	struct svg_labels *ls = calloc(1, sizeof(*ls));
	struct svg_labels *cl = calloc(1, sizeof(*cl)); /* the compute ceilings: placed after the roof's */
	if (!ls || !cl) {
		free(ls);
		free(cl);
		return -ENOMEM;
	}
	ls->left = p.left + 2;
	ls->right = p.left + p.width - 2;
	ls->top = p.top + 2;
	ls->bottom = p.top + p.height - 2;
	svg_begin(f, RL_PLOT_WIDTH, RL_PLOT_HEIGHT, title);
	svg_axes(f, &p, "arithmetic intensity I = W/Q (FLOP/byte)", "performance P (GFLOP/s)");
	svg_clip(f, &p, "rlclip");
	/* lower ceilings first, dashed */
	int k = 0, nbw = 0;
	for (size_t i = 0; i < roof->n; i++)
		nbw += roof->c[i].kind == ROOFLINE_BANDWIDTH && roof->c[i].value != beta;
	for (size_t i = 0; i < roof->n; i++) {
		const struct roofline_ceiling *c = &roof->c[i];
		bool top = c->kind == ROOFLINE_COMPUTE ? c->value == pi : c->value == beta;
		if (top)
			continue;
		double xs[2], ys[2];
		if (c->kind == ROOFLINE_BANDWIDTH) {
			xs[0] = svg_px(&p, p.x0);
			ys[0] = svg_py(&p, c->value * p.x0);
			xs[1] = svg_px(&p, pi / c->value);
			ys[1] = svg_py(&p, pi);
			snprintf(buf, sizeof(buf), "%s %s GB/s", c->name, svg_num(n1, sizeof(n1), c->value));
		} else {
			xs[0] = svg_px(&p, c->value / beta);
			ys[0] = svg_py(&p, c->value);
			xs[1] = svg_px(&p, p.x1);
			ys[1] = ys[0];
			snprintf(buf, sizeof(buf), "%s %s GFLOP/s", c->name, svg_num(n1, sizeof(n1), c->value));
		}
		svg_polyline(f, xs, ys, 2, "#888888", 1.2, "6,4",
			     c->kind == ROOFLINE_BANDWIDTH ? "ceiling bandwidth" : "ceiling compute", "rlclip");
		if (c->kind == ROOFLINE_BANDWIDTH) {
			/* bandwidth ceilings are listed in the lower right corner (dashed diagonals) */
			double ly = p.top + p.height - 8 - 13.0 * (double)(nbw - 1 - k);
			svg_line(f, p.left + p.width - 200, ly - 4, p.left + p.width - 180, ly - 4, "#888888", 1.2, "6,4",
				 NULL);
			svg_labels_add(ls, p.left + p.width - 176, ly, "start", 10, "#555555", "ceiling-label", buf);
			k++;
		} else {
			svg_labels_add(cl, p.left + p.width - 4, ys[0] - 3, "end", 10, "#555555", "ceiling-label", buf);
		}
	}
	/* the roof */
	double xs[3] = {svg_px(&p, p.x0), svg_px(&p, ridge), svg_px(&p, p.x1)};
	double ys[3] = {svg_py(&p, beta * p.x0), svg_py(&p, pi), svg_py(&p, pi)};
	svg_polyline(f, xs, ys, 3, "black", 2.5, NULL, "roof", "rlclip");
	snprintf(buf, sizeof(buf), "pi = %s GFLOP/s", svg_num(n1, sizeof(n1), pi));
	svg_labels_add(ls, p.left + p.width - 4, ys[1] - 6, "end", 12, "black", "roof-label", buf);
	snprintf(buf, sizeof(buf), "beta = %s GB/s", svg_num(n1, sizeof(n1), beta));
	double lx = p.x0 * 2 < ridge ? p.x0 * 2 : p.x0;
	svg_labels_add(ls, svg_px(&p, lx) + 4, svg_py(&p, beta * lx) - 8, "start", 12, "black", "roof-label", buf);
	/* ridge point */
	double rx = svg_px(&p, ridge);
	svg_line(f, rx, ys[1], rx, p.top + p.height, "black", 1, "2,3", "ridge");
	snprintf(buf, sizeof(buf), "ridge %s FLOP/B", svg_num(n1, sizeof(n1), ridge));
	svg_labels_add(ls, rx + 4, p.top + p.height - 6, "start", 11, "black", "ridge-label", buf);
	/* locality walls */
	for (size_t i = 0; i < nwalls; i++) {
		double x = svg_px(&p, walls[i].intensity);
		svg_line(f, x, p.top, x, p.top + p.height, "#9467bd", 1.5, "8,3", "wall");
		snprintf(buf, sizeof(buf), "%s wall", walls[i].name);
		svg_labels_add(cl, x + 3, p.top + 14 + 12.0 * (double)i, "start", 10, "#9467bd", "wall-label", buf);
	}
	/* dots */
	for (size_t i = 0; i < ndots; i++) {
		const struct rl_dot *d = &dots[i];
		if (!(d->p.intensity > 0) || !(d->p.achieved > 0))
			continue;
		double cx = svg_px(&p, d->p.intensity), cy = svg_py(&p, d->p.achieved);
		fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"6\" fill=\"%s\" stroke=\"black\" class=\"dot %s\" "
			   "data-name=\"",
			cx, cy, dot_color(d), d->cpu ? "cpu" : "kernel");
		svg_escape(f, d->name);
		fprintf(f, "\" data-i=\"%.9g\" data-p=\"%.9g\"><title>", d->p.intensity, d->p.achieved);
		svg_escape(f, d->source);
		fputs("</title></circle>\n", f);
		if (d->p.fraction > 1)
			snprintf(buf, sizeof(buf), "%s: ABOVE its roof (%s%%): W/Q model or ceiling wrong", d->name,
				 svg_num(n1, sizeof(n1), d->p.fraction * 100));
		else
			snprintf(buf, sizeof(buf), "%s (%s%% of %s)", d->name, svg_num(n1, sizeof(n1), d->p.fraction * 100),
				 svg_num(n2, sizeof(n2), d->p.attainable));
		svg_labels_add(ls, cx + 9, cy + 4, "start", 11, d->p.fraction > 1 ? "#d62728" : dot_color(d),
			       d->p.fraction > 1 ? "dot-label above-roof" : "dot-label", buf);
	}
	for (size_t i = 0; i < cl->n; i++)
		svg_labels_add(ls, cl->l[i].x, cl->l[i].y, cl->l[i].anchor, cl->l[i].size, cl->l[i].fill, cl->l[i].cls,
			       cl->l[i].text);
	svg_labels_write(ls, f);
	free(ls);
	free(cl);
	svg_end(f);
	return ferror(f) ? -EIO : 0;
}
