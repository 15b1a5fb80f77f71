/* store_task_times(): task_times summed per task, with its names (store_task_times.h). */
#include "store_task_times.h"

#include <errno.h>

#include "db.h"
#include "store_priv.h"

static const char q_times[] =
	"SELECT t.pid, t.tid, -1, SUM(t.on_cpu_ns), SUM(t.off_cpu_ns), SUM(t.switches),"
	" COALESCE(MAX(n.comm), ''), COALESCE(MAX(n.thread), '') FROM task_times t LEFT JOIN sample_tasks n"
	" ON n.session_id = t.session_id AND n.pid = t.pid AND n.tid = t.tid"
	" WHERE t.session_id = ?1 GROUP BY t.pid, t.tid ORDER BY t.pid, t.tid";

/* The same pass, a reused pid's rows per record (pid reuse, #40 w47a): the names of sample_tasks
 * are its first process's (incarnation 0); the later ones' come from sample_task_incs, the
 * caller's. A pid is looked up in sample_task_incs by its primary key's prefix. */
static const char q_times_by_seq[] =
	"SELECT t.pid, t.tid, CASE WHEN EXISTS (SELECT 1 FROM sample_task_incs i WHERE i.session_id ="
	" t.session_id AND i.pid = t.pid) THEN t.seq ELSE -1 END AS rseq, SUM(t.on_cpu_ns), SUM(t.off_cpu_ns),"
	" SUM(t.switches), COALESCE(MAX(n.comm), ''), COALESCE(MAX(n.thread), '') FROM task_times t"
	" LEFT JOIN sample_tasks n ON n.session_id = t.session_id AND n.pid = t.pid AND n.tid = t.tid"
	" WHERE t.session_id = ?1 GROUP BY t.pid, t.tid, rseq ORDER BY t.pid, t.tid, rseq";

int store_task_times(struct store *s, int64_t sid, bool by_seq, store_task_time_cb cb, void *arg)
{
	if (!store_has_table(s, "task_times"))
		return 0;
	struct db_stmt *st = store_stmt(s, by_seq ? q_times_by_seq : q_times);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc;
	while ((rc = db_step(st)) == 1) {
		struct store_task_time_row r = {
			.pid = (int32_t)db_col_i64(st, 0),
			.tid = (int32_t)db_col_i64(st, 1),
			.seq = db_col_i64(st, 2),
			.on_ns = db_col_u64(st, 3),
			.off_ns = db_col_u64(st, 4),
			.switches = db_col_u64(st, 5),
			.comm = db_col_text(st, 6),
			.thread = db_col_text(st, 7),
		};
		rc = cb(&r, arg);
		if (rc < 0)
			break;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}
