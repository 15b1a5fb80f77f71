/* collector report --top: functions with the most CPU samples of a session.
 * Sampled IPs are resolved on this host (symbols.h) through the mappings the
 * agent declared; C++/Rust names demangled; the addresses of a module without
 * symbols are one "[module]" row; kernel samples one [kernel] row. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "log.h"
#include "store/db.h"
#include "report.h"
#include "store/store_kinds.h"
#include "symbols.h"
#include "text_safe.h"

struct map_row {
	int64_t id;
	int32_t pid;
	uint64_t start, end, pgoff;
	char *path;
	uint8_t bid[64];
	size_t bidlen;
};

struct func_row {
	char *name;   /* function, or [module] for its unresolved addresses */
	char *module; /* basename of the file, "[kernel]", "[unknown]" */
	uint64_t count;
};

struct top {
	struct map_row *maps;
	size_t nmaps;
	struct func_row *rows;
	size_t nrows, caprows;
	uint64_t total;
};

static const char q_maps[] = "SELECT map_id, pid, start, \"end\", pgoff, path, build_id FROM sample_mappings"
			     " WHERE session_id = ?1 ORDER BY map_id";
static const char q_keys[] = "SELECT pid, ip, kip, SUM(count) FROM cpu_samples WHERE session_id = ?1"
			     " GROUP BY pid, ip, kip";
static const char q_info[] = "SELECT COUNT(*), COALESCE(SUM(lost), 0), COALESCE(MIN(backend), 0),"
			     " COALESCE(MAX(backend), 0), COALESCE(MAX(freq_hz), 0), COALESCE(SUM(interval_ns), 0)"
			     " FROM sample_intervals WHERE session_id = ?1";
static const char q_event[] = "SELECT e.name FROM events e JOIN sample_intervals i ON i.session_id = e.session_id"
			      " AND i.event_id = e.event_id WHERE e.session_id = ?1 LIMIT 1";

static int load_maps(struct store *s, int64_t sid, struct top *t)
{
	struct db_stmt *st = store_stmt(s, q_maps);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	size_t cap = 0;
	int rc = 0;
	while ((rc = db_step(st)) == 1) {
		if (t->nmaps == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct map_row *nm = realloc(t->maps, nc * sizeof(*nm));
			if (!nm) {
				rc = -ENOMEM;
				break;
			}
			t->maps = nm;
			cap = nc;
		}
		struct map_row *m = &t->maps[t->nmaps];
		m->id = db_col_i64(st, 0);
		m->pid = (int32_t)db_col_i64(st, 1);
		m->start = db_col_u64(st, 2);
		m->end = db_col_u64(st, 3);
		m->pgoff = db_col_u64(st, 4);
		m->path = strdup(db_col_text(st, 5));
		size_t bl;
		const void *bid = db_col_blob(st, 6, &bl);
		m->bidlen = bl <= sizeof(m->bid) ? bl : 0;
		if (m->bidlen)
			memcpy(m->bid, bid, m->bidlen);
		if (!m->path) {
			rc = -ENOMEM;
			break;
		}
		t->nmaps++;
	}
	db_reset(st);
	return rc;
}

static const struct map_row *find_map(const struct top *t, int32_t pid, uint64_t ip)
{
	for (size_t i = t->nmaps; i-- > 0;)
		if (t->maps[i].pid == pid && ip >= t->maps[i].start && ip < t->maps[i].end)
			return &t->maps[i];
	return NULL;
}

static int add_row(struct top *t, const char *name, const char *module, uint64_t count)
{
	t->total += count;
	for (size_t i = 0; i < t->nrows; i++)
		if (strcmp(t->rows[i].name, name) == 0 && strcmp(t->rows[i].module, module) == 0) {
			t->rows[i].count += count;
			return 0;
		}
	if (t->nrows == t->caprows) {
		size_t nc = t->caprows ? t->caprows * 2 : 64;
		struct func_row *nr = realloc(t->rows, nc * sizeof(*nr));
		if (!nr)
			return -ENOMEM;
		t->rows = nr;
		t->caprows = nc;
	}
	struct func_row *r = &t->rows[t->nrows];
	r->name = strdup(name);
	r->module = strdup(module);
	r->count = count;
	if (!r->name || !r->module) {
		free(r->name);
		free(r->module);
		return -ENOMEM;
	}
	t->nrows++;
	return 0;
}

static int row_cmp(const void *a, const void *b)
{
	const struct func_row *x = a, *y = b;
	if (x->count != y->count)
		return x->count < y->count ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int resolve_all(struct store *s, int64_t sid, struct top *t, struct sym_resolver *sr)
{
	struct db_stmt *st = store_stmt(s, q_keys);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = 0;
	while (rc == 0 && (rc = db_step(st)) == 1) {
		int32_t pid = (int32_t)db_col_i64(st, 0);
		uint64_t ip = db_col_u64(st, 1), kip = db_col_u64(st, 2);
		uint64_t count = db_col_u64(st, 3);
		char name[512];
		if (kip || !ip) {
			snprintf(name, sizeof(name), "[kernel]");
			rc = add_row(t, name, "[kernel]", count);
			continue;
		}
		const struct map_row *m = find_map(t, pid, ip);
		if (!m) {
			rc = add_row(t, "[unknown]", "[unknown]", count);
			continue;
		}
		/* demangled functions; unresolved addresses one "[module]" row per module (sym_describe) */
		struct sym_mapping sm = {.path = m->path, .build_id = m->bid, .build_id_len = m->bidlen,
					 .start = m->start, .end = m->end, .pgoff = m->pgoff};
		struct sym_frame fr;
		sym_describe(sr, &sm, ip, 0, name, sizeof(name), &fr);
		rc = add_row(t, fr.name, fr.module, count);
	}
	db_reset(st);
	return rc;
}

static void free_top(struct top *t)
{
	for (size_t i = 0; i < t->nmaps; i++)
		free(t->maps[i].path);
	for (size_t i = 0; i < t->nrows; i++) {
		free(t->rows[i].name);
		free(t->rows[i].module);
	}
	free(t->maps);
	free(t->rows);
}

/* Every sampled IP of the session resolved into t (rows unsorted). */
static int top_load(struct store *st, int64_t sid, const char *symfs, struct top *t)
{
	struct sym_resolver *sr = NULL;
	int rc = sym_resolver_create(symfs, &sr);
	if (rc == 0)
		rc = load_maps(st, sid, t);
	if (rc == 0)
		rc = resolve_all(st, sid, t, sr);
	sym_resolver_free(sr);
	return rc;
}

int report_function_samples(struct store *st, int64_t sid, const char *symfs, const char *func, uint64_t *count,
			    int64_t *freq_hz)
{
	*count = 0;
	*freq_hz = 0;
	struct db_stmt *q = store_stmt(st, q_info);
	if (!q)
		return -EIO;
	db_bind_i64(q, 1, sid);
	int64_t nrec = 0;
	if (db_step(q) == 1) {
		nrec = db_col_i64(q, 0);
		*freq_hz = db_col_i64(q, 4);
	}
	db_reset(q);
	if (nrec == 0)
		return 0;
	struct top t;
	memset(&t, 0, sizeof(t));
	int rc = top_load(st, sid, symfs, &t);
	for (size_t i = 0; rc == 0 && i < t.nrows; i++)
		if (strcmp(t.rows[i].name, func) == 0)
			*count += t.rows[i].count;
	free_top(&t);
	return rc;
}

int report_top(struct store *st, int64_t sid, const struct report_opts *o, FILE *out)
{
	struct top t;
	memset(&t, 0, sizeof(t));
	int64_t nrec = 0, lost = 0, be_min = 0, be_max = 0, freq = 0, dur = 0;
	char event[128] = "";
	struct db_stmt *q = store_stmt(st, q_info);
	if (!q)
		return -EIO;
	db_bind_i64(q, 1, sid);
	if (db_step(q) == 1) {
		nrec = db_col_i64(q, 0);
		lost = db_col_i64(q, 1);
		be_min = db_col_i64(q, 2);
		be_max = db_col_i64(q, 3);
		freq = db_col_i64(q, 4);
		dur = db_col_i64(q, 5);
	}
	db_reset(q);
	q = store_stmt(st, q_event);
	if (q) {
		db_bind_i64(q, 1, sid);
		if (db_step(q) == 1)
			snprintf(event, sizeof(event), "%s", db_col_text(q, 0));
		db_reset(q);
	}
	if (nrec == 0) {
		if (o->json)
			fprintf(out, "{\"top\":[],\"samples\":0}\n");
		else
			fprintf(out, "top functions: no CPU samples in session %lld (record them with `agent record`)\n",
				(long long)sid);
		return 0;
	}
	int rc = top_load(st, sid, o->symfs, &t);
	if (rc < 0) {
		log_error("report --top: %s", strerror(-rc));
		goto out;
	}
	if (t.nrows > 1)
		qsort(t.rows, t.nrows, sizeof(*t.rows), row_cmp);
	unsigned limit = o->limit ? o->limit : 20;
	const char *be = be_min != be_max ? "mixed" : be_min == 1 ? "bpf" : "ring";
	if (o->json) {
		fprintf(out, "{\"samples\":%llu,\"lost\":%lld,\"backend\":\"%s\",\"event\":", (unsigned long long)t.total,
			(long long)lost, be);
		json_string(out, event);
		fprintf(out, ",\"freq_hz\":%lld,\"top\":[", (long long)freq);
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
		fprintf(ts, "top functions: %llu samples of %s at %lld Hz over %.3f s (%s back end, %lld records, %lld lost)\n",
			(unsigned long long)t.total, event[0] ? event : "?", (long long)freq, (double)dur / 1e9, be,
			(long long)nrec, (long long)lost);
		fprintf(ts, "  %7s %10s  %-24s %s\n", "share", "samples", "module", "function");
		for (size_t i = 0; i < t.nrows && i < limit; i++)
			fprintf(ts, "  %6.2f%% %10llu  %-24s %s\n",
				t.total ? 100.0 * (double)t.rows[i].count / (double)t.total : 0.0,
				(unsigned long long)t.rows[i].count, t.rows[i].module, t.rows[i].name);
		rc = text_safe_close(ts, out);
	}
out:
	free_top(&t);
	return rc;
}
