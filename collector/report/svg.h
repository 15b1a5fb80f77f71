/* The project's small SVG writer: a document, plot areas with linear or
 * log axes (ticks, grid, labels), lines, polylines, circles and text. Text
 * is XML-escaped. Writes to a FILE * (a file, or open_memstream for HTML). */
#ifndef COLLECTOR_REPORT_SVG_H
#define COLLECTOR_REPORT_SVG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

/* A plot area: data range [x0, x1] x [y0, y1] drawn in the pixel box
 * (left, top, width, height); log axes need positive ranges. */
struct svg_plot {
	double x0, x1, y0, y1;
	bool xlog, ylog;
	double left, top, width, height;
};

/* <svg ...> with a white background and a title (escaped) at the top. */
void svg_begin(FILE *f, int width, int height, const char *title);
void svg_end(FILE *f);
/* Data -> pixel coordinates (values outside the range extrapolate). */
double svg_px(const struct svg_plot *p, double x);
double svg_py(const struct svg_plot *p, double y);
/* Frame, grid, ticks (decades on log axes, 1-2-5 steps on linear ones) and
 * axis labels. Ticks are <text class="xtick"|"ytick" data-v="VALUE">. */
void svg_axes(FILE *f, const struct svg_plot *p, const char *xlabel, const char *ylabel);
/* A clip path named id for the plot area (use with clip="url(#id)"). */
void svg_clip(FILE *f, const struct svg_plot *p, const char *id);
void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
	      const char *dash, const char *cls);
/* Pixel coordinates; n >= 2. */
void svg_polyline(FILE *f, const double *xs, const double *ys, size_t n, const char *stroke, double width,
		  const char *dash, const char *cls, const char *clip);
void svg_circle(FILE *f, double cx, double cy, double r, const char *fill, const char *cls, const char *data);
/* anchor: "start", "middle", "end". */
void svg_text(FILE *f, double x, double y, const char *anchor, int size, const char *fill, const char *cls,
	      const char *text);
/* Escape s for XML text and attributes (control characters but newline and tab become '?'). */
void svg_escape(FILE *f, const char *s);
/* Shortest readable number ("0.5", "20", "1e+06"). */
const char *svg_num(char *buf, size_t len, double v);

#endif
