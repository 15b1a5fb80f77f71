/* The live CPU profile page, /profile (http_pages.h): a query (query.h) over
 * the last HTTP_PROFILE_WINDOW_S seconds of every agent, rendered by the views
 * (CPU over time per process, flame graph with callers and callees). */
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#include "http_pages.h"
#include "json.h"
#include "query/query.h"
#include "report/svg.h"
#include "views/flame.h"
#include "views/flame_tree.h"
#include "views/profile_page.h"
#include "views/stacks_query.h"

/* Reload every s seconds, not while the reader is zoomed in or searching the flame graph. */
void page_reload_script(FILE *f, unsigned s)
{
	fprintf(f,
		"<script>setInterval(function(){var b=document.getElementById('flame');"
		"if(b){var s=b.querySelector('.pf-search'),z=b.querySelector('svg').getAttribute('data-zoom');"
		"if((s&&s.value)||(z&&z!=='all'))return;}location.reload();},%u);</script>\n",
		s * 1000);
}

int page_profile(struct store *st, FILE *f, int64_t now_ns)
{
	struct query_opts qo;
	query_opts_init(&qo, now_ns);
	int64_t t1 = qo.now_ns, t0 = t1 - (int64_t)HTTP_PROFILE_WINDOW_S * 1000000000;
	qo.f.since_ns = t0;
	qo.series = true;
	struct query_result *r = NULL;
	int rc = query_run(st, &qo, &r);
	struct stack_set set;
	stack_set_init(&set);
	if (rc == 0)
		rc = stack_set_from_query(r, &set);
	size_t nsess = r ? r->nsessions : 0;
	query_result_free(r);
	query_opts_free(&qo);
	if (rc < 0) {
		stack_set_free(&set);
		return rc;
	}
	fputs("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>CPU profile, last 10 minutes</title>\n"
	      "<style>body{font-family:sans-serif;margin:1.5em}</style></head><body>\n"
	      "<p><a href=\"/\">sessions</a></p><h1>CPU profile of the last 10 minutes</h1>\n",
	      f);
	fprintf(f, "<p id=\"summary\">%llu samples from %zu session(s) of every agent. The page reloads every 15 s "
		   "(not while you are zoomed in or searching).</p>\n",
		(unsigned long long)set.total, nsess);
	fputs("<h2 id=\"cpu-over-time\">CPU samples per second</h2>\n", f);
	if (set.npoints)
		rc = cpu_chart_svg(&set, t0, t1, 60, f);
	else
		fputs("<p>no CPU samples in the window (record them with <code>agent record</code>)</p>\n", f);
	if (rc == 0 && set.total) {
		fputs("<h2 id=\"flame-graph\">Flame graph, callers and callees</h2>\n", f);
		struct flame_tree t;
		rc = flame_tree_init(&t);
		if (rc == 0) {
			struct flame_opts fo = {.process_level = true};
			rc = flame_tree_add(&t, &set, 0, &fo);
			if (rc == 0) {
				flame_html_assets(f);
				struct flame_render fr = {.title = NULL};
				rc = flame_html_embed(&t, &fr, "flame", f);
			}
			flame_tree_free(&t);
		}
	}
	page_reload_script(f, 15);
	fputs("</body></html>\n", f);
	stack_set_free(&set);
	if (rc == 0 && ferror(f))
		rc = -EFBIG;
	return rc;
}
