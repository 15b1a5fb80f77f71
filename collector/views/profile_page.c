/* Profile fragments for the report and the live pages (profile_page.h). */
#include "profile_page.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "flame.h"
#include "flame_tree.h"
#include "report/svg.h"
#include "stacks_query.h"

int profile_flame_fragment(struct store *st, const struct query_opts *qo, const char *id, char **html)
{
	*html = NULL;
	struct query_result *r = NULL;
	int rc = query_run(st, qo, &r);
	struct stack_set set;
	stack_set_init(&set);
	if (rc == 0)
		rc = stack_set_from_query(r, &set);
	query_result_free(r);
	if (rc < 0 || set.total == 0) {
		stack_set_free(&set);
		return rc;
	}
	struct flame_tree t;
	if ((rc = flame_tree_init(&t)) < 0) {
		stack_set_free(&set);
		return rc;
	}
	struct flame_opts fo = {.process_level = true};
	rc = flame_tree_add(&t, &set, 0, &fo);
	size_t len = 0;
	FILE *m = rc == 0 ? open_memstream(html, &len) : NULL;
	if (rc == 0 && !m)
		rc = -ENOMEM;
	if (m) {
		flame_html_assets(m);
		struct flame_render fr = {.title = NULL};
		rc = flame_html_embed(&t, &fr, id, m);
		if (fclose(m) != 0 && rc == 0)
			rc = -ENOMEM;
		if (rc < 0) {
			free(*html);
			*html = NULL;
		}
	}
	flame_tree_free(&t);
	stack_set_free(&set);
	return rc;
}

#define CHART_W 900
#define CHART_H 220
#define CHART_L 60
#define CHART_B 30
#define MAX_LINES 6

static const char *const colors[MAX_LINES] = {"#d62728", "#1f77b4", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b"};

/* "YYYY-MM-DD HH:MM:SS" of a unix ns time, UTC. */
static void utc_label(int64_t t_ns, char *buf, size_t len)
{
	time_t t = (time_t)(t_ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%d %H:%M:%S", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

int cpu_chart_svg(const struct stack_set *s, int64_t t0_ns, int64_t t1_ns, unsigned buckets, FILE *out)
{
	if (buckets < 2 || buckets > 10000 || t1_ns <= t0_ns)
		return -EINVAL;
	/* the busiest tracks */
	size_t ntr = s->nstrs;
	uint64_t *per = calloc(ntr ? ntr : 1, sizeof(*per));
	double *v = calloc((size_t)(MAX_LINES + 1) * buckets, sizeof(*v));
	if (!per || !v) {
		free(per);
		free(v);
		return -ENOMEM;
	}
	for (size_t i = 0; i < s->npoints; i++)
		if (s->points[i].track < ntr)
			per[s->points[i].track] += s->points[i].count;
	uint32_t top[MAX_LINES];
	size_t ntop = 0;
	for (; ntop < MAX_LINES; ntop++) {
		uint32_t best = 0;
		for (uint32_t t = 1; t < ntr; t++)
			if (per[t] > per[best])
				best = t;
		if (!per[best])
			break;
		top[ntop] = best;
		per[best] = 0;
	}
	double bucket_s = (double)(t1_ns - t0_ns) / 1e9 / buckets;
	for (size_t i = 0; i < s->npoints; i++) {
		const struct vpoint *p = &s->points[i];
		if (p->t_ns < t0_ns || p->t_ns >= t1_ns)
			continue;
		size_t b = (size_t)((double)(p->t_ns - t0_ns) / (double)(t1_ns - t0_ns) * buckets);
		if (b >= buckets)
			b = buckets - 1;
		v[(size_t)MAX_LINES * buckets + b] += (double)p->count / bucket_s;
		for (size_t k = 0; k < ntop; k++)
			if (top[k] == p->track)
				v[k * buckets + b] += (double)p->count / bucket_s;
	}
	double ymax = 1;
	for (unsigned b = 0; b < buckets; b++)
		if (v[(size_t)MAX_LINES * buckets + b] > ymax)
			ymax = v[(size_t)MAX_LINES * buckets + b];
	int pw = CHART_W - CHART_L - 10, ph = CHART_H - CHART_B - 10;
	char l0[32], l1[32];
	utc_label(t0_ns, l0, sizeof(l0));
	utc_label(t1_ns, l1, sizeof(l1));
	fprintf(out,
		"<svg xmlns=\"http://www.w3.org/2000/svg\" class=\"cpu-chart\" width=\"%d\" height=\"%d\" "
		"font-family=\"sans-serif\" font-size=\"11\" data-plot-x=\"%d\" data-plot-w=\"%d\" "
		"data-plot-h=\"%d\" data-t0=\"%.3f\" data-t1=\"%.3f\">\n"
		"<rect x=\"%d\" y=\"10\" width=\"%d\" height=\"%d\" fill=\"#fafafa\" stroke=\"#999\"/>\n"
		"<text x=\"4\" y=\"14\">%.0f/s</text><text x=\"4\" y=\"%d\">0</text>\n"
		"<text x=\"%d\" y=\"%d\">%s UTC</text><text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s UTC "
		"(%.0f s)</text>\n",
		CHART_W, CHART_H + 16 * (int)(ntop + 1), CHART_L, pw, ph, (double)t0_ns / 1e9, (double)t1_ns / 1e9,
		CHART_L, pw, ph, ymax, CHART_H - CHART_B, CHART_L, CHART_H - CHART_B + 16, l0, CHART_L + pw,
		CHART_H - CHART_B + 16, l1, (double)(t1_ns - t0_ns) / 1e9);
	for (size_t k = 0; k <= ntop; k++) {
		size_t row = k == ntop ? MAX_LINES : k;
		const char *col = k == ntop ? "#000" : colors[k];
		fprintf(out, "<polyline class=\"cpu-line\" fill=\"none\" stroke=\"%s\" stroke-width=\"%s\" points=\"", col,
			k == ntop ? "2" : "1.3");
		for (unsigned b = 0; b < buckets; b++)
			fprintf(out, "%s%.1f,%.1f", b ? " " : "", CHART_L + pw * (b + 0.5) / buckets,
				10 + ph - ph * v[row * buckets + b] / ymax);
		fputs("\"/>\n", out);
		fprintf(out, "<text x=\"%d\" y=\"%d\" fill=\"%s\">", CHART_L, CHART_H + 16 * (int)k, col);
		svg_escape(out, k == ntop ? "all processes" : stack_set_str(s, top[k]));
		fputs("</text>\n", out);
	}
	fputs("</svg>\n", out);
	free(per);
	free(v);
	return ferror(out) ? -EIO : 0;
}
