/* collector report --sensitivity over a query: text and JSON (fleet_sens.h). */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "edag/edag.h"
#include "fleet_sens.h"
#include "json.h"
#include "svg.h"
#include "text_safe.h"

bool fleet_sens_groups_by(enum query_group g)
{
	return g == QUERY_BY_FUNCTION || g == QUERY_BY_MODULE;
}

static void wall(int64_t ns, char *buf, size_t len)
{
	time_t t = (time_t)(ns / 1000000000);
	struct tm tm;
	if (ns <= 0 || !gmtime_r(&t, &tm) || !strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm))
		snprintf(buf, len, "-");
}

static void figure(char *buf, size_t len, bool upper, double v)
{
	snprintf(buf, len, "%s%.3f", upper ? "<=" : "", v);
}

int fleet_sens_text(const struct fleet_sens *fs, const struct query_opts *qo, unsigned limit, FILE *out)
{
	const struct sens_fleet_result *r = &fs->r;
	if (!limit)
		limit = 20;
	FILE *ts = text_safe_open(out); /* names come from the agents' binaries */
	char from[32], to[32];
	wall(qo->f.since_ns, from, sizeof(from));
	wall(qo->f.until_ns, to, sizeof(to));
	fprintf(ts, "latency sensitivity by %s across sessions and agents (time range %s .. %s)\n",
		query_group_name(fs->by), from, to);
	if (r->groups == 0) {
		fprintf(ts, "  no trace windows with a row match (%zu session%s searched, %zu window%s out of the range or "
			    "pids, %zu of threads whose windows all were discarded; capture them with agent profile)\n",
			fs->sessions_searched, fs->sessions_searched == 1 ? "" : "s", fs->windows_out_of_range,
			fs->windows_out_of_range == 1 ? "" : "s", fs->windows_without_row);
	} else {
		char all[16];
		figure(all, sizeof(all), r->upper_bound, r->mem_share);
		fprintf(ts,
			"  %zu windows (%llu instructions) of %zu thread%s in %zu session%s of %zu agent%s: Lambda*a0 %s "
			"[%.3f, %.3f]",
			r->windows, (unsigned long long)r->insns, r->groups, r->groups == 1 ? "" : "s", r->sessions,
			r->sessions == 1 ? "" : "s", r->agents, r->agents == 1 ? "" : "s", all, r->mem_lo, r->mem_hi);
		if (r->upper_windows)
			fprintf(ts, " (%zu of the windows in upper-bound threads)", r->upper_windows);
		fputc('\n', ts);
		fprintf(ts,
			"  discarded (no row rests on them): %zu windows shorter than %u instructions, %zu cut by the "
			"stop-time limit, in those threads; %zu windows of threads whose windows all were discarded (%zu "
			"short, %zu cut)\n",
			r->discarded_short, EDAG_WINDOW_MIN_INSNS, r->discarded_cut, fs->windows_without_row,
			fs->without_row_short, fs->without_row_cut);
		if (fs->windows_out_of_range)
			fprintf(ts, "  not counted: %zu windows out of the time range or pids\n", fs->windows_out_of_range);
		if (fs->skipped)
			fprintf(ts, "  (%zu session%s left out: unreadable, see the warning above)\n", fs->skipped,
				fs->skipped == 1 ? "" : "s");
		if (r->nrows == 0)
			fprintf(ts, "  no row names a function: no window PC resolved to a symbol (--symfs DIR)\n");
		else
			fprintf(ts, "  %9s  %-15s %11s %7s %8s %9s %8s %6s  %-16s %-20s %s\n", "Lambda*a0", "interval",
				"lambda/insn", "insns%", "windows", "short/cut", "sessions", "agents", "most from agent",
				fs->by == QUERY_BY_FUNCTION ? "module" : "", fs->by == QUERY_BY_FUNCTION ? "function" : "module");
		for (size_t i = 0; i < r->nrows && i < limit; i++) {
			const struct sens_fleet_row *w = &r->rows[i];
			char f[16], iv[40], dc[48];
			figure(f, sizeof(f), w->upper_bound, w->mem_share);
			snprintf(iv, sizeof(iv), "[%.3f, %.3f]", w->mem_lo, w->mem_hi);
			snprintf(dc, sizeof(dc), "%zu/%zu", w->discarded_short, w->discarded_cut);
			fprintf(ts, "  %9s  %-15s %11.4g %6.2f%% %8zu %9s %8zu %6zu  %-16.32s %-20.40s %s\n", f, iv,
				w->lambda_per_insn, 100 * w->insn_share, w->windows, dc, w->sessions, w->agents,
				w->top_agent, w->module, w->name);
		}
		fprintf(ts, "  (Lambda*a0: the code's share of the fleet's traced time spent waiting on memory at the "
			    "baseline latency, each window weighed by its instructions; +50%% memory latency adds half of "
			    "it to the fleet's time; <=: an upper bound, the function's own cold misses are above 10%% of "
			    "its W in some of its threads; windows: the voting windows of the threads it ran in, short/cut: "
			    "those threads' windows discarded as shorter than %u instructions / cut by the stop-time "
			    "limit)\n",
			EDAG_WINDOW_MIN_INSNS);
	}
	return text_safe_close(ts, out);
}

/* Lambda*alpha0, its interval and whether it is an upper bound: the same keys for the totals and each row. */
static void json_lambda(FILE *out, double mem, double lo, double hi, bool upper)
{
	json_num_key(out, 0, "Lambda_alpha0", mem);
	json_num_key(out, 0, "Lambda_alpha0_lo", lo);
	json_num_key(out, 0, "Lambda_alpha0_hi", hi);
	json_key(out, 0, "upper_bound");
	fputs(upper ? "true" : "false", out);
}

int fleet_sens_json(const struct fleet_sens *fs, const struct query_opts *qo, unsigned limit, FILE *out)
{
	const struct sens_fleet_result *r = &fs->r;
	if (!limit)
		limit = 20;
	fputc('{', out);
	json_str_key(out, 1, "by", query_group_name(fs->by));
	json_i64_key(out, 0, "since_ns", qo->f.since_ns);
	json_i64_key(out, 0, "until_ns", qo->f.until_ns);
	json_key(out, 0, "sensitivity");
	fputc('{', out);
	json_u64_key(out, 1, "windows", r->windows);
	json_u64_key(out, 0, "upper_windows", r->upper_windows);
	json_u64_key(out, 0, "threads", r->groups);
	json_u64_key(out, 0, "sessions", r->sessions);
	json_u64_key(out, 0, "agents", r->agents);
	json_u64_key(out, 0, "insns", r->insns);
	json_lambda(out, r->mem_share, r->mem_lo, r->mem_hi, r->upper_bound);
	json_u64_key(out, 0, "sessions_searched", fs->sessions_searched);
	json_u64_key(out, 0, "skipped", fs->skipped);
	json_u64_key(out, 0, "windows_out_of_range", fs->windows_out_of_range);
	json_u64_key(out, 0, "windows_without_row", fs->windows_without_row);
	json_u64_key(out, 0, "without_row_short", fs->without_row_short);
	json_u64_key(out, 0, "without_row_cut", fs->without_row_cut);
	json_u64_key(out, 0, "window_min_insns", EDAG_WINDOW_MIN_INSNS);
	json_u64_key(out, 0, "discarded_short", r->discarded_short);
	json_u64_key(out, 0, "discarded_cut", r->discarded_cut);
	json_key(out, 0, "rows");
	fputc('[', out);
	for (size_t i = 0; i < r->nrows && i < limit; i++) {
		const struct sens_fleet_row *w = &r->rows[i];
		fputs(i ? ",{" : "{", out);
		json_str_key(out, 1, "name", w->name);
		json_str_key(out, 0, "module", w->module);
		json_lambda(out, w->mem_share, w->mem_lo, w->mem_hi, w->upper_bound);
		json_num_key(out, 0, "lambda_per_insn", w->lambda_per_insn);
		json_u64_key(out, 0, "insns", w->insns);
		json_num_key(out, 0, "insn_share", w->insn_share);
		json_u64_key(out, 0, "windows", w->windows);
		json_u64_key(out, 0, "upper_windows", w->upper_windows);
		json_u64_key(out, 0, "discarded_short", w->discarded_short);
		json_u64_key(out, 0, "discarded_cut", w->discarded_cut);
		json_u64_key(out, 0, "sessions", w->sessions);
		json_u64_key(out, 0, "agents", w->agents);
		json_str_key(out, 0, "top_agent", w->top_agent);
		fputc('}', out);
	}
	fputs("]}}\n", out);
	return ferror(out) ? -EIO : 0;
}

int fleet_sens_html(const struct fleet_sens *fs, unsigned limit, FILE *out)
{
	const struct sens_fleet_result *r = &fs->r;
	fputs("<h2 id=\"sensitivity\">Latency sensitivity per function</h2>\n", out);
	if (r->groups == 0) {
		fprintf(out,
			"<p id=\"sens-summary\" data-windows=\"0\">no trace windows with a row in the range (%zu sessions "
			"searched, %zu windows out of it; capture them with <code>agent profile</code>)</p>\n",
			fs->sessions_searched, fs->windows_out_of_range);
		return ferror(out) ? -EIO : 0;
	}
	char all[16];
	figure(all, sizeof(all), r->upper_bound, r->mem_share);
	fprintf(out,
		"<p id=\"sens-summary\" data-windows=\"%zu\" data-sessions=\"%zu\" data-agents=\"%zu\">%zu trace windows "
		"(%llu instructions) of %zu threads in %zu sessions of %zu agents: Lambda*a0 %s [%.3f, %.3f]. Lambda*a0 "
		"is the code's share of the traced time spent waiting on memory at the baseline latency (each window "
		"weighed by its instructions): +50%% memory latency adds half of it. &lt;=: an upper bound (the function's "
		"own cold misses above 10%% of its W in some of its threads). Discarded (no row rests on them): %zu "
		"windows shorter than %u instructions, %zu cut by the stop-time limit.</p>\n",
		r->windows, r->sessions, r->agents, r->windows, (unsigned long long)r->insns, r->groups, r->sessions,
		r->agents, all, r->mem_lo, r->mem_hi, r->discarded_short + fs->without_row_short, EDAG_WINDOW_MIN_INSNS,
		r->discarded_cut + fs->without_row_cut);
	fputs("<table id=\"sens-rows\"><tr><th>Lambda*a0</th><th>interval</th><th>lambda/insn</th><th>insns</th>"
	      "<th>windows</th><th>discarded short/cut</th><th>sessions</th><th>agents</th><th>most from agent</th><th>module</th><th>function</th>"
	      "</tr>\n",
	      out);
	for (size_t i = 0; i < r->nrows && i < limit; i++) {
		const struct sens_fleet_row *w = &r->rows[i];
		char f[16];
		figure(f, sizeof(f), w->upper_bound, w->mem_share);
		fprintf(out, "<tr data-share=\"%.6f\"><td>", w->mem_share);
		svg_escape(out, f);
		fprintf(out,
			"</td><td>[%.3f, %.3f]</td><td>%.4g</td><td>%.2f%%</td><td>%zu</td><td>%zu/%zu</td><td>%zu</td><td>%zu</td>"
			"<td>",
			w->mem_lo, w->mem_hi, w->lambda_per_insn, 100 * w->insn_share, w->windows, w->discarded_short,
			w->discarded_cut, w->sessions, w->agents);
		svg_escape(out, w->top_agent);
		fputs("</td><td>", out);
		svg_escape(out, w->module);
		fputs("</td><td class=\"fn\">", out);
		svg_escape(out, w->name);
		fputs("</td></tr>\n", out);
	}
	fputs("</table>\n", out);
	return ferror(out) ? -EIO : 0;
}
