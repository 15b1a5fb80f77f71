/* store_task_times(): task_times summed per task, with its names (store_task_times.h). */
#include "store_task_times.h"

#include <errno.h>

#include "db.h"
#include "store_priv.h"

/* Summed first, then named: the join to sample_tasks (its key (session, pid, tid): one row a task)
 * once a task, not once a row of task_times (#40 w47a: 10^5 rows 102 -> 50 ms in sqlite3). */
#define TT_NAMED(grouped, order)                                                                             \
	"SELECT g.pid, g.tid, g.rseq, g.on_ns, g.off_ns, g.sw, COALESCE(n.comm, ''), COALESCE(n.thread, '')" \
	" FROM (" grouped ") g LEFT JOIN sample_tasks n ON n.session_id = ?1 AND n.pid = g.pid AND"          \
	" n.tid = g.tid ORDER BY " order

static const char q_times[] = TT_NAMED(
    "SELECT t.pid AS pid, t.tid AS tid, -1 AS rseq, SUM(t.on_cpu_ns) AS on_ns, SUM(t.off_cpu_ns) AS off_ns,"
    " SUM(t.switches) AS sw FROM task_times t WHERE t.session_id = ?1 GROUP BY t.pid, t.tid",
    "g.pid, g.tid");

/* The same pass, a reused pid's rows per record (pid reuse, #40 w47a): the names of sample_tasks
 * are its first process's (incarnation 0); the later ones' come from sample_task_incs, the
 * caller's. The reused pids are read once, as a join to their distinct list (review r13 F1: as
 * `t.pid IN (SELECT pid FROM sample_task_incs ...)`, once PostgreSQL had analyzed the tables it
 * planned an unhashed subplan, the whole list rescanned for every task_times row: over 3 min for
 * 10^5 rows and 3*10^5 sample_task_incs rows, where this join is a hash join). The order by rseq
 * within a task is what query_task_times.c's take() relies on. */
static const char q_times_by_seq[] = TT_NAMED(
    "SELECT t.pid AS pid, t.tid AS tid, CASE WHEN r.pid IS NULL THEN -1 ELSE t.seq END AS rseq,"
    " SUM(t.on_cpu_ns) AS on_ns, SUM(t.off_cpu_ns) AS off_ns, SUM(t.switches) AS sw FROM task_times t"
    " LEFT JOIN (SELECT DISTINCT i.pid AS pid FROM sample_task_incs i WHERE i.session_id = ?1) r"
    " ON r.pid = t.pid WHERE t.session_id = ?1 GROUP BY 1, 2, 3",
    "g.pid, g.tid, g.rseq");

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
