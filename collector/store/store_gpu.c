/* Record kind GpuCounters (proto/gpu.proto). */
#include "store_gpu.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store_kinds.h"
#include "store_priv.h"

static const char gpu_schema[] =
    "CREATE TABLE IF NOT EXISTS gpu_info (session_id INTEGER PRIMARY KEY, family TEXT, arch TEXT,"
    " gpu_id INTEGER, shader_present INTEGER, num_l2 INTEGER, bus_bytes INTEGER, iface TEXT,"
    " interval_ns INTEGER);"
    "CREATE TABLE IF NOT EXISTS gpu_counters (session_id INTEGER NOT NULL, counter_id INTEGER NOT NULL,"
    " name TEXT NOT NULL, block INTEGER, idx INTEGER, role INTEGER,"
    " PRIMARY KEY(session_id, counter_id)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS gpu_records (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " t0_ns INTEGER, t1_ns INTEGER, nrows INTEGER, dumps INTEGER, late_dumps INTEGER);"
    "CREATE TABLE IF NOT EXISTS gpu_samples (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " t0_ns INTEGER NOT NULL, t1_ns INTEGER NOT NULL, counter_id INTEGER NOT NULL, value INTEGER NOT NULL);"
    "CREATE INDEX IF NOT EXISTS gpu_samples_session ON gpu_samples(session_id, t0_ns);";

static const char info_insert[] =
    "INSERT INTO gpu_info (session_id, family, arch, gpu_id, shader_present, num_l2, bus_bytes, iface,"
    " interval_ns) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9) ON CONFLICT (session_id) DO UPDATE SET"
    " family = excluded.family, arch = excluded.arch, gpu_id = excluded.gpu_id,"
    " shader_present = excluded.shader_present, num_l2 = excluded.num_l2, bus_bytes = excluded.bus_bytes,"
    " iface = excluded.iface, interval_ns = excluded.interval_ns";
static const char counter_insert[] =
    "INSERT INTO gpu_counters (session_id, counter_id, name, block, idx, role) VALUES (?1, ?2, ?3, ?4, ?5, "
    "?6)"
    " ON CONFLICT (session_id, counter_id) DO UPDATE SET name = excluded.name, block = excluded.block,"
    " idx = excluded.idx, role = excluded.role";
static const char record_insert[] =
    "INSERT INTO gpu_records (session_id, seq, t0_ns, t1_ns, nrows, dumps, late_dumps)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)";
static const char sample_insert[] = "INSERT INTO gpu_samples (session_id, seq, t0_ns, t1_ns, counter_id, "
				    "value) VALUES (?1, ?2, ?3, ?4, ?5, ?6)";

static int put_gpu(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__GpuCounters *g = env->gpu_counters;
	struct db_stmt *st;
	int rc;
	if (g->info) {
		const Prof__GpuInfo *in = g->info;
		if (!(st = store_stmt(s, info_insert)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_text(st, 2, in->family);
		db_bind_text(st, 3, in->arch);
		db_bind_i64(st, 4, in->gpu_id);
		db_bind_u64(st, 5, in->shader_present);
		db_bind_i64(st, 6, in->num_l2);
		db_bind_i64(st, 7, in->bus_bytes);
		db_bind_text(st, 8, in->interface);
		db_bind_i64(st, 9, in->interval_ns);
		if ((rc = db_run(st)) < 0)
			return rc;
	}
	for (size_t i = 0; i < g->n_new_counters; i++) {
		const Prof__GpuCounterDesc *d = g->new_counters[i];
		if (!(st = store_stmt(s, counter_insert)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, d->id);
		db_bind_text(st, 3, d->name);
		db_bind_i64(st, 4, d->block);
		db_bind_i64(st, 5, d->index);
		db_bind_i64(st, 6, d->role);
		if ((rc = db_run(st)) < 0)
			return rc;
	}
	uint64_t t = g->t0_ns;
	size_t nc = g->n_counter_ids;
	for (size_t r = 0; r < g->n_t_ns; r++) {
		uint64_t t1 = t + g->t_ns[r];
		for (size_t c = 0; c < nc; c++) {
			uint64_t v = g->values[r * nc + c];
			if (!v)
				continue;
			if (!(st = store_stmt(s, sample_insert)))
				return -EIO;
			db_bind_i64(st, 1, sid);
			db_bind_u64(st, 2, env->seq);
			db_bind_u64(st, 3, t);
			db_bind_u64(st, 4, t1);
			db_bind_i64(st, 5, g->counter_ids[c]);
			db_bind_u64(st, 6, v);
			if ((rc = db_run(st)) < 0)
				return rc;
		}
		t = t1;
	}
	if (!(st = store_stmt(s, record_insert)))
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_u64(st, 3, g->t0_ns);
	db_bind_u64(st, 4, t);
	db_bind_i64(st, 5, (int64_t)g->n_t_ns);
	db_bind_i64(st, 6, g->dumps);
	db_bind_i64(st, 7, g->late_dumps);
	return db_run(st);
}

const struct store_kind store_kind_gpu_counters = {
    .body_case = PROF__ENVELOPE__BODY_GPU_COUNTERS,
    .name = "gpu_counters",
    .schema_sql = gpu_schema,
    .put = put_gpu,
};

/* ---------------------------------------------------------------- queries */
static void copy_text(char *dst, size_t n, const char *src)
{
	snprintf(dst, n, "%s", src ? src : "");
}

int store_gpu_col_role(const struct store_gpu_series *g, uint32_t role)
{
	for (size_t c = 0; c < g->ncols; c++)
		if (g->cols[c].role == role)
			return (int)c;
	return -1;
}

void store_gpu_free(struct store_gpu_series *g)
{
	free(g->cols);
	free(g->t0);
	free(g->t1);
	free(g->values);
	memset(g, 0, sizeof(*g));
}

int store_gpu_load(struct store *s, int64_t sid, struct store_gpu_series *g)
{
	memset(g, 0, sizeof(*g));
	if (!db_has_table(s->db, "gpu_samples"))
		return 0;
	struct db_stmt *st =
	    store_query(s, "SELECT family, arch, gpu_id, shader_present, num_l2, bus_bytes, iface,"
			   " interval_ns FROM gpu_info WHERE session_id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = db_step(st);
	if (rc == 1) {
		copy_text(g->family, sizeof(g->family), db_col_text(st, 0));
		copy_text(g->arch, sizeof(g->arch), db_col_text(st, 1));
		g->gpu_id = (uint32_t)db_col_i64(st, 2);
		g->shader_present = db_col_u64(st, 3);
		g->num_l2 = (uint32_t)db_col_i64(st, 4);
		g->bus_bytes = (uint32_t)db_col_i64(st, 5);
		copy_text(g->iface, sizeof(g->iface), db_col_text(st, 6));
		g->interval_ns = (uint32_t)db_col_i64(st, 7);
	}
	db_finalize(st);
	if (rc <= 0)
		return rc < 0 ? rc : 0; /* no GPU counters in this session */
	st = store_query(
	    s, "SELECT COUNT(*), COALESCE(SUM(dumps), 0), COALESCE(SUM(late_dumps), 0) FROM gpu_records"
	       " WHERE session_id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	if (db_step(st) == 1) {
		g->records = db_col_u64(st, 0);
		g->dumps = db_col_u64(st, 1);
		g->late_dumps = db_col_u64(st, 2);
	}
	db_finalize(st);
	st =
	    store_query(s, "SELECT counter_id, name, block, idx, role FROM gpu_counters WHERE session_id = ?1"
			   " ORDER BY counter_id");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	size_t cap = 0;
	while ((rc = db_step(st)) == 1) {
		if (g->ncols == cap) {
			cap = cap ? cap * 2 : 32;
			struct store_gpu_col *n = realloc(g->cols, cap * sizeof(*n));
			if (!n) {
				rc = -ENOMEM;
				break;
			}
			g->cols = n;
		}
		struct store_gpu_col *c = &g->cols[g->ncols++];
		c->id = (uint32_t)db_col_i64(st, 0);
		copy_text(c->name, sizeof(c->name), db_col_text(st, 1));
		c->block = (uint32_t)db_col_i64(st, 2);
		c->index = (uint32_t)db_col_i64(st, 3);
		c->role = (uint32_t)db_col_i64(st, 4);
	}
	db_finalize(st);
	if (rc < 0)
		goto fail;
	st = store_query(s, "SELECT t0_ns, t1_ns, counter_id, value FROM gpu_samples WHERE session_id = ?1"
			    " ORDER BY t0_ns, t1_ns, counter_id");
	if (!st) {
		rc = -EIO;
		goto fail;
	}
	db_bind_i64(st, 1, sid);
	cap = 0;
	while ((rc = db_step(st)) == 1) {
		uint64_t t0 = db_col_u64(st, 0), t1 = db_col_u64(st, 1);
		uint32_t id = (uint32_t)db_col_i64(st, 2);
		uint64_t v = db_col_u64(st, 3);
		if (g->nrows == 0 || g->t0[g->nrows - 1] != t0 || g->t1[g->nrows - 1] != t1) {
			if (g->nrows && t0 < g->t1[g->nrows - 1])
				continue; /* overlapping (a replay of another boot?): keep the first */
			if (g->nrows == cap) {
				cap = cap ? cap * 2 : 256;
				uint64_t *a = realloc(g->t0, cap * sizeof(*a));
				if (a)
					g->t0 = a;
				uint64_t *b = realloc(g->t1, cap * sizeof(*b));
				if (b)
					g->t1 = b;
				uint64_t *c =
				    realloc(g->values, cap * (g->ncols ? g->ncols : 1) * sizeof(*c));
				if (c)
					g->values = c;
				if (!a || !b || !c) {
					rc = -ENOMEM;
					break;
				}
			}
			g->t0[g->nrows] = t0;
			g->t1[g->nrows] = t1;
			memset(&g->values[g->nrows * g->ncols], 0, g->ncols * sizeof(uint64_t));
			g->nrows++;
		}
		for (size_t c = 0; c < g->ncols; c++)
			if (g->cols[c].id == id)
				g->values[(g->nrows - 1) * g->ncols + c] += v;
	}
	db_finalize(st);
	if (rc < 0)
		goto fail;
	return 0;
fail:
	store_gpu_free(g);
	return rc;
}
