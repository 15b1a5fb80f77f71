/* Flame graph pages (flame.h): the tree as JSON, the self-contained HTML page
 * that draws it (flame_assets.c) and a static SVG icicle. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "flame.h"
#include "flame_assets.h"
#include "json.h"
#include "report/svg.h"

struct emit_ctx {
	const struct flame_tree *t;
	bool diff;
	uint64_t min;  /* samples below which a frame is left out */
	uint64_t left; /* frames left out */
	uint64_t a_only; /* diff: frames with samples in A only (no width in B) */
	int rc;
};

static uint64_t val(const struct emit_ctx *c, const struct flame_node *n)
{
	return c->diff ? n->total[1] : n->total[0];
}

static void emit_node(struct emit_ctx *c, int32_t i, FILE *f)
{
	const struct flame_node *n = &c->t->nodes[i];
	fputc('[', f);
	json_string(f, n->name);
	fputc(',', f);
	json_string(f, n->module);
	fprintf(f, ",%llu,%llu,%llu,[", (unsigned long long)val(c, n),
		(unsigned long long)(c->diff ? n->self[1] : n->self[0]), (unsigned long long)(c->diff ? n->total[0] : 0));
	int32_t *kids = NULL;
	int nk = flame_tree_children(c->t, i, &kids);
	if (nk < 0) {
		c->rc = nk;
		nk = 0;
	}
	bool first = true;
	for (int k = 0; k < nk; k++) {
		const struct flame_node *ch = &c->t->nodes[kids[k]];
		if (val(c, ch) == 0 && c->diff) {
			c->a_only++;
			continue;
		}
		if (val(c, ch) < c->min || val(c, ch) == 0) {
			c->left++;
			continue;
		}
		if (!first)
			fputc(',', f);
		first = false;
		emit_node(c, kids[k], f);
	}
	free(kids);
	fputs("]]", f);
}

static int emit_data(const struct flame_tree *t, const struct flame_render *r, FILE *f, uint64_t *left,
		     uint64_t *a_only)
{
	struct emit_ctx c = {.t = t, .diff = r->diff};
	double ms = r->min_share > 0 ? r->min_share : 1e-4;
	c.min = (uint64_t)floor(ms * (double)val(&c, &t->nodes[0]));
	fprintf(f, "{\"diff\":%s,\"tree\":", r->diff ? "true" : "false");
	emit_node(&c, 0, f);
	fprintf(f, ",\"left_out\":%llu,\"truncated\":%s}", (unsigned long long)c.left, t->truncated ? "true" : "false");
	if (left)
		*left = c.left;
	if (a_only)
		*a_only = c.a_only;
	return c.rc;
}

int flame_json(const struct flame_tree *t, const struct flame_render *r, FILE *out)
{
	int rc = emit_data(t, r, out, NULL, NULL);
	fputc('\n', out);
	return rc;
}

void flame_html_assets(FILE *out)
{
	fprintf(out, "<style>\n%s</style>\n<script>\n%s</script>\n", flame_css, flame_js);
}

int flame_html_embed(const struct flame_tree *t, const struct flame_render *r, const char *id, FILE *out)
{
	fprintf(out, "<div class=\"pf-flame\" id=\"%s\">\n<div class=\"pf-controls\">search: "
		     "<input class=\"pf-search\" placeholder=\"function name or regular expression\"> "
		     "<button class=\"pf-reset\">reset zoom</button><span class=\"pf-matched\"></span></div>\n"
		     "<div class=\"pf-status\">hover a frame for its samples; click to zoom</div>\n"
		     "<svg xmlns=\"http://www.w3.org/2000/svg\"></svg>\n<script type=\"application/json\" class=\"pf-data\">",
		id);
	uint64_t left = 0, a_only = 0;
	int rc = emit_data(t, r, out, &left, &a_only);
	fputs("</script>\n<div class=\"pf-cc\"></div>\n", out);
	if (left || t->truncated)
		fprintf(out, "<p class=\"pf-note\">%llu frame(s) narrower than %.3g%% of the total left out%s.</p>\n",
			(unsigned long long)left, 100 * (r->min_share > 0 ? r->min_share : 1e-4),
			t->truncated ? "; the tree hit its node limit: deeper frames were cut" : "");
	if (a_only)
		fprintf(out, "<p class=\"pf-note\">%llu call path(s) have samples in A only: no width in B, not drawn "
			     "(the table of losses lists their functions).</p>\n",
			(unsigned long long)a_only);
	fprintf(out, "</div>\n<script>pfFlame('%s');</script>\n", id);
	return rc;
}

int flame_html(const struct flame_tree *t, const struct flame_render *r, FILE *out)
{
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>", out);
	svg_escape(out, r->title ? r->title : "flame graph");
	fputs("</title>\n", out);
	flame_html_assets(out);
	fputs("<style>body{font-family:sans-serif;margin:12px}</style></head><body>\n<h2>", out);
	svg_escape(out, r->title ? r->title : "flame graph");
	fputs("</h2>\n", out);
	if (r->subtitle) {
		fputs("<p>", out);
		svg_escape(out, r->subtitle);
		fputs("</p>\n", out);
	}
	if (r->diff)
		fputs("<p>Widths: the new range (B). Colour: change of each frame's share of all samples from A to B "
		      "(red grew, blue shrank).</p>\n",
		      out);
	int rc = flame_html_embed(t, r, "flame", out);
	fputs("</body></html>\n", out);
	if (ferror(out))
		return -EIO;
	return rc;
}

/* static SVG */
struct svg_ctx {
	const struct flame_tree *t;
	bool diff;
	double width, min_px;
	int depth;
	int rc;
	FILE *f;
};

static void svg_frame(struct svg_ctx *c, int32_t i, double x, double w, int d)
{
	const struct flame_node *n = &c->t->nodes[i];
	uint64_t v = c->diff ? n->total[1] : n->total[0], all = c->diff ? c->t->total[1] : c->t->total[0];
	char fillc[40];
	if (c->diff) {
		double a = c->t->total[0] ? (double)n->total[0] / (double)c->t->total[0] : 0;
		double b = all ? (double)v / (double)all : 0, k = fmin(1, fabs(b - a) * 10);
		int cc = (int)(255 - 200 * k);
		snprintf(fillc, sizeof(fillc), b >= a ? "rgb(255,%d,%d)" : "rgb(%d,%d,255)", cc, cc);
	} else {
		uint32_t h = 0;
		for (const char *p = n->name; *p; p++)
			h = h * 31 + (unsigned char)*p;
		if (strcmp(n->module, "[kernel]") == 0)
			snprintf(fillc, sizeof(fillc), "rgb(235,160,70)");
		else if (n->name[0] == '[')
			snprintf(fillc, sizeof(fillc), "rgb(195,195,195)");
		else
			snprintf(fillc, sizeof(fillc), "rgb(%u,%u,%u)", 205 + h % 50, 70 + (h >> 8) % 130, (h >> 16) % 60);
	}
	fprintf(c->f, "<g><title>");
	svg_escape(c->f, n->name);
	if (n->module[0]) {
		fputs(" (", c->f);
		svg_escape(c->f, n->module);
		fputc(')', c->f);
	}
	fprintf(c->f, ": %llu samples, %.2f%%", (unsigned long long)v, all ? 100.0 * (double)v / (double)all : 0.0);
	if (c->diff)
		fprintf(c->f, "; before %llu", (unsigned long long)n->total[0]);
	fprintf(c->f, "</title><rect x=\"%.2f\" y=\"%d\" width=\"%.2f\" height=\"16\" fill=\"%s\"/>", x, d * 17 + 30,
		w > 0.5 ? w - 0.5 : w, fillc);
	int maxc = (int)((w - 6) / 7);
	if (maxc >= 3) {
		fprintf(c->f, "<text x=\"%.2f\" y=\"%d\">", x + 3, d * 17 + 42);
		size_t len = strlen(n->name);
		if ((int)len <= maxc) {
			svg_escape(c->f, n->name);
		} else {
			char buf[512];
			int k = maxc - 2 < (int)sizeof(buf) - 1 ? maxc - 2 : (int)sizeof(buf) - 1;
			snprintf(buf, sizeof(buf), "%.*s..", k, n->name);
			svg_escape(c->f, buf);
		}
		fputs("</text>", c->f);
	}
	fputs("</g>\n", c->f);
	int32_t *kids = NULL;
	int nk = flame_tree_children(c->t, i, &kids);
	if (nk < 0) {
		c->rc = nk;
		return;
	}
	double sx = x;
	for (int k = 0; k < nk; k++) {
		const struct flame_node *ch = &c->t->nodes[kids[k]];
		uint64_t cv = c->diff ? ch->total[1] : ch->total[0];
		double cw = v ? w * (double)cv / (double)v : 0;
		if (cw >= c->min_px)
			svg_frame(c, kids[k], sx, cw, d + 1);
		sx += cw;
	}
	free(kids);
}

static int tree_depth(const struct flame_tree *t, int32_t i)
{
	int d = 0;
	for (int32_t c = t->nodes[i].child; c >= 0; c = t->nodes[c].next) {
		int cd = tree_depth(t, c);
		if (cd > d)
			d = cd;
	}
	return d + 1;
}

int flame_svg(const struct flame_tree *t, const struct flame_render *r, FILE *out)
{
	struct svg_ctx c = {.t = t, .diff = r->diff, .width = 1200, .min_px = 0.3, .f = out};
	c.depth = tree_depth(t, 0);
	fprintf(out,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" "
		"height=\"%d\" font-family=\"monospace\" font-size=\"11\">\n<text x=\"4\" y=\"18\" font-size=\"14\" "
		"font-family=\"sans-serif\">",
		c.width, c.depth * 17 + 40);
	svg_escape(out, r->title ? r->title : "flame graph");
	if (r->subtitle) {
		fputs(" — ", out);
		svg_escape(out, r->subtitle);
	}
	fputs("</text>\n", out);
	svg_frame(&c, 0, 0, c.width, 0);
	fputs("</svg>\n", out);
	if (ferror(out))
		return -EIO;
	return c.rc;
}
