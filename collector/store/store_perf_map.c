/* Record kind PerfMap: JIT symbols from a process's /tmp/perf-PID.map
 * (proto/perf_map.proto), one row per (session, pid, start); a later line for
 * the same start (code the JIT replaced) replaces the earlier one. */
#include "store_perf_map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_kinds.h"
#include "store_priv.h"
#include "validate_perf_map.h"

static const char perf_map_schema[] =
    "CREATE TABLE IF NOT EXISTS perf_map_syms (session_id INTEGER NOT NULL, pid INTEGER NOT NULL,"
    " start INTEGER NOT NULL, size INTEGER NOT NULL, name TEXT NOT NULL,"
    " PRIMARY KEY(session_id, pid, start)) WITHOUT ROWID;";
static const char ins_sym[] =
    "INSERT INTO perf_map_syms (session_id, pid, start, size, name) VALUES (?1, ?2, ?3, ?4, ?5)"
    " ON CONFLICT (session_id, pid, start) DO UPDATE SET size = excluded.size, name = excluded.name";
static const char q_syms[] = "SELECT pid, start, size, name FROM perf_map_syms WHERE session_id = ?1"
			     " ORDER BY pid, start";

static int check_perf_map(const Prof__Envelope *env)
{
	char err[160];
	return validate_perf_map(env->perf_map, err, sizeof(err));
}

static int put_perf_map(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__PerfMap *m = env->perf_map;
	for (size_t i = 0; i < m->n_start; i++) {
		struct db_stmt *st = store_stmt(s, ins_sym);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, m->pid);
		db_bind_i64(st, 3, (int64_t)m->start[i]);
		db_bind_i64(st, 4, (int64_t)m->size[i]);
		db_bind_text(st, 5, m->name[i]);
		int rc = db_run(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

const struct store_kind store_kind_perf_map = {
    .body_case = PROF__ENVELOPE__BODY_PERF_MAP,
    .name = "perf_map",
    .schema_sql = perf_map_schema,
    .check = check_perf_map,
    .put = put_perf_map,
};

void store_perf_map_free(struct perf_map_sym *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static int by_pid_start(const void *a, const void *b)
{
	const struct perf_map_sym *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

int store_perf_map_syms(struct store *s, int64_t sid, struct perf_map_sym **out, size_t *n)
{
	*out = NULL;
	*n = 0;
	if (!store_has_table(s, "perf_map_syms"))
		return 0; /* a read-only open of a store older than the PerfMap record */
	struct db_stmt *st = store_stmt(s, q_syms);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	struct perf_map_sym *v = NULL;
	size_t cap = 0, k = 0, bytes = 0;
	int rc, cut = 0;
	while ((rc = db_step(st)) == 1) {
		const char *name = db_col_text(st, 3);
		if (k == STORE_PERF_MAP_QUERY_SYMS ||
		    (name && (bytes += strlen(name) + 1) > STORE_PERF_MAP_QUERY_BYTES)) {
			cut = 1;
			break;
		}
		uint64_t start = (uint64_t)db_col_i64(st, 1), size = (uint64_t)db_col_i64(st, 2);
		if (!name || !size || start + size < start)
			continue; /* not what the check let in: a damaged row */
		if (k == cap) {
			size_t nc = cap ? cap * 2 : 256;
			struct perf_map_sym *nv = realloc(v, nc * sizeof(*nv));
			if (!nv) {
				rc = -ENOMEM;
				break;
			}
			v = nv;
			cap = nc;
		}
		v[k] = (struct perf_map_sym){(int32_t)db_col_i64(st, 0), start, start + size, strdup(name)};
		if (!v[k].name) {
			rc = -ENOMEM;
			break;
		}
		k++;
	}
	db_reset(st);
	if (rc < 0) {
		store_perf_map_free(v, k);
		return rc;
	}
	if (k)
		qsort(v, k, sizeof(*v), by_pid_start);
	*out = v;
	*n = k;
	return cut;
}
