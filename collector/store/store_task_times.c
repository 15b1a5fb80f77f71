/* store_task_times(): task_times summed per task, with its names (store_task_times.h). */
#include "store_task_times.h"

#include <errno.h>

#include "db.h"
#include "store_priv.h"

static const char q_times[] =
	"SELECT t.pid, t.tid, SUM(t.on_cpu_ns), SUM(t.off_cpu_ns), SUM(t.switches),"
	" COALESCE(MAX(n.comm), ''), COALESCE(MAX(n.thread), '') FROM task_times t LEFT JOIN sample_tasks n"
	" ON n.session_id = t.session_id AND n.pid = t.pid AND n.tid = t.tid"
	" WHERE t.session_id = ?1 GROUP BY t.pid, t.tid ORDER BY t.pid, t.tid";

int store_task_times(struct store *s, int64_t sid, store_task_time_cb cb, void *arg)
{
	if (!store_has_table(s, "task_times"))
		return 0;
	struct db_stmt *st = store_stmt(s, q_times);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc;
	while ((rc = db_step(st)) == 1) {
		struct store_task_time_row r = {
			.pid = (int32_t)db_col_i64(st, 0),
			.tid = (int32_t)db_col_i64(st, 1),
			.on_ns = db_col_u64(st, 2),
			.off_ns = db_col_u64(st, 3),
			.switches = db_col_u64(st, 4),
			.comm = db_col_text(st, 5),
			.thread = db_col_text(st, 6),
		};
		rc = cb(&r, arg);
		if (rc < 0)
			break;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}
