/* Record kind TargetEnd: one row per profiled command that ended, in
 * target_ends, and the query the reports use. */
#include "store_target.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "store_kinds.h"
#include "store_priv.h"

static const char target_schema[] =
	"CREATE TABLE IF NOT EXISTS target_ends (session_id INTEGER NOT NULL, seq INTEGER NOT NULL, pid INTEGER,"
	" exit_code INTEGER, term_signal INTEGER, core_dumped INTEGER, capture_inside INTEGER, capture_detail TEXT,"
	" opencl_note TEXT, PRIMARY KEY(session_id, seq)) WITHOUT ROWID;";

static const char target_insert[] =
	"INSERT INTO target_ends (session_id, seq, pid, exit_code, term_signal, core_dumped, capture_inside,"
	" capture_detail, opencl_note) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT DO NOTHING";

static int put_target(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__TargetEnd *t = env->target_end;
	struct db_stmt *st = store_stmt(s, target_insert);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_i64(st, 3, t->pid);
	db_bind_i64(st, 4, t->exit_code);
	db_bind_i64(st, 5, t->signal);
	db_bind_i64(st, 6, t->core_dumped);
	db_bind_i64(st, 7, t->capture_inside);
	db_bind_text(st, 8, t->capture_detail ? t->capture_detail : "");
	db_bind_text(st, 9, t->opencl_note ? t->opencl_note : "");
	return db_run(st);
}

const struct store_kind store_kind_target_end = {
	.body_case = PROF__ENVELOPE__BODY_TARGET_END,
	.name = "target_end",
	.schema_sql = target_schema,
	.put = put_target,
};

int store_target_end(struct store *s, int64_t sid, struct store_target_end_row *out)
{
	if (!db_has_table(s->db, "target_ends")) /* a store written before this kind, opened read-only */
		return 0;
	struct db_stmt *st = store_query(s, "SELECT pid, exit_code, term_signal, core_dumped, capture_inside, capture_detail,"
					    " opencl_note FROM target_ends WHERE session_id = ?1 ORDER BY seq DESC LIMIT 1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = db_step(st);
	if (rc == 1) {
		memset(out, 0, sizeof(*out));
		out->pid = (int32_t)db_col_i64(st, 0);
		out->exit_code = (int32_t)db_col_i64(st, 1);
		out->signal = (uint32_t)db_col_i64(st, 2);
		out->core_dumped = db_col_i64(st, 3) != 0;
		out->capture_inside = (uint32_t)db_col_i64(st, 4);
		const char *d = db_col_text(st, 5), *n = db_col_text(st, 6);
		snprintf(out->capture_detail, sizeof(out->capture_detail), "%s", d ? d : "");
		snprintf(out->opencl_note, sizeof(out->opencl_note), "%s", n ? n : "");
	}
	db_finalize(st);
	return rc;
}
