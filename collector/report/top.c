/* collector report --top: functions with the most CPU samples of a session.
 * A renderer over collector/query/ (DESIGN.md "Field profiling views": no
 * view runs its own SQL): the session's samples as the query resolves them
 * (symbols on this host, C++/Rust names demangled, the addresses of a module
 * without symbols one "[module]" row, kernel samples their kallsyms function
 * or one [kernel] row), leaf counts per (function, module). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "query/query.h"
#include "report.h"
#include "sat.h"
#include "text_safe.h"

struct func_row {
	const char *name;   /* function, or [module] for its unresolved addresses (the query's strings) */
	const char *module; /* basename of the file, "[kernel]", "[unknown]" */
	uint64_t count;	    /* samples with it as the leaf */
};

struct top {
	struct func_row *rows;
	size_t nrows;
};

static int row_cmp(const void *a, const void *b)
{
	const struct func_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	int c = strcmp(x->name, y->name);
	return c ? c : strcmp(x->module, y->module);
}

/* The session's samples through the query (one session, no other filter). */
static int session_query(struct store *st, int64_t sid, const struct report_opts *o, struct query_result **r)
{
	struct query_opts qo;
	query_opts_init(&qo, 0);
	qo.f.sessions[0] = sid;
	qo.f.nsessions = 1;
	qo.symfs = o->symfs;
	qo.debug_dir = o->debug_dir;
	qo.kallsyms = o->kallsyms;
	int rc = query_run(st, &qo, r);
	query_opts_free(&qo);
	return rc;
}

/* The query's function rows (function, module, process) merged per
 * (function, module), leaf samples only, sorted by count. */
static int top_rows(const struct query_result *r, struct top *t)
{
	memset(t, 0, sizeof(*t));
	struct query_top qt;
	int rc = query_top(r, QUERY_BY_FUNCTION, &qt);
	if (rc < 0)
		return rc;
	t->rows = calloc(qt.nrows ? qt.nrows : 1, sizeof(*t->rows));
	if (!t->rows) {
		query_top_free(&qt);
		return -ENOMEM;
	}
	for (size_t i = 0; i < qt.nrows; i++) {
		const struct query_top_row *q = &qt.rows[i];
		if (!q->self)
			continue; /* a caller only: not a row of the leaf table */
		size_t j = 0;
		while (j < t->nrows && (strcmp(t->rows[j].name, q->name) != 0 || strcmp(t->rows[j].module, q->module) != 0))
			j++;
		if (j == t->nrows)
			t->rows[t->nrows++] = (struct func_row){.name = q->name, .module = q->module};
		t->rows[j].count += q->self;
	}
	/* the row strings live in the result's pool (query_top_row: pointers into r or qt's pool) */
	for (size_t i = 0; i < t->nrows; i++) {
		t->rows[i].name = strdup(t->rows[i].name);
		t->rows[i].module = strdup(t->rows[i].module);
		if (!t->rows[i].name || !t->rows[i].module)
			rc = -ENOMEM;
	}
	query_top_free(&qt);
	if (t->nrows > 1)
		qsort(t->rows, t->nrows, sizeof(*t->rows), row_cmp);
	return rc;
}

static void free_top(struct top *t)
{
	for (size_t i = 0; i < t->nrows; i++) {
		free((char *)t->rows[i].name);
		free((char *)t->rows[i].module);
	}
	free(t->rows);
	memset(t, 0, sizeof(*t));
}

int report_function_samples(struct store *st, int64_t sid, const char *symfs, const char *func, uint64_t *count,
			    int64_t *freq_hz, uint64_t *ns)
{
	*count = 0;
	*freq_hz = 0;
	*ns = 0;
	struct query_result *r;
	struct report_opts ro = {.symfs = symfs};
	int rc = session_query(st, sid, &ro, &r);
	if (rc < 0)
		return rc;
	*freq_hz = (int64_t)r->freq_hz;
	/* the leaf samples of func (the top table's self column), each stack's time at its own
	 * period (query_stack.sample_ns: an older agent's timer period is 1/F, a newer one's 1/F +
	 * 1/128 of it), so the figure is exact whatever the records mix */
	for (size_t i = 0; i < r->nstacks; i++) {
		const struct query_stack *k = &r->stacks[i];
		if (strcmp(r->frames[k->frames[0]].function, func) != 0)
			continue;
		sat_inc_u64(count, k->count);
		sat_inc_u64(ns, sat_mul_u64(k->count, k->sample_ns));
	}
	query_result_free(r);
	return 0;
}

int report_top(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	struct query_result *r;
	int rc = session_query(st, sid, o, &r);
	if (rc < 0) {
		log_error("report --top: %s", strerror(-rc));
		return rc;
	}
	struct top t = {0};
	if (r->intervals == 0) {
		if (o->json)
			fprintf(out, "{\"top\":[],\"samples\":0}\n");
		else
			fprintf(out, "top functions: no CPU samples in session %lld (record them with `agent record`)\n",
				(long long)sid);
		goto out;
	}
	rc = top_rows(r, &t);
	if (rc < 0) {
		log_error("report --top: %s", strerror(-rc));
		goto out;
	}
	unsigned limit = o->limit ? o->limit : 20;
	if (o->json) {
		fprintf(out, "{\"samples\":%llu,\"lost\":%llu,\"backend\":\"%s\",\"event\":", (unsigned long long)r->total,
			(unsigned long long)r->lost, r->backend);
		json_string(out, r->event);
		fprintf(out, ",\"freq_hz\":%llu,\"top\":[", (unsigned long long)r->freq_hz);
		for (size_t i = 0; i < t.nrows && i < limit; i++) {
			fprintf(out, "%s{\"function\":", i ? "," : "");
			json_string(out, t.rows[i].name);
			fprintf(out, ",\"module\":");
			json_string(out, t.rows[i].module);
			fprintf(out, ",\"samples\":%llu}", (unsigned long long)t.rows[i].count);
		}
		fprintf(out, "]}\n");
	} else {
		FILE *ts = text_safe_open(out); /* module and function names come from the agent's mappings */
		fprintf(ts, "top functions: %llu samples of %s at %llu Hz over %.3f s (%s back end, %llu records, %llu lost)\n",
			(unsigned long long)r->total, r->event[0] ? r->event : "?", (unsigned long long)r->freq_hz,
			(double)r->interval_ns / 1e9, r->backend, (unsigned long long)r->intervals,
			(unsigned long long)r->lost);
		/* the module column as wide as its longest name shown (at most 48): the function column
		 * stays aligned */
		int mw = 6;
		for (size_t i = 0; i < t.nrows && i < limit; i++) {
			size_t n = strlen(t.rows[i].module);
			mw = n > (size_t)mw ? (n < 48 ? (int)n : 48) : mw;
		}
		fprintf(ts, "  %7s %10s  %-*s %s\n", "share", "samples", mw, "module", "function");
		for (size_t i = 0; i < t.nrows && i < limit; i++)
			fprintf(ts, "  %6.2f%% %10llu  %-*.48s %s\n",
				r->total ? 100.0 * (double)t.rows[i].count / (double)r->total : 0.0,
				(unsigned long long)t.rows[i].count, mw, t.rows[i].module, t.rows[i].name);
		rc = text_safe_close(ts, out);
	}
out:
	free_top(&t);
	query_result_free(r);
	return rc;
}
