/* A session's mappings and task names for the query model (query_priv.h):
 * loaded once per session, sorted by pid, found by bisection; a process
 * without a name is its lowest mapped file's basename, pid 0 "swapper". A pid
 * used again within the session: each process's names and mappings apart
 * (query_incs.c). */
#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "query_priv.h"
#include "store/store_map_blocks.h"

static const char q_maps[] = "SELECT map_id, pid, start, \"end\", pgoff, path, build_id FROM sample_mappings"
			     " WHERE session_id = ?1 ORDER BY map_id";
static const char q_map_blocks[] = "SELECT data FROM sample_map_blocks WHERE session_id = ?1 ORDER BY seq";
static const char q_tasks[] = "SELECT pid, tid, comm, thread FROM sample_tasks WHERE session_id = ?1";

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

void qm_sess_free(struct sess *se)
{
	for (size_t i = 0; i < se->nfiles; i++)
		free(se->files[i]);
	free(se->files);
	key_map_free(&se->file_ids);
	free(se->maps);
	free(se->tasks);
	free(se->incs);
	free(se->starts);
	store_perf_map_free(se->jit, se->njit);
	key_map_free(&se->frame_of_ip);
	for (size_t i = 0; se->mix && i < QM_MIX_SLOTS; i++)
		free(se->mix[i].ent);
	free(se->mix);
	memset(se, 0, sizeof(*se));
}

/* r's path (up to its first NUL, at most pathlen bytes) and build-id (left out past QM_BID_MAX bytes):
 * the session's one copy of them. */
static int map_file(struct sess *se, struct map_row *r, const char *path, size_t pathlen, const void *bid,
		    size_t bidlen)
{
	pathlen = strnlen(path, pathlen);
	if (bidlen > QM_BID_MAX)
		bidlen = 0;
	uint8_t *k = malloc(1 + bidlen + pathlen + 1);
	if (!k)
		return -ENOMEM;
	k[0] = (uint8_t)bidlen;
	if (bidlen)
		memcpy(k + 1, bid, bidlen);
	memcpy(k + 1 + bidlen, path, pathlen);
	k[1 + bidlen + pathlen] = 0;
	uint32_t idx;
	if (key_map_get(&se->file_ids, k, 1 + bidlen + pathlen, &idx)) {
		free(k);
	} else {
		if (qm_grow((void **)&se->files, &se->capfiles, se->nfiles + 1, sizeof(*se->files)) < 0 ||
		    key_map_put(&se->file_ids, k, 1 + bidlen + pathlen, (uint32_t)se->nfiles) < 0) {
			free(k);
			return -ENOMEM;
		}
		idx = (uint32_t)se->nfiles;
		se->files[se->nfiles++] = k;
	}
	const uint8_t *f = se->files[idx];
	r->bidlen = f[0];
	r->bid = f + 1;
	r->path = (const char *)f + 1 + f[0];
	return 0;
}

static int add_map(void *arg, const struct store_map *m)
{
	struct sess *se = arg;
	if (qm_grow((void **)&se->maps, &se->capmaps, se->nmaps + 1, sizeof(*se->maps)) < 0)
		return -ENOMEM;
	struct map_row *r = &se->maps[se->nmaps];
	*r = (struct map_row){.id = m->id, .pid = m->pid, .start = m->start, .end = m->end, .pgoff = m->pgoff};
	if (map_file(se, r, m->path, m->pathlen, m->build_id, m->build_id_len) < 0)
		return -ENOMEM;
	se->nmaps++;
	return 0;
}

struct map_at {
	int64_t id;
	size_t at;
};

static int cmp_map_at(const void *a, const void *b)
{
	const struct map_at *x = a, *y = b;
	return x->id != y->id ? (x->id < y->id ? -1 : 1) : (x->at < y->at ? -1 : x->at > y->at);
}

/* The maps by id, each id's first (rows, then blocks in seq order: the first declaration). */
static int first_by_id(struct sess *se)
{
	bool sorted = true; /* the usual case (ids given in order): each id's first kept in place */
	for (size_t i = 1; sorted && i < se->nmaps; i++)
		sorted = se->maps[i - 1].id <= se->maps[i].id;
	if (sorted) {
		size_t n = 0;
		for (size_t i = 0; i < se->nmaps; i++)
			if (!n || se->maps[n - 1].id != se->maps[i].id)
				se->maps[n++] = se->maps[i];
		se->nmaps = n;
		return 0;
	}
	struct map_at *o = malloc(se->nmaps * sizeof(*o));
	struct map_row *out = malloc(se->nmaps * sizeof(*out));
	if (!o || !out) {
		free(o);
		free(out);
		return -ENOMEM;
	}
	for (size_t i = 0; i < se->nmaps; i++)
		o[i] = (struct map_at){se->maps[i].id, i};
	qsort(o, se->nmaps, sizeof(*o), cmp_map_at);
	size_t n = 0;
	for (size_t i = 0; i < se->nmaps; i++) {
		struct map_row *m = &se->maps[o[i].at];
		if (!n || out[n - 1].id != m->id) /* declared again later: the first kept */
			out[n++] = *m;
	}
	free(o);
	free(se->maps);
	se->maps = out;
	se->nmaps = n;
	se->capmaps = n;
	return 0;
}

/* A record's mappings packed (store_map_blocks.h, #40 w40h): after the rows. */
static int load_map_blocks(struct store *s, struct sess *se)
{
	if (!store_has_table(s, "sample_map_blocks")) /* an older collector's store */
		return 0;
	struct db_stmt *st = store_stmt(s, q_map_blocks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	size_t before = se->nmaps;
	int rc;
	while ((rc = db_step(st)) == 1) {
		size_t zlen;
		const uint8_t *z = db_col_blob(st, 0, &zlen);
		int brc = z ? store_map_block_each(z, zlen, add_map, se) : 0;
		if (brc == -EBADMSG)
			log_warn("session %lld: a damaged mappings block (its mappings left out)", (long long)se->id);
		else if (brc < 0) {
			rc = brc;
			break;
		}
	}
	db_reset(st);
	if (rc < 0)
		return rc;
	return se->nmaps > before && se->nmaps > 1 ? first_by_id(se) : 0;
}

int qm_load_maps(struct store *s, struct sess *se)
{
	struct db_stmt *st = store_stmt(s, q_maps);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)&se->maps, &se->capmaps, se->nmaps + 1, sizeof(*se->maps)) < 0) {
			rc = -ENOMEM;
			break;
		}
		struct map_row *m = &se->maps[se->nmaps];
		m->id = db_col_i64(st, 0);
		m->pid = (int32_t)db_col_i64(st, 1);
		m->start = db_col_u64(st, 2);
		m->end = db_col_u64(st, 3);
		m->pgoff = db_col_u64(st, 4);
		size_t bl;
		const void *bid = db_col_blob(st, 6, &bl);
		const char *path = db_col_text(st, 5);
		if (map_file(se, m, path ? path : "", path ? strlen(path) : 0, bid, bl) < 0) {
			rc = -ENOMEM;
			break;
		}
		se->nmaps++;
	}
	db_reset(st);
	return rc < 0 ? rc : load_map_blocks(s, se);
}

int qm_load_tasks(struct store *s, struct build *b, struct sess *se)
{
	if (!b->have_tasks)
		return 0;
	struct db_stmt *st = store_stmt(s, q_tasks);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, se->id);
	size_t cap = 0;
	int rc;
	while ((rc = db_step(st)) == 1) {
		if (qm_grow((void **)&se->tasks, &cap, se->ntasks + 1, sizeof(*se->tasks)) < 0) {
			rc = -ENOMEM;
			break;
		}
		struct task_row *t = &se->tasks[se->ntasks];
		t->pid = (int32_t)db_col_i64(st, 0);
		t->tid = (int32_t)db_col_i64(st, 1);
		t->comm = str_pool_intern(&b->pool, db_col_text(st, 2));
		t->thread = str_pool_intern(&b->pool, db_col_text(st, 3));
		if (!t->comm || !t->thread) {
			rc = -ENOMEM;
			break;
		}
		se->ntasks++;
	}
	db_reset(st);
	return rc < 0 ? rc : 0;
}

/* Maps by (pid, map id), tasks by (pid, tid): a pid's rows are one run, found by bisection
 * (a system-wide week holds many thousands of both). */
static int map_cmp(const void *a, const void *b)
{
	const struct map_row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

static int task_cmp(const void *a, const void *b)
{
	const struct task_row *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->tid < y->tid ? -1 : x->tid > y->tid;
}

int qm_sess_sort(struct sess *se)
{
	if (se->nmaps > 1)
		qsort(se->maps, se->nmaps, sizeof(*se->maps), map_cmp);
	if (se->ntasks > 1)
		qsort(se->tasks, se->ntasks, sizeof(*se->tasks), task_cmp);
	return qm_incs_sort(se);
}

static int map_content_cmp(const void *a, const void *b, void *maps)
{
	const struct map_row *m = maps, *x = &m[*(const uint32_t *)a], *y = &m[*(const uint32_t *)b];
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end < y->end ? -1 : 1;
	if (x->pgoff != y->pgoff)
		return x->pgoff < y->pgoff ? -1 : 1;
	if (x->bidlen != y->bidlen)
		return x->bidlen < y->bidlen ? -1 : 1;
	int c = memcmp(x->bid, y->bid, x->bidlen);
	return c ? c : strcmp(x->path, y->path);
}

int qm_maps_ident(struct sess *se)
{
	if (se->nmaps > UINT32_MAX)
		return -ENOMEM;
	uint32_t *o = malloc((se->nmaps ? se->nmaps : 1) * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (size_t i = 0; i < se->nmaps; i++)
		o[i] = (uint32_t)i;
	qsort_r(o, se->nmaps, sizeof(*o), map_content_cmp, se->maps);
	for (size_t i = 0, first = 0; i < se->nmaps; i++) {
		if (i && map_content_cmp(&o[i - 1], &o[i], se->maps) != 0)
			first = i;
		se->maps[o[i]].ident = o[first];
	}
	free(o);
	return 0;
}

/* First index in rows (sorted by pid, each elem bytes with the pid at pid_off) whose pid >= pid. */
/* The first row whose pid is >= pid (after: > pid, where pid + 1 would overflow for INT32_MAX, a
 * forged store's pid: review r8) in rows sorted by pid. */
static size_t lower_pid(const void *rows, size_t n, size_t elem, size_t pid_off, int32_t pid, bool after)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		int32_t v;
		memcpy(&v, (const char *)rows + mid * elem + pid_off, sizeof(v));
		if (v < pid || (after && v == pid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The mapping of pid holding ip; the latest declared wins (a pid's maps are in declaration order), among
 * those of the pid's process inc where the pid was used again (their ids, qm_inc_map_ids). */
const struct map_row *qm_find_map(const struct sess *se, int32_t pid, uint32_t inc, uint64_t ip)
{
	int64_t lo, hi;
	qm_inc_map_ids(se, pid, inc, &lo, &hi);
	size_t i = lower_pid(se->maps, se->nmaps, sizeof(*se->maps), offsetof(struct map_row, pid), pid, true);
	while (i-- > 0 && se->maps[i].pid == pid)
		if (ip >= se->maps[i].start && ip < se->maps[i].end && se->maps[i].id >= lo && se->maps[i].id < hi)
			return &se->maps[i];
	return NULL;
}


/* Below this many mappings a process's are scanned (qm_find_map): an index costs more than it saves. */
#define QM_MIX_MIN 16

static int cmp_mix(const void *a, const void *b)
{
	const struct mix_ent *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->row < y->row ? -1 : x->row > y->row;
}

static int mix_build(const struct sess *se, struct map_index *mi, int32_t pid, uint32_t inc, size_t first,
		     size_t end)
{
	int64_t lo, hi;
	qm_inc_map_ids(se, pid, inc, &lo, &hi);
	mi->set = false;
	mi->n = 0;
	if (qm_grow((void **)&mi->ent, &mi->cap, end - first, sizeof(*mi->ent)) < 0)
		return -ENOMEM;
	for (size_t i = first; i < end; i++)
		if (se->maps[i].id >= lo && se->maps[i].id < hi)
			mi->ent[mi->n++] = (struct mix_ent){se->maps[i].start, se->maps[i].end, 0, i};
	qsort(mi->ent, mi->n, sizeof(*mi->ent), cmp_mix);
	for (size_t i = 0; i < mi->n; i++)
		mi->ent[i].maxend = i && mi->ent[i - 1].maxend > mi->ent[i].end ? mi->ent[i - 1].maxend : mi->ent[i].end;
	mi->set = true;
	mi->pid = pid;
	mi->inc = inc;
	return 0;
}

const struct map_row *qm_find_map_indexed(struct sess *se, int32_t pid, uint32_t inc, uint64_t ip)
{
	size_t first = lower_pid(se->maps, se->nmaps, sizeof(*se->maps), offsetof(struct map_row, pid), pid, false);
	size_t end = lower_pid(se->maps, se->nmaps, sizeof(*se->maps), offsetof(struct map_row, pid), pid, true);
	if (end - first < QM_MIX_MIN || (!se->mix && !(se->mix = calloc(QM_MIX_SLOTS, sizeof(*se->mix)))))
		return qm_find_map(se, pid, inc, ip);
	struct map_index *mi = &se->mix[(uint32_t)pid % QM_MIX_SLOTS];
	if ((!mi->set || mi->pid != pid || mi->inc != inc) && mix_build(se, mi, pid, inc, first, end) < 0)
		return qm_find_map(se, pid, inc, ip); /* no memory for the index: scanned */
	size_t l = 0, h = mi->n; /* the first start above ip */
	while (l < h) {
		size_t m = l + (h - l) / 2;
		if (mi->ent[m].start <= ip)
			l = m + 1;
		else
			h = m;
	}
	const struct mix_ent *best = NULL;
	for (size_t k = l; k-- > 0 && mi->ent[k].maxend > ip;)
		if (ip < mi->ent[k].end && (!best || mi->ent[k].row > best->row))
			best = &mi->ent[k];
	return best ? &se->maps[best->row] : NULL;
}

/* Process and thread names of (pid, tid) in the pid's process inc (0: the first, sample_tasks). */
void qm_task_names(const struct sess *se, int32_t pid, int32_t tid, uint32_t inc, const char **comm,
		   const char **thread)
{
	*comm = *thread = "";
	size_t i = lower_pid(se->tasks, se->ntasks, sizeof(*se->tasks), offsetof(struct task_row, pid), pid, false);
	for (; inc == 0 && i < se->ntasks && se->tasks[i].pid == pid; i++) {
		if (!**comm || se->tasks[i].tid == pid)
			*comm = se->tasks[i].comm;
		if (se->tasks[i].tid == tid)
			*thread = se->tasks[i].thread;
	}
	if (inc > 0)
		qm_inc_names(se, pid, tid, inc, comm, thread);
	if (!**comm) {
		if (pid == 0) {
			*comm = "swapper";
		} else {
			/* the executable: the file mapped lowest (programs load below their libraries) */
			const struct map_row *exe = NULL;
			int64_t lo, hi; /* the process's own mappings */
			qm_inc_map_ids(se, pid, inc, &lo, &hi);
			size_t j = lower_pid(se->maps, se->nmaps, sizeof(*se->maps),
					     offsetof(struct map_row, pid), pid, false);
			for (; j < se->nmaps && se->maps[j].pid == pid; j++)
				if (se->maps[j].path[0] == '/' && se->maps[j].id >= lo && se->maps[j].id < hi &&
				    (!exe || se->maps[j].start < exe->start))
					exe = &se->maps[j];
			if (exe)
				*comm = base_name(exe->path);
		}
	}
}
