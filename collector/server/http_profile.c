/* The live CPU profile page, /profile (http_pages.h): queries (query.h) over
 * the range the query string asks for (http_profile_args.h; default the last
 * HTTP_PROFILE_WINDOW_S seconds of every agent), rendered by the views: one
 * CPU-over-time chart per agent, on which a range is dragged
 * (http_profile_form.h), the range's totals, its flame graph with callers and
 * callees, and with two ranges A and B their comparison (profile_compare.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "http_pages.h"
#include "http_profile_args.h"
#include "http_profile_form.h"
#include "query/query.h"
#include "report/fleet_sens.h"
#include "report/svg.h"
#include "views/flame.h"
#include "views/flame_tree.h"
#include "views/offcpu_flame.h"
#include "views/profile_compare.h"
#include "views/profile_page.h"
#include "views/stacks_query.h"

#define PROFILE_MAX_AGENT_CHARTS 32 /* more agents: the busiest first, the rest named in one line */

/* Reload every s seconds, not while the reader is zoomed in or searching the
 * flame graph, nor once a range is being dragged (window.pfHold). */
void page_reload_script(FILE *f, unsigned s)
{
	fprintf(f,
		"<script>setInterval(function(){if(window.pfHold)return;var b=document.getElementById('flame');"
		"if(b){var s=b.querySelector('.pf-search'),z=b.querySelector('svg').getAttribute('data-zoom');"
		"if((s&&s.value)||(z&&z!=='all'))return;}location.reload();},%u);</script>\n",
		s * 1000);
}

struct agent_total {
	const char *id;
	uint64_t samples;
};

static int by_samples(const void *x, const void *y)
{
	const struct agent_total *a = x, *b = y;
	if (a->samples != b->samples)
		return a->samples < b->samples ? 1 : -1;
	return strcmp(a->id, b->id);
}

/* One chart per agent of r's points over [t0, t1). */
static int agent_charts(const struct query_result *r, int64_t t0, int64_t t1, FILE *f)
{
	struct agent_total *ag = calloc(r->npoints ? r->npoints : 1, sizeof(*ag));
	if (!ag)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < r->npoints; i++) {
		const char *id = r->points[i].agent_id ? r->points[i].agent_id : "";
		size_t k = 0;
		while (k < n && strcmp(ag[k].id, id) != 0)
			k++;
		if (k == n)
			ag[n++].id = id;
		ag[k].samples += r->points[i].count;
	}
	qsort(ag, n, sizeof(*ag), by_samples);
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < n && k < PROFILE_MAX_AGENT_CHARTS; k++) {
		struct stack_set s;
		stack_set_init(&s);
		for (size_t i = 0; rc == 0 && i < r->npoints; i++) {
			const struct query_point *p = &r->points[i];
			if (strcmp(p->agent_id ? p->agent_id : "", ag[k].id) != 0)
				continue;
			char track[300];
			snprintf(track, sizeof(track), "%s (%s)", p->comm[0] ? p->comm : "?", ag[k].id);
			rc = stack_set_add_point(&s, p->t_ns, 0, p->count, track);
		}
		if (rc == 0) {
			fputs("<div class=\"agent-chart\" data-agent=\"", f);
			svg_escape(f, ag[k].id);
			fputs("\"><h3>agent <span class=\"agent-name\">", f);
			svg_escape(f, ag[k].id);
			fprintf(f, "</span>: <span class=\"agent-total\">%llu</span> samples</h3>\n",
				(unsigned long long)ag[k].samples);
			rc = cpu_chart_svg(&s, t0, t1, 60, f);
			fputs("</div>\n", f);
		}
		stack_set_free(&s);
	}
	if (rc == 0 && n > PROFILE_MAX_AGENT_CHARTS)
		fprintf(f, "<p>%zu more agents (choose some with agent=)</p>\n", n - PROFILE_MAX_AGENT_CHARTS);
	free(ag);
	return rc;
}

/* The stacks qo selects over [t0, t1) into s. */
static int side_stacks(struct store *st, struct query_opts *qo, int64_t t0, int64_t t1, struct stack_set *s)
{
	qo->f.since_ns = t0;
	qo->f.until_ns = t1;
	qo->series = false;
	struct query_result *r = NULL;
	int rc = query_run(st, qo, &r);
	if (rc == 0)
		rc = stack_set_from_query(r, s);
	query_result_free(r);
	return rc;
}

static int compare(struct store *st, struct query_opts *qo, const struct profile_args *a, FILE *f)
{
	struct stack_set sa, sb;
	stack_set_init(&sa);
	stack_set_init(&sb);
	int rc = side_stacks(st, qo, a->a_ns[0], a->a_ns[1], &sa);
	if (rc == 0)
		rc = side_stacks(st, qo, a->b_ns[0], a->b_ns[1], &sb);
	if (rc == 0)
		rc = profile_compare_html(&sa, &sb, f);
	stack_set_free(&sa);
	stack_set_free(&sb);
	return rc;
}

/* The on/off-CPU times of the sessions with samples in [t0, t1) (views/offcpu_flame.h). */
static int offcpu_section(struct store *st, struct query_opts *qo, int64_t t0, int64_t t1, FILE *f)
{
	qo->f.since_ns = t0;
	qo->f.until_ns = t1;
	qo->series = false;
	struct stack_set s;
	stack_set_init(&s);
	int rc = offcpu_flame_set(st, qo, &s);
	fprintf(f, "<h2 id=\"offcpu\">Wall clock: on and off the CPU</h2>\n<p id=\"offcpu-total\" data-ms=\"%llu\">%llu ms "
		   "of the sessions' tasks (sched_switch accounting of the bpf back end); [off-CPU]: time asleep or "
		   "waiting; the on-CPU time split over each thread's sampled stacks</p>\n",
		(unsigned long long)s.total, (unsigned long long)s.total);
	if (rc == 0 && s.total) {
		struct flame_tree t;
		rc = flame_tree_init(&t);
		if (rc == 0) {
			struct flame_opts fo = {.process_level = true};
			rc = flame_tree_add(&t, &s, 0, &fo);
			struct flame_render fr = {.title = NULL};
			if (rc == 0)
				rc = flame_html_embed(&t, &fr, "offcpu-flame", f);
			flame_tree_free(&t);
		}
	} else if (rc == 0)
		fputs("<p>no on/off-CPU times in these sessions (agent record --backend bpf records them)</p>\n", f);
	stack_set_free(&s);
	return rc;
}

/* Latency sensitivity per function of the trace windows in [t0, t1) of qo's agents (fleet_sens.h). */
static int sens_section(struct store *st, struct query_opts *qo, int64_t t0, int64_t t1,
			const _Atomic uint64_t *deadline_ns, FILE *f)
{
	qo->f.since_ns = t0;
	qo->f.until_ns = t1;
	qo->by = QUERY_BY_FUNCTION;
	struct fleet_sens fs;
	int rc = fleet_sens_load(st, qo, NULL, deadline_ns, &fs);
	if (rc == 0)
		rc = fleet_sens_html(&fs, 30, f);
	fleet_sens_free(&fs);
	return rc;
}

static void utc(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (!gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "%lld", (long long)t);
}

int page_profile(struct store *st, FILE *f, int64_t now_ns, const char *query)
{
	return page_profile_budget(st, f, now_ns, query, NULL);
}

int page_profile_budget(struct store *st, FILE *f, int64_t now_ns, const char *query,
			const _Atomic uint64_t *deadline_ns)
{
	struct query_opts qo;
	query_opts_init(&qo, now_ns);
	struct profile_args a;
	profile_args_parse(query, qo.now_ns, HTTP_PROFILE_WINDOW_S, &a, &qo);
	int64_t t0 = a.since_ns, t1 = a.until_ns;
	qo.f.since_ns = t0;
	qo.f.until_ns = t1;
	qo.series = true;
	struct query_result *r = NULL;
	int rc = query_run(st, &qo, &r);
	struct stack_set set;
	stack_set_init(&set);
	if (rc == 0)
		rc = stack_set_from_query(r, &set);
	if (rc < 0) {
		query_result_free(r);
		query_opts_free(&qo);
		stack_set_free(&set);
		return rc;
	}
	char from[32], to[32];
	utc(t0, from, sizeof(from));
	utc(t1, to, sizeof(to));
	fprintf(f,
		"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>CPU profile %s to %s</title>\n"
		"<style>body{font-family:sans-serif;margin:1.5em}fieldset{display:inline-block}"
		".agent-chart svg{cursor:crosshair}</style></head><body>\n"
		"<p><a href=\"/\">sessions</a></p><h1>CPU profile, %s to %s</h1>\n",
		from, to, from, to);
	if (a.err[0]) {
		fputs("<p id=\"args-error\" style=\"color:#c00\">", f);
		svg_escape(f, a.err);
		fputs("</p>\n", f);
	}
	profile_form_html(f, &a);
	fprintf(f,
		"<p id=\"summary\">%llu samples from %zu session(s) of %s.%s</p>\n"
		"<p id=\"range-totals\" data-samples=\"%llu\" data-since=\"%.3f\" data-until=\"%.3f\">%llu CPU samples "
		"between %s and %s</p>\n",
		(unsigned long long)set.total, r->nsessions, a.agent[0] ? "the agents chosen" : "every agent",
		a.given ? "" : " The page reloads every 15 s (not while you are zoomed in, searching or choosing a range).",
		(unsigned long long)set.total, (double)t0 / 1e9, (double)t1 / 1e9, (unsigned long long)set.total, from,
		to);
	fputs("<h2 id=\"cpu-over-time\">CPU samples per second, per agent</h2>\n", f);
	if (r->npoints)
		rc = agent_charts(r, t0, t1, f);
	else
		fputs("<p>no CPU samples in the range (record them with <code>agent record</code>)</p>\n", f);
	query_result_free(r);
	if (rc == 0 && (set.total || a.compare || a.offcpu))
		flame_html_assets(f);
	if (rc == 0 && set.total) {
		fputs("<h2 id=\"flame-graph\">Flame graph, callers and callees</h2>\n", f);
		struct flame_tree t;
		rc = flame_tree_init(&t);
		if (rc == 0) {
			struct flame_opts fo = {.process_level = true};
			rc = flame_tree_add(&t, &set, 0, &fo);
			if (rc == 0) {
				struct flame_render fr = {.title = NULL};
				rc = flame_html_embed(&t, &fr, "flame", f);
			}
			flame_tree_free(&t);
		}
	}
	if (rc == 0 && a.offcpu)
		rc = offcpu_section(st, &qo, t0, t1, f);
	if (rc == 0 && a.sens)
		rc = sens_section(st, &qo, t0, t1, deadline_ns, f);
	if (rc == 0 && a.compare)
		rc = compare(st, &qo, &a, f);
	profile_brush_script(f);
	if (!a.given)
		page_reload_script(f, 15);
	fputs("</body></html>\n", f);
	stack_set_free(&set);
	query_opts_free(&qo);
	if (rc == 0 && ferror(f))
		rc = -EFBIG;
	return rc;
}
