/* The samples over time of a session (query_opts.series; query_priv.h): per
 * record and pid, filtered as the stacks are. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "query_priv.h"
#include "store/store_keyids.h"
#include "sat.h"

/* The samples over time (query_opts.series): per record and pid, from the packed blocks, and an older
 * collector's rows of the records it stored without a block (query_keys.c). */
static const char q_series[] =
    "SELECT t_ns, pid, SUM(count) FROM cpu_samples"
    " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3 GROUP BY t_ns, pid ORDER BY t_ns";
static const char q_series_uncovered[] =
    "SELECT t_ns, pid, SUM(count) FROM cpu_samples c"
    " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3"
    " AND NOT EXISTS (SELECT 1 FROM sample_blocks b WHERE b.session_id = ?1 AND b.seq = c.seq)"
    " GROUP BY t_ns, pid ORDER BY t_ns";
/* data first: PostgreSQL sends the rows in binary format (db_pg_stmt.c, by the statement's start) */
static const char q_series_blocks[] = "SELECT data, seq, 0, t_ns FROM sample_blocks"
				      " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3 ORDER BY t_ns";
/* fmt: whole keys or ids of the session's dictionary (store_keyids.h) */
static const char q_series_blocks_fmt[] = "SELECT data, seq, fmt, t_ns FROM sample_blocks"
					  " WHERE session_id = ?1 AND t_ns >= ?2 AND t_ns < ?3 ORDER BY t_ns";

/* One point of the series (query_opts.series), filtered as the stacks are. */
static int add_point(struct build *b, struct sess *se, const struct query_filter *f, int64_t t_ns,
		     int32_t pid, uint32_t inc, uint64_t count)
{
	if (f->npids && !qm_in_pid_list(f->pids, f->npids, pid))
		return 0;
	const char *comm, *thread;
	qm_task_names(se, pid, pid, inc, &comm, &thread);
	if (f->ncomms && !qm_in_str_list(f->comms, f->ncomms, comm))
		return 0;
	struct query_result *r = b->r;
	if (qm_grow((void **)&r->points, &b->cappoints, r->npoints + 1, sizeof(*r->points)) < 0)
		return -ENOMEM;
	struct query_point *pt = &r->points[r->npoints];
	pt->session_t_ns = t_ns;
	pt->t_ns = sat_add_i64(se->realtime_ns, t_ns);
	pt->session_id = se->id;
	pt->count = count;
	pt->comm = str_pool_intern(&b->pool, comm);
	pt->pid = pid;
	pt->agent_id = se->agent_id;
	if (!pt->comm)
		return -ENOMEM;
	r->npoints++;
	return 0;
}

/* The points of an older collector's rows (records without a block). */
static int series_rows(struct store *s, struct build *b, struct sess *se, const struct query_filter *f,
		       int64_t lo, int64_t hi)
{
	struct db_stmt *st = store_stmt(s, b->have_blocks ? q_series_uncovered : q_series);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	int rc = 0;
	while (rc == 0 && (rc = db_step(st)) == 1)
		rc = add_point(b, se, f, db_col_i64(st, 0), (int32_t)db_col_i64(st, 1), 0, db_col_u64(st, 2));
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* The samples over time of one session: per record (sampling interval) and
 * pid, from the packed blocks, after an older collector's rows of records
 * stored without one (those came first in time). */
int qm_read_series(struct store *s, struct build *b, struct sess *se, const struct query_filter *f,
		   int64_t lo, int64_t hi)
{
	bool rows = false;
	int rc = qm_rows_needed(s, b, se->id, &rows);
	if (rc == 0 && rows)
		rc = series_rows(s, b, se, f, lo, hi);
	if (rc < 0 || !b->have_blocks)
		return rc;
	struct store_keydict kd = {0}; /* read before the blocks: one statement at a time */
	if (b->have_key_ids && (rc = store_keydict_load(s, se->id, STORE_KEYIDS_READ_MAX, &kd)) < 0)
		return rc;
	rc = 0;
	struct db_stmt *st = store_stmt(s, b->have_key_ids ? q_series_blocks_fmt : q_series_blocks);
	if (!st) {
		store_keydict_free(&kd);
		return -EIO;
	}
	db_bind_i64(st, 1, se->id);
	db_bind_i64(st, 2, lo);
	db_bind_i64(st, 3, hi);
	/* per block: counts per pid (a record has few processes: a short list) */
	struct {
		int32_t pid;
		uint64_t count;
	} *per = NULL;
	size_t nper = 0, capper = 0;
	bool extended = false;
	while (rc == 0 && (rc = db_step(st)) == 1) {
		rc = 0;
		int64_t t = db_col_i64(st, 3), seq = db_col_i64(st, 1);
		size_t zlen, len, off = 0;
		const uint8_t *z = db_col_blob(st, 0, &zlen);
		uint8_t *owned;
		const uint8_t *p = store_block_unpack(z, zlen, &len, &owned);
		if (!p) {
			rc = -ENOMEM;
			break;
		}
		nper = 0;
		int fmt = db_col_null(st, 2) ? STORE_BLOCK_FMT_KEYS : (int)db_col_i64(st, 2);
		int64_t prev = -1;
		while (off < len) {
			struct store_block_key k;
			size_t used = store_block_next_fresh(s, se->id, p + off, len - off, fmt, &kd, &extended, &prev, &k);
			if (!used)
				break; /* damaged: read_keys warned */
			off += used;
			size_t i = 0;
			while (i < nper && per[i].pid != k.pid)
				i++;
			if (i == nper) {
				if (qm_grow((void **)&per, &capper, nper + 1, sizeof(*per)) < 0) {
					rc = -ENOMEM;
					break;
				}
				per[nper].pid = k.pid;
				per[nper++].count = 0;
			}
			sat_inc_u64(&per[i].count, k.count);
		}
		free(owned);
		for (size_t i = 0; rc == 0 && i < nper; i++)
			rc = add_point(b, se, f, t, per[i].pid, se->nstarts ? qm_inc_of(se, per[i].pid, seq) : 0,
				       per[i].count);
	}
	db_reset(st);
	free(per);
	store_keydict_free(&kd);
	return rc < 0 ? rc : 0;
}
