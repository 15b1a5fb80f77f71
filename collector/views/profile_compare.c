/* Two ranges compared on the live page (profile_compare.h). */
#include "profile_compare.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>

#include "flame.h"
#include "flame_tree.h"
#include "func_stats.h"
#include "report/svg.h"

static double share(uint64_t n, uint64_t of)
{
	return of ? 100.0 * (double)n / (double)of : 0;
}

struct row {
	const struct func_stat *f;
	double delta; /* self share of B - A, points */
};

static int by_change(const void *x, const void *y)
{
	double a = fabs(((const struct row *)x)->delta), b = fabs(((const struct row *)y)->delta);
	return a < b ? 1 : a > b ? -1 : 0;
}

static int rows_html(const struct stack_set *a, const struct stack_set *b, FILE *out)
{
	struct func_stats fs;
	func_stats_init(&fs);
	int rc = func_stats_add(&fs, a, 0);
	if (rc == 0)
		rc = func_stats_add(&fs, b, 1);
	struct row *rows = rc == 0 ? calloc(fs.n ? fs.n : 1, sizeof(*rows)) : NULL;
	if (rc == 0 && !rows)
		rc = -ENOMEM;
	if (rc < 0) {
		func_stats_free(&fs);
		return rc;
	}
	for (size_t i = 0; i < fs.n; i++) {
		rows[i].f = &fs.v[i];
		rows[i].delta = share(fs.v[i].self[1], fs.samples[1]) - share(fs.v[i].self[0], fs.samples[0]);
	}
	qsort(rows, fs.n, sizeof(*rows), by_change);
	fputs("<table id=\"diff-rows\"><tr><th>function</th><th>module</th><th>self A</th><th>self B</th>"
	      "<th>change of self share</th></tr>\n",
	      out);
	for (size_t i = 0; i < fs.n && i < PROFILE_COMPARE_ROWS; i++) {
		const struct func_stat *f = rows[i].f;
		if (rows[i].delta == 0)
			break;
		fputs("<tr class=\"diff-row\"><td class=\"fn\">", out);
		svg_escape(out, f->name);
		fputs("</td><td>", out);
		svg_escape(out, f->module ? f->module : "");
		fprintf(out,
			"</td><td class=\"self-a\">%llu (%.2f%%)</td><td class=\"self-b\">%llu (%.2f%%)</td>"
			"<td class=\"delta\" style=\"color:%s\">%+.2f points</td></tr>\n",
			(unsigned long long)f->self[0], share(f->self[0], fs.samples[0]),
			(unsigned long long)f->self[1], share(f->self[1], fs.samples[1]),
			rows[i].delta > 0 ? "#c00" : "#00c", rows[i].delta);
	}
	fputs("</table>\n", out);
	free(rows);
	func_stats_free(&fs);
	return 0;
}

int profile_compare_html(const struct stack_set *a, const struct stack_set *b, FILE *out)
{
	fprintf(out,
		"<h2 id=\"compare\">Range A against range B</h2>\n<p id=\"compare-totals\" data-a=\"%llu\" "
		"data-b=\"%llu\">A: %llu samples, B: %llu samples. Functions whose share of the samples changed "
		"most (red grew, blue shrank):</p>\n",
		(unsigned long long)a->total, (unsigned long long)b->total, (unsigned long long)a->total,
		(unsigned long long)b->total);
	if (!a->total || !b->total) {
		fputs("<p class=\"compare-empty\">one of the ranges has no CPU samples: nothing to compare</p>\n", out);
		return ferror(out) ? -EIO : 0;
	}
	int rc = rows_html(a, b, out);
	if (rc < 0)
		return rc;
	fputs("<h3>Differential flame graph (widths: B; colour: change from A)</h3>\n", out);
	struct flame_tree t;
	if ((rc = flame_tree_init(&t)) < 0)
		return rc;
	struct flame_opts fo = {.process_level = true};
	rc = flame_tree_add(&t, a, 0, &fo);
	if (rc == 0)
		rc = flame_tree_add(&t, b, 1, &fo);
	if (rc == 0) {
		struct flame_render fr = {.title = NULL, .diff = true};
		rc = flame_html_embed(&t, &fr, "diff-flame", out);
	}
	flame_tree_free(&t);
	if (rc == 0 && ferror(out))
		rc = -EIO;
	return rc;
}
