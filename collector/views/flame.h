/* Flame graph renderers over a flame_tree (flame_tree.h):
 *  - flame_html(): one self-contained HTML page (inline SVG drawn by a small
 *    inline script, no network): an icicle (root on top), click a frame to zoom
 *    into it (click the root or "reset" to zoom out), a search box (regular
 *    expression or text; matching frames highlighted, their share shown), hover
 *    for samples and share, and a caller/callee table of the frame clicked.
 *    In diff mode (two sides) widths are the new side (B) and colour is the
 *    change of each frame's share: red grew, blue shrank.
 *  - flame_svg(): the same icicle as a static SVG (hover titles, no script).
 * Frames narrower than min_share of the root are left out (counted in the
 * page's note). */
#ifndef COLLECTOR_VIEWS_FLAME_H
#define COLLECTOR_VIEWS_FLAME_H

#include <stdbool.h>
#include <stdio.h>

#include "flame_tree.h"

struct flame_render {
	const char *title;    /* page title */
	const char *subtitle; /* one line under it (filters, range), may be NULL */
	bool diff;            /* two sides: A = nodes' [0], B = [1] */
	double min_share;     /* 0: 1e-4 */
};

int flame_html(const struct flame_tree *t, const struct flame_render *r, FILE *out);
int flame_svg(const struct flame_tree *t, const struct flame_render *r, FILE *out);
/* The tree as JSON arrays [name, module, total, self, totalA, [children]] (the
 * data of the HTML page and of the live pages' flame). */
int flame_json(const struct flame_tree *t, const struct flame_render *r, FILE *out);
/* The script and style the HTML page uses, for pages that embed a flame (live
 * pages, the report): flame_html_assets() writes <style> and <script> once;
 * flame_html_embed() a container with its data, drawn by that script. */
void flame_html_assets(FILE *out);
int flame_html_embed(const struct flame_tree *t, const struct flame_render *r, const char *id, FILE *out);

#endif
