/* Non-overlapping chart labels (svg_layout.h). */
#include "svg_layout.h"

#include <stdbool.h>
#include <string.h>

#include "svg.h"

#define CHAR_EM 0.62 /* width of an average sans-serif character, in font sizes (generous) */
#define MAX_STEPS 40

void svg_labels_add(struct svg_labels *ls, double x, double y, const char *anchor, int size, const char *fill,
		    const char *cls, const char *text)
{
	if (ls->n >= SVG_LABELS_MAX)
		return;
	struct svg_label *l = &ls->l[ls->n++];
	l->x = x;
	l->y = y;
	l->anchor = anchor;
	l->size = size;
	l->fill = fill;
	l->cls = cls;
	snprintf(l->text, sizeof(l->text), "%s", text);
}

void svg_label_box(const struct svg_label *l, double *x0, double *y0, double *x1, double *y1)
{
	double w = CHAR_EM * l->size * (double)strlen(l->text);
	bool end = strcmp(l->anchor, "end") == 0;
	*x0 = end ? l->x - w : l->x;
	*x1 = end ? l->x : l->x + w;
	*y0 = l->y - l->size;	    /* ascent */
	*y1 = l->y + 0.3 * l->size; /* descent */
}

static bool overlaps(const struct svg_label *a, const struct svg_label *b)
{
	double ax0, ay0, ax1, ay1, bx0, by0, bx1, by1;
	svg_label_box(a, &ax0, &ay0, &ax1, &ay1);
	svg_label_box(b, &bx0, &by0, &bx1, &by1);
	return ax0 < bx1 && bx0 < ax1 && ay0 < by1 && by0 < ay1;
}

/* Keep the label's box inside the area (flip a start label that runs off the right edge). */
static void clamp(const struct svg_labels *ls, struct svg_label *l)
{
	double x0, y0, x1, y1;
	svg_label_box(l, &x0, &y0, &x1, &y1);
	if (x1 > ls->right && strcmp(l->anchor, "start") == 0) {
		l->anchor = "end";
		l->x = ls->right;
	} else if (x1 > ls->right) {
		l->x -= x1 - ls->right;
	}
	svg_label_box(l, &x0, &y0, &x1, &y1);
	if (x0 < ls->left)
		l->x += ls->left - x0;
	if (y0 < ls->top)
		l->y += ls->top - y0;
	svg_label_box(l, &x0, &y0, &x1, &y1);
	if (y1 > ls->bottom)
		l->y -= y1 - ls->bottom;
}

static bool free_at(const struct svg_labels *ls, size_t i)
{
	for (size_t j = 0; j < i; j++)
		if (overlaps(&ls->l[i], &ls->l[j]))
			return false;
	return true;
}

void svg_labels_write(struct svg_labels *ls, FILE *f)
{
	for (size_t i = 0; i < ls->n; i++) {
		struct svg_label *l = &ls->l[i];
		clamp(ls, l);
		double y = l->y, step = l->size * 0.6 + 1;
		for (int k = 1; k <= MAX_STEPS && !free_at(ls, i); k++) {
			/* 0, +s, -s, +2s, -2s, ... around where it wanted to be */
			l->y = y + (k % 2 ? 1 : -1) * step * (double)((k + 1) / 2);
			clamp(ls, l);
		}
	}
	for (size_t i = 0; i < ls->n; i++)
		svg_text(f, ls->l[i].x, ls->l[i].y, ls->l[i].anchor, ls->l[i].size, ls->l[i].fill, ls->l[i].cls,
			 ls->l[i].text);
}
