/* Text labels of a chart placed so that none overlaps another: each label
 * has a wanted position; labels are placed in the order given (the first
 * keeps its place), a later one that would overlap a placed one moves up or
 * down in small steps (its width estimated from the font size), and every
 * label stays inside the area given (the plot frame). Rendering only. */
#ifndef COLLECTOR_REPORT_SVG_LAYOUT_H
#define COLLECTOR_REPORT_SVG_LAYOUT_H

#include <stddef.h>
#include <stdio.h>

#define SVG_LABEL_TEXT 160
#define SVG_LABELS_MAX 96

struct svg_label {
	double x, y;	    /* anchor point (baseline) */
	const char *anchor; /* "start" or "end" */
	int size;
	const char *fill, *cls;
	char text[SVG_LABEL_TEXT];
};

struct svg_labels {
	struct svg_label l[SVG_LABELS_MAX];
	size_t n;
	double left, top, right, bottom; /* where labels may go */
};

/* Queue a label (dropped when full). */
void svg_labels_add(struct svg_labels *ls, double x, double y, const char *anchor, int size, const char *fill,
		    const char *cls, const char *text);
/* Move the labels apart and inside the area, then write them. */
void svg_labels_write(struct svg_labels *ls, FILE *f);
/* The box a label covers (estimated), for tests. */
void svg_label_box(const struct svg_label *l, double *x0, double *y0, double *x1, double *y1);

#endif
