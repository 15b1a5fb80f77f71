/* collector report over a query (no --session, or filters): the top table of
 * the samples a filter selects across sessions and agents, grouped as --by
 * says, with self and total counts and the process, module and agent of each
 * row. Rendering only: the rows come from collector/query/. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "report.h"
#include "text_safe.h"

static void wall(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (ns <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

/* w widened to s's length, at most cap. */
static int col_width(int w, const char *s, int cap)
{
	size_t n = strlen(s);
	return n > (size_t)w ? (n < (size_t)cap ? (int)n : cap) : w;
}

static double pct(uint64_t v, uint64_t total)
{
	return total ? 100.0 * (double)v / (double)total : 0.0;
}

static int json_out(const struct query_result *r, const struct query_top *t, enum query_group by, unsigned limit,
		    FILE *out)
{
	fprintf(out,
		"{\"by\":\"%s\",\"samples\":%llu,\"lost\":%llu,\"intervals\":%llu,\"skipped\":%zu,\"event\":",
		query_group_name(by), (unsigned long long)r->total, (unsigned long long)r->lost,
		(unsigned long long)r->intervals, r->skipped);
	json_string(out, r->event);
	fprintf(out, ",\"backend\":\"%s\",\"freq_hz\":%llu,\"first_ns\":%lld,\"last_ns\":%lld,\"sessions\":[",
		r->backend, (unsigned long long)r->freq_hz, (long long)r->first_ns, (long long)r->last_ns);
	for (size_t i = 0; i < r->nsessions; i++) {
		fprintf(out, "%s{\"id\":%lld,\"agent_id\":", i ? "," : "", (long long)r->sessions[i].id);
		json_string(out, r->sessions[i].agent_id);
		fprintf(out, ",\"samples\":%llu}", (unsigned long long)r->sessions[i].samples);
	}
	fprintf(out, "],\"rows\":[");
	for (size_t i = 0; i < t->nrows && i < limit; i++) {
		const struct query_top_row *row = &t->rows[i];
		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_string(out, row->name);
		fprintf(out, ",\"module\":");
		json_string(out, row->module);
		fprintf(out, ",\"process\":");
		json_string(out, row->process);
		fprintf(out, ",\"pid\":%d,\"agent_id\":", row->pid);
		json_string(out, row->agent_id);
		fprintf(out, ",\"self\":%llu,\"total\":%llu}", (unsigned long long)row->self,
			(unsigned long long)row->total);
	}
	fprintf(out, "]}\n");
	return ferror(out) ? -EIO : 0;
}

int report_query_top(const struct query_result *r, enum query_group by, unsigned limit, bool json, FILE *out)
{
	struct query_top t;
	int rc = query_top(r, by, &t);
	if (rc < 0)
		return rc;
	if (!limit)
		limit = 20;
	if (json) {
		rc = json_out(r, &t, by, limit, out);
		query_top_free(&t);
		return rc;
	}
	FILE *ts = text_safe_open(out); /* names come from the agents */
	char from[32], to[32];
	wall(r->first_ns, from, sizeof(from));
	wall(r->last_ns, to, sizeof(to));
	if (r->total == 0) {
		fprintf(ts, "no CPU samples match (%zu sessions searched; record them with `agent record`)\n",
			r->nsessions);
	} else {
		fprintf(ts, "top %s: %llu samples of %s from %zu session%s, %s .. %s (%s back end, %llu lost)\n",
			query_group_name(by), (unsigned long long)r->total, r->event[0] ? r->event : "?",
			r->nsessions, r->nsessions == 1 ? "" : "s", from, to, r->backend,
			(unsigned long long)r->lost);
		if (r->skipped)
			fprintf(ts, "  (%zu session%s left out: unreadable, see the warning above)\n",
				r->skipped, r->skipped == 1 ? "" : "s");
		bool frames = by == QUERY_BY_FUNCTION || by == QUERY_BY_MODULE;
		/* columns as wide as the longest value shown (capped), so that the last one stays aligned */
		int pw = 7, aw = 5, mw = 6;
		for (size_t i = 0; i < t.nrows && i < limit; i++) {
			pw = col_width(pw, t.rows[i].process, 32);
			aw = col_width(aw, t.rows[i].agent_id, 32);
			mw = col_width(mw, t.rows[i].module, 40);
		}
		fprintf(ts, "  %7s %10s %7s %10s  %-*s %7s  %-*s ", "self%", "self", "total%", "total", pw, "process", "pid",
			aw, "agent");
		if (by == QUERY_BY_FUNCTION)
			fprintf(ts, "%-*s function\n", mw, "module");
		else
			fprintf(ts, "%s\n", frames ? "module" : query_group_name(by));
		for (size_t i = 0; i < t.nrows && i < limit; i++) {
			const struct query_top_row *row = &t.rows[i];
			char pid[16];
			snprintf(pid, sizeof(pid), row->pid ? "%d" : "*", row->pid);
			fprintf(ts, "  %6.2f%% %10llu %6.2f%% %10llu  %-*.32s %7s  %-*.32s ", pct(row->self, r->total),
				(unsigned long long)row->self, pct(row->total, r->total),
				(unsigned long long)row->total, pw, row->process, pid, aw, row->agent_id);
			if (by == QUERY_BY_FUNCTION)
				fprintf(ts, "%-*.40s %s\n", mw, row->module, row->name);
			else
				fprintf(ts, "%s\n", row->name);
		}
	}
	rc = text_safe_close(ts, out);
	query_top_free(&t);
	return rc;
}
