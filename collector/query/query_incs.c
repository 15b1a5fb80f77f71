/* A pid used again within one session (pid reuse, w44a): the names of the pid's later processes
 * (sample_task_incs: TaskName.incarnation > 0, from the first record that declared each) and, per
 * record, which of the pid's processes its keys are. The agent sends a process's samples before it
 * declares the pid's next one and never mixes two in a record (proto/samples.proto, TaskName), so the
 * keys of pid in record seq are the highest incarnation declared up to seq (0: the pid's first
 * process, named in sample_tasks as before). Each process's mappings are the pid's mapping ids from its
 * first_map_id up to the next process's. A store without the table (an older collector's), or a
 * session without a reused pid, reads as before. */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "query_priv.h"

static const char q_incs[] =
    "SELECT pid, tid, incarnation, seq, first_map_id, comm, thread FROM sample_task_incs WHERE session_id = ?1";

int qm_load_incs(struct store *s, struct build *b, struct sess *se)
{
	if (!b->have_incs)
		return 0;
	struct db_stmt *st = store_stmt(s, q_incs);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		int64_t inc = db_col_i64(st, 2), fm = db_col_null(st, 4) ? 0 : db_col_i64(st, 4);
		if (inc <= 0 || inc >= QM_INC_ANY)
			continue; /* not one the wire carries (uint32, > 0): forged, left out */
		if (qm_grow((void **)&se->incs, &cap, se->nincs + 1, sizeof(*se->incs)) < 0) {
			rc = -ENOMEM;
			break;
		}
		struct inc_row *r = &se->incs[se->nincs];
		r->pid = (int32_t)db_col_i64(st, 0);
		r->tid = (int32_t)db_col_i64(st, 1);
		r->inc = (uint32_t)inc;
		r->seq = db_col_i64(st, 3);
		r->first_map_id = fm > 0 && fm <= UINT32_MAX ? (uint32_t)fm : 0;
		r->comm = str_pool_intern(&b->pool, db_col_text(st, 5));
		r->thread = str_pool_intern(&b->pool, db_col_text(st, 6));
		if (!r->comm || !r->thread) {
			rc = -ENOMEM;
			break;
		}
		se->nincs++;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

static int inc_cmp(const void *a, const void *b)
{
	const struct inc_row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->inc != y->inc)
		return x->inc < y->inc ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

static int start_cmp(const void *a, const void *b)
{
	const struct inc_start *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->seq != y->seq)
		return x->seq < y->seq ? -1 : 1;
	return x->inc < y->inc ? -1 : x->inc > y->inc;
}

/* se->incs sorted; se->starts: one per (pid, inc) at its earliest seq, each holding the highest
 * incarnation of the pid declared up to its seq. */
int qm_incs_sort(struct sess *se)
{
	if (!se->nincs)
		return 0;
	qsort(se->incs, se->nincs, sizeof(*se->incs), inc_cmp);
	se->starts = malloc(se->nincs * sizeof(*se->starts));
	if (!se->starts)
		return -ENOMEM;
	size_t n = 0;
	for (size_t i = 0; i < se->nincs; i++) {
		const struct inc_row *r = &se->incs[i];
		struct inc_start *last = n ? &se->starts[n - 1] : NULL;
		if (last && last->pid == r->pid && last->inc == r->inc) {
			if (r->seq < last->seq)
				last->seq = r->seq;
			continue;
		}
		se->starts[n++] = (struct inc_start){r->pid, r->inc, r->seq};
	}
	qsort(se->starts, n, sizeof(*se->starts), start_cmp);
	for (size_t i = 1; i < n; i++) /* the highest declared up to there */
		if (se->starts[i].pid == se->starts[i - 1].pid && se->starts[i].inc < se->starts[i - 1].inc)
			se->starts[i].inc = se->starts[i - 1].inc;
	se->nstarts = n;
	return 0;
}

uint32_t qm_inc_of(const struct sess *se, int32_t pid, int64_t seq)
{
	size_t lo = 0, hi = se->nstarts; /* the first start after (pid, seq) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct inc_start *x = &se->starts[mid];
		if (x->pid < pid || (x->pid == pid && x->seq <= seq))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && se->starts[lo - 1].pid == pid ? se->starts[lo - 1].inc : 0;
}

/* The first of the rows of (pid, inc) or after them in se->incs (sorted by pid, inc, tid). */
static size_t rows_of(const struct sess *se, int32_t pid, uint32_t inc)
{
	size_t lo = 0, hi = se->nincs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct inc_row *r = &se->incs[mid];
		if (r->pid < pid || (r->pid == pid && r->inc < inc))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static size_t run_of(const struct sess *se, int32_t pid)
{
	return rows_of(se, pid, 0);
}

/* [lo: its rows' first_map_id (0: none known), hi: the next later process's of the pid that has one). */
void qm_inc_map_ids(const struct sess *se, int32_t pid, uint32_t inc, int64_t *lo, int64_t *hi)
{
	*lo = 0;
	*hi = INT64_MAX;
	if (inc == QM_INC_ANY || !se->nincs)
		return;
	size_t i = rows_of(se, pid, inc);
	for (; i < se->nincs && se->incs[i].pid == pid && se->incs[i].inc == inc; i++)
		if (se->incs[i].first_map_id > *lo)
			*lo = se->incs[i].first_map_id;
	for (; i < se->nincs && se->incs[i].pid == pid; i++)
		if (se->incs[i].first_map_id) {
			*hi = se->incs[i].first_map_id;
			break;
		}
}

bool qm_inc_names(const struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const char **comm,
		  const char **thread)
{
	bool any = false;
	for (size_t i = rows_of(se, pid, inc); i < se->nincs && se->incs[i].pid == pid && se->incs[i].inc == inc;
	     i++) {
		const struct inc_row *r = &se->incs[i];
		any = true;
		if (!**comm || r->tid == pid)
			*comm = r->comm;
		if (r->tid == tid)
			*thread = r->thread;
	}
	return any;
}

bool qm_pid_named(const struct sess *se, const struct query_filter *f, int32_t pid)
{
	const char *comm, *thread;
	qm_task_names(se, pid, pid, 0, &comm, &thread);
	if (qm_in_str_list(f->comms, f->ncomms, comm))
		return true;
	for (size_t i = run_of(se, pid); i < se->nincs && se->incs[i].pid == pid; i++) {
		if (i > 0 && se->incs[i - 1].pid == pid && se->incs[i - 1].inc == se->incs[i].inc)
			continue; /* one look per process */
		qm_task_names(se, pid, pid, se->incs[i].inc, &comm, &thread);
		if (qm_in_str_list(f->comms, f->ncomms, comm))
			return true;
	}
	return false;
}
