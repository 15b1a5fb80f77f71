/* Retention (store_prune.h). The tables come from the database's catalog:
 * every table with a session_id column belongs to sessions, those that also
 * have t_ns are pruned by time. */
#include "store_prune.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_keyids.h"
#include "store_priv.h"

#define MAX_TABLES 64

struct tables {
	char name[MAX_TABLES][64];
	bool timed[MAX_TABLES];
	size_t n;
};

static const char q_cols_sqlite[] = "SELECT m.name, SUM(p.name = 't_ns') FROM sqlite_schema m, pragma_table_info(m.name) p"
				    " WHERE m.type = 'table' AND p.name IN ('session_id', 't_ns') AND m.name <> 'sessions'"
				    " GROUP BY m.name HAVING SUM(p.name = 'session_id') = 1 ORDER BY m.name";
static const char q_cols_pg[] = "SELECT table_name, SUM(CASE WHEN column_name = 't_ns' THEN 1 ELSE 0 END)"
				" FROM information_schema.columns WHERE table_schema = current_schema()"
				" AND column_name IN ('session_id', 't_ns') AND table_name <> 'sessions'"
				" GROUP BY table_name HAVING SUM(CASE WHEN column_name = 'session_id' THEN 1 ELSE 0 END) = 1"
				" ORDER BY table_name";

static int list_tables(struct store *s, struct tables *t)
{
	t->n = 0;
	struct db_stmt *st = store_query(s, db_engine(s->db) == DB_PG ? q_cols_pg : q_cols_sqlite);
	if (!st)
		return -EIO;
	int rc;
	while ((rc = db_step(st)) == 1) {
		const char *name = db_col_text(st, 0);
		bool ok = strlen(name) < sizeof(t->name[0]) && t->n < MAX_TABLES;
		for (const char *c = name; ok && *c; c++)
			ok = (*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '_';
		if (!ok)
			continue; /* not one of ours: never spliced into SQL */
		snprintf(t->name[t->n], sizeof(t->name[0]), "%s", name);
		t->timed[t->n] = db_col_i64(st, 1) > 0;
		t->n++;
	}
	db_finalize(st);
	return rc < 0 ? rc : 0;
}

/* Run "sql" with ?1 = sid (and ?2 = bound when has_bound); rows changed into *rows. */
static int run_delete(struct store *s, const char *sql, int64_t sid, bool has_bound, int64_t bound, uint64_t *rows)
{
	struct db_stmt *st;
	int rc = db_prepare(s->db, sql, "prune", &st);
	if (rc < 0)
		return rc;
	db_bind_i64(st, 1, sid);
	if (has_bound)
		db_bind_i64(st, 2, bound);
	rc = db_run(st);
	int64_t n = rc == 0 ? db_changes(s->db) : rc;
	db_finalize(st);
	if (n < 0)
		return (int)n;
	*rows += (uint64_t)n;
	return 0;
}

static int delete_whole(struct store *s, const struct tables *t, int64_t sid, uint64_t *rows)
{
	char sql[160];
	/* PostgreSQL: the session's row locked first (#40 w40q), so that a collector writing to it
	 * (its counters' UPDATE at the commit) either commits before and its rows are seen by the
	 * deletes below, or finds the session gone and rolls back: no acked rows left without a
	 * session (the records ledger has no foreign key since w40m). SQLite has one writer. */
	uint64_t locked = 0;
	int rc = db_engine(s->db) == DB_PG
		     ? run_delete(s, "SELECT id FROM sessions WHERE id = ?1 FOR UPDATE", sid, false, 0, &locked)
		     : 0;
	if (rc == 0 && db_engine(s->db) == DB_PG && locked == 0)
		rc = -ENOENT;
	for (size_t i = 0; rc == 0 && i < t->n; i++) {
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE session_id = ?1", t->name[i]);
		rc = run_delete(s, sql, sid, false, 0, rows);
	}
	uint64_t sess = 0;
	if (rc == 0)
		rc = run_delete(s, "DELETE FROM sessions WHERE id = ?1", sid, false, 0, &sess);
	if (rc == 0 && sess == 0)
		rc = -ENOENT;
	if (rc == 0) /* SQLite gives the highest id again: its next session must not continue these ids */
		store_keyids_forget(s, sid);
	/* the kernel tables (KernelSymbols) of boots that no session of their agent ran on any more */
	if (rc == 0 && db_has_table(s->db, "kernel_symbols") && db_has_table(s->db, "session_kernels")) {
		struct db_stmt *st;
		rc = db_prepare(s->db,
				"DELETE FROM kernel_symbols WHERE NOT EXISTS (SELECT 1 FROM session_kernels k JOIN sessions e"
				" ON e.id = k.session_id WHERE e.agent_id = kernel_symbols.agent_id"
				" AND k.kernel_boot_id = kernel_symbols.kernel_boot_id)",
				"prune", &st);
		if (rc == 0) {
			rc = db_run(st);
			int64_t n = rc == 0 ? db_changes(s->db) : 0;
			db_finalize(st);
			*rows += n > 0 ? (uint64_t)n : 0;
		}
	}
	return rc;
}

int store_delete_session(struct store *s, int64_t sid, uint64_t *rows)
{
	struct tables t;
	uint64_t n = 0;
	int rc = list_tables(s, &t);
	if (rc == 0)
		rc = store_begin(s);
	if (rc == 0)
		rc = delete_whole(s, &t, sid, &n);
	if (rc == 0)
		rc = store_commit(s);
	else
		store_rollback(s);
	if (rows)
		*rows = n;
	return rc;
}

struct sess_row {
	int64_t id, realtime_ns, last_seen;
	bool calib;
};

static bool is_live(const struct store_prune_opts *o, const struct sess_row *r)
{
	for (size_t i = 0; i < o->nlive; i++)
		if (o->live[i] == r->id)
			return true;
	return o->live_since_s && r->last_seen >= o->live_since_s;
}

static int prune_session(struct store *s, const struct tables *t, const struct store_prune_opts *o,
			 const struct sess_row *r, struct store_prune_stats *out)
{
	bool live = is_live(o, r);
	int rc = store_begin(s);
	uint64_t rows = 0;
	if (rc < 0)
		return rc;
	if (!live && !r->calib && r->last_seen * 1000000000 < o->before_ns) {
		rc = delete_whole(s, t, r->id, &rows);
		if (rc == 0)
			rc = store_commit(s);
		else
			store_rollback(s);
		if (rc == 0) {
			out->sessions_deleted++;
			out->rows += rows;
		}
		return rc;
	}
	char sql[160];
	int64_t bound = o->before_ns - r->realtime_ns; /* t_ns below this is older than the cutoff */
	for (size_t i = 0; rc == 0 && i < t->n; i++) {
		if (!t->timed[i])
			continue;
		snprintf(sql, sizeof(sql), "DELETE FROM %s WHERE session_id = ?1 AND t_ns < ?2", t->name[i]);
		rc = run_delete(s, sql, r->id, true, bound, &rows);
	}
	if (rc == 0)
		rc = store_commit(s);
	else
		store_rollback(s);
	if (rc == 0) {
		out->rows += rows;
		out->sessions_pruned += rows > 0;
		out->sessions_kept_live += live;
	}
	return rc;
}

int store_prune(struct store *s, const struct store_prune_opts *o, struct store_prune_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (s->in_tx)
		return -EBUSY; /* the caller's batch first */
	struct tables t;
	int rc = list_tables(s, &t);
	if (rc < 0)
		return rc;
	bool have_calib = false;
	for (size_t i = 0; i < t.n; i++)
		have_calib |= strcmp(t.name[i], "calib_runs") == 0;
	struct db_stmt *st = store_query(
	    s, have_calib ? "SELECT s.id, COALESCE(s.realtime_ns, 0), COALESCE(s.last_seen, 0), s.agent_id,"
			    " CASE WHEN EXISTS (SELECT 1 FROM calib_runs c WHERE c.session_id = s.id) THEN 1 ELSE 0 END"
			    " FROM sessions s ORDER BY s.id"
			  : "SELECT s.id, COALESCE(s.realtime_ns, 0), COALESCE(s.last_seen, 0), s.agent_id, 0"
			    " FROM sessions s ORDER BY s.id");
	if (!st)
		return -EIO;
	struct sess_row *rows = NULL;
	size_t n = 0, cap = 0;
	while ((rc = db_step(st)) == 1) {
		if (o->agent_id && strcmp(db_col_text(st, 3), o->agent_id) != 0)
			continue;
		if (n == cap) {
			size_t nc = cap ? cap * 2 : 64;
			struct sess_row *nr = realloc(rows, nc * sizeof(*nr));
			if (!nr) {
				rc = -ENOMEM;
				break;
			}
			rows = nr;
			cap = nc;
		}
		rows[n++] = (struct sess_row){.id = db_col_i64(st, 0), .realtime_ns = db_col_i64(st, 1),
					      .last_seen = db_col_i64(st, 2), .calib = db_col_i64(st, 4) != 0};
	}
	db_finalize(st);
	for (size_t i = 0; rc >= 0 && i < n; i++)
		rc = prune_session(s, &t, o, &rows[i], out);
	free(rows);
	return rc < 0 ? rc : 0;
}
