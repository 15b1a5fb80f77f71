/* Record kind trace_window: one row per window with its metadata for
 * queries, the packed TraceWindow (column-wise, delta-encoded) as the body. */
#include <errno.h>
#include <stdlib.h>

#include "log.h"
#include "store_kinds.h"
#include "store_priv.h"
#include "store_trace.h"

static const char trace_schema[] =
    "CREATE TABLE IF NOT EXISTS trace_windows (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " window_index INTEGER NOT NULL, arch INTEGER NOT NULL, pid INTEGER, tid INTEGER, t_ns INTEGER,"
    " sampled_share REAL, represented_insns INTEGER, n_insns INTEGER NOT NULL, stop_ns INTEGER,"
    " body BLOB NOT NULL, PRIMARY KEY(session_id, seq)) WITHOUT ROWID;"
    "CREATE INDEX IF NOT EXISTS trace_windows_by_index ON trace_windows(session_id, window_index);";

static const char trace_insert[] =
    "INSERT INTO trace_windows(session_id, seq, window_index, arch, pid, tid, t_ns, sampled_share,"
    " represented_insns, n_insns, stop_ns, body) VALUES (?,?,?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING";

static int put_trace_window(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__TraceWindow *tw = env->trace_window;
	size_t len = prof__trace_window__get_packed_size(tw);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	prof__trace_window__pack(tw, buf);
	struct db_stmt *st = store_stmt(s, trace_insert);
	if (!st) {
		free(buf);
		return -EIO;
	}
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_i64(st, 3, tw->window_index);
	db_bind_i64(st, 4, tw->arch);
	db_bind_i64(st, 5, tw->pid);
	db_bind_i64(st, 6, tw->tid);
	db_bind_u64(st, 7, tw->t_ns);
	db_bind_double(st, 8, tw->sampled_share);
	db_bind_u64(st, 9, tw->represented_insns);
	db_bind_i64(st, 10, (int64_t)tw->n_pc_delta);
	db_bind_u64(st, 11, tw->stop_ns);
	db_bind_blob(st, 12, buf, len);
	int rc = db_run(st);
	free(buf);
	return rc;
}

const struct store_kind store_kind_trace_window = {
    .body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW,
    .name = "trace_window",
    .schema_sql = trace_schema,
    .put = put_trace_window,
};

static const char trace_select[] = "SELECT seq, body FROM trace_windows WHERE session_id = ?1"
				   " AND (?2 < 0 OR window_index = ?2) ORDER BY window_index, seq";

int store_list_trace_windows(struct store *s, int64_t session_id, int64_t window_index, store_trace_cb cb,
			     void *arg)
{
	struct db_stmt *st = store_query(s, trace_select);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	db_bind_i64(st, 2, window_index);
	int rc = 0, src = 0;
	while (rc == 0 && (src = db_step(st)) == 1) {
		struct store_trace_row row = {.seq = db_col_u64(st, 0)};
		size_t len;
		const void *blob = db_col_blob(st, 1, &len);
		Prof__TraceWindow *tw = prof__trace_window__unpack(NULL, len, blob);
		if (!tw) {
			log_error("store: trace window (session %lld, seq %llu) does not decode: the store "
				  "is damaged",
				  (long long)session_id, (unsigned long long)row.seq);
			rc = -EIO;
			break;
		}
		row.tw = tw;
		rc = cb(&row, arg);
		prof__trace_window__free_unpacked(tw, NULL);
	}
	db_finalize(st);
	return rc == 0 && src < 0 ? src : rc;
}
