/* Small SVG writer (see svg.h). */
#include "svg.h"

#include <math.h>

void svg_escape(FILE *f, const char *s)
{
	for (; s && *s; s++) {
		unsigned char c = (unsigned char)*s;
		switch (c) {
		case '&': fputs("&amp;", f); break;
		case '<': fputs("&lt;", f); break;
		case '>': fputs("&gt;", f); break;
		case '"': fputs("&quot;", f); break;
		case '\'': fputs("&#39;", f); break;
		default:
			fputc(c < 0x20 && c != '\n' && c != '\t' ? '?' : c, f);
		}
	}
}

const char *svg_num(char *buf, size_t len, double v)
{
	snprintf(buf, len, "%.3g", v);
	return buf;
}

void svg_begin(FILE *f, int width, int height, const char *title)
{
	fprintf(f,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" "
		"font-family=\"sans-serif\">\n",
		width, height, width, height);
	fprintf(f, "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"white\"/>\n", width, height);
	if (title && *title) {
		fputs("<title>", f);
		svg_escape(f, title);
		fputs("</title>\n", f);
		svg_text(f, width / 2.0, 20, "middle", 15, "black", "title", title);
	}
}

void svg_end(FILE *f)
{
	fputs("</svg>\n", f);
}

static double frac(double v, double lo, double hi, bool lg)
{
	if (lg)
		return (log10(v) - log10(lo)) / (log10(hi) - log10(lo));
	return (v - lo) / (hi - lo);
}

double svg_px(const struct svg_plot *p, double x)
{
	return p->left + frac(x, p->x0, p->x1, p->xlog) * p->width;
}

double svg_py(const struct svg_plot *p, double y)
{
	return p->top + p->height - frac(y, p->y0, p->y1, p->ylog) * p->height;
}

void svg_line(FILE *f, double x1, double y1, double x2, double y2, const char *stroke, double width,
	      const char *dash, const char *cls)
{
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"%s\" stroke-width=\"%g\"", x1, y1,
		x2, y2, stroke, width);
	if (dash)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputs("/>\n", f);
}

void svg_polyline(FILE *f, const double *xs, const double *ys, size_t n, const char *stroke, double width,
		  const char *dash, const char *cls, const char *clip)
{
	fputs("<polyline fill=\"none\" points=\"", f);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%s%.2f,%.2f", i ? " " : "", xs[i], ys[i]);
	fprintf(f, "\" stroke=\"%s\" stroke-width=\"%g\"", stroke, width);
	if (dash)
		fprintf(f, " stroke-dasharray=\"%s\"", dash);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	if (clip)
		fprintf(f, " clip-path=\"url(#%s)\"", clip);
	fputs("/>\n", f);
}

void svg_circle(FILE *f, double cx, double cy, double r, const char *fill, const char *cls, const char *data)
{
	fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"%g\" fill=\"%s\" stroke=\"black\"", cx, cy, r, fill);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	if (data)
		fprintf(f, " %s", data);
	fputs("/>\n", f);
}

void svg_text(FILE *f, double x, double y, const char *anchor, int size, const char *fill, const char *cls,
	      const char *text)
{
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"%s\" font-size=\"%d\" fill=\"%s\"", x, y, anchor,
		size, fill);
	if (cls)
		fprintf(f, " class=\"%s\"", cls);
	fputc('>', f);
	svg_escape(f, text);
	fputs("</text>\n", f);
}

void svg_clip(FILE *f, const struct svg_plot *p, const char *id)
{
	fprintf(f,
		"<defs><clipPath id=\"%s\"><rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\"/></clipPath>"
		"</defs>\n",
		id, p->left, p->top, p->width, p->height);
}

/* Tick values of one axis into v (at most max): decades, or 1-2-5 steps. */
static size_t ticks(double lo, double hi, bool lg, double *v, size_t max)
{
	size_t n = 0;
	if (lg) {
		for (double e = ceil(log10(lo) - 1e-9); e <= floor(log10(hi) + 1e-9) && n < max; e++)
			v[n++] = pow(10, e);
		return n;
	}
	double span = hi - lo, raw = span / 6, mag = pow(10, floor(log10(raw))), step = mag;
	if (raw / mag > 5)
		step = 10 * mag;
	else if (raw / mag > 2)
		step = 5 * mag;
	else if (raw / mag > 1)
		step = 2 * mag;
	for (double t = ceil(lo / step) * step; t <= hi + step * 1e-9 && n < max; t += step)
		v[n++] = fabs(t) < step * 1e-9 ? 0 : t;
	return n;
}

void svg_axes(FILE *f, const struct svg_plot *p, const char *xlabel, const char *ylabel)
{
	double v[32];
	char buf[32];
	size_t n = ticks(p->x0, p->x1, p->xlog, v, 32);
	double bottom = p->top + p->height;
	for (size_t i = 0; i < n; i++) {
		double x = svg_px(p, v[i]);
		svg_line(f, x, p->top, x, bottom, "#e0e0e0", 1, NULL, "grid");
		svg_line(f, x, bottom, x, bottom + 5, "black", 1, NULL, NULL);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"11\" class=\"xtick\" "
			   "data-v=\"%.17g\">%s</text>\n",
			x, bottom + 17, v[i], svg_num(buf, sizeof(buf), v[i]));
	}
	n = ticks(p->y0, p->y1, p->ylog, v, 32);
	for (size_t i = 0; i < n; i++) {
		double y = svg_py(p, v[i]);
		svg_line(f, p->left, y, p->left + p->width, y, "#e0e0e0", 1, NULL, "grid");
		svg_line(f, p->left - 5, y, p->left, y, "black", 1, NULL, NULL);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\" font-size=\"11\" class=\"ytick\" "
			   "data-v=\"%.17g\">%s</text>\n",
			p->left - 8, y + 4, v[i], svg_num(buf, sizeof(buf), v[i]));
	}
	fprintf(f,
		"<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" stroke=\"black\" "
		"class=\"frame\"/>\n",
		p->left, p->top, p->width, p->height);
	svg_text(f, p->left + p->width / 2, bottom + 38, "middle", 13, "black", "xlabel", xlabel);
	fprintf(f, "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" text-anchor=\"middle\" font-size=\"13\" "
		   "class=\"ylabel\">",
		p->left - 52, p->top + p->height / 2);
	svg_escape(f, ylabel);
	fputs("</text>\n", f);
}
