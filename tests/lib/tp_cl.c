/* OpenCL commands of a store as SQL rows (tp_cl.h). */
#include "tp_cl.h"

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include <sqlite3.h>

#include "store/store.h"
#include "store/store_opencl.h"

static const char flat_schema[] =
    "CREATE TEMP TABLE cl_commands (session_id INTEGER, seq INTEGER, pid INTEGER, cmd_id INTEGER,"
    " queue_id INTEGER, type INTEGER, kernel_id INTEGER, work_dim INTEGER, gx INTEGER, gy INTEGER,"
    " gz INTEGER, lx INTEGER, ly INTEGER, lz INTEGER, ox INTEGER, oy INTEGER, oz INTEGER,"
    " queued_ns INTEGER, submit_ns INTEGER, start_ns INTEGER, end_ns INTEGER, host_enqueue_ns INTEGER,"
    " host_complete_ns INTEGER, bytes INTEGER, prev_in_queue INTEGER, n_wait INTEGER, n_read INTEGER,"
    " n_written INTEGER, dropped_before INTEGER, forced_profiling INTEGER, layer_event INTEGER)";

struct flat {
	sqlite3_stmt *ins;
	int64_t sid;
};

static int flat_row(const struct store_cl_command_row *r, void *arg)
{
	struct flat *f = arg;
	const int64_t v[] = {f->sid,
			     (int64_t)r->seq,
			     r->pid,
			     (int64_t)r->id,
			     r->queue_id,
			     r->type,
			     r->kernel_id,
			     r->work_dim,
			     (int64_t)r->global_size[0],
			     (int64_t)r->global_size[1],
			     (int64_t)r->global_size[2],
			     (int64_t)r->local_size[0],
			     (int64_t)r->local_size[1],
			     (int64_t)r->local_size[2],
			     (int64_t)r->global_offset[0],
			     (int64_t)r->global_offset[1],
			     (int64_t)r->global_offset[2],
			     (int64_t)r->queued_ns,
			     (int64_t)r->submit_ns,
			     (int64_t)r->start_ns,
			     (int64_t)r->end_ns,
			     (int64_t)r->host_enqueue_ns,
			     (int64_t)r->host_complete_ns,
			     (int64_t)r->bytes,
			     (int64_t)r->prev_in_queue,
			     (int64_t)r->n_wait,
			     (int64_t)r->n_read,
			     (int64_t)r->n_written,
			     (int64_t)r->dropped_before,
			     r->forced_profiling,
			     r->layer_event};
	sqlite3_reset(f->ins);
	for (int i = 0; i < (int)(sizeof(v) / sizeof(v[0])); i++)
		sqlite3_bind_int64(f->ins, i + 1, v[i]);
	return sqlite3_step(f->ins) == SQLITE_DONE ? 0 : -1;
}

/* Every session's commands of the store at db into temp.cl_commands of h. */
static int flatten(sqlite3 *h, const char *db)
{
	if (sqlite3_exec(h, flat_schema, NULL, NULL, NULL) != SQLITE_OK)
		return -1;
	struct store *st;
	if (store_open(db, STORE_READ_ONLY, &st) < 0)
		return -1;
	struct flat f = {0};
	sqlite3_stmt *sess = NULL;
	int rc =
	    sqlite3_prepare_v2(
		h,
		"INSERT INTO temp.cl_commands VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,"
		"?,?,?,?,?)",
		-1, &f.ins, NULL) == SQLITE_OK &&
		    sqlite3_prepare_v2(h, "SELECT id FROM s.sessions ORDER BY id", -1, &sess, NULL) ==
			SQLITE_OK
		? 0
		: -1;
	sqlite3_exec(h, "BEGIN", NULL, NULL, NULL);
	while (rc == 0 && sqlite3_step(sess) == SQLITE_ROW) {
		f.sid = sqlite3_column_int64(sess, 0);
		rc = store_cl_commands(st, f.sid, flat_row, &f) == 0 ? 0 : -1;
	}
	sqlite3_exec(h, rc == 0 ? "COMMIT" : "ROLLBACK", NULL, NULL, NULL);
	sqlite3_finalize(sess);
	sqlite3_finalize(f.ins);
	store_close(st);
	return rc;
}

/* The last store flattened, kept while its file and WAL are unchanged: a test asks many
 * questions of one finished run, and decoding every block again for each cost ~40 ms (ASan). */
static struct {
	char path[4096];
	struct stat db, wal;
	sqlite3 *h;
} cache;

static void stat_or_zero(const char *path, const char *suffix, struct stat *st)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s%s", path, suffix);
	if (stat(p, st) < 0)
		memset(st, 0, sizeof(*st));
}

static bool same(const struct stat *a, const struct stat *b)
{
	return a->st_ino == b->st_ino && a->st_size == b->st_size && a->st_mtim.tv_sec == b->st_mtim.tv_sec &&
	       a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* A connection with the store at db attached read-only as s and its commands in temp.cl_commands. */
static sqlite3 *flat_db(const char *db)
{
	struct stat d, w;
	stat_or_zero(db, "", &d);
	stat_or_zero(db, "-wal", &w);
	if (cache.h && strcmp(cache.path, db) == 0 && same(&d, &cache.db) && same(&w, &cache.wal))
		return cache.h;
	sqlite3_close(cache.h);
	memset(&cache, 0, sizeof(cache));
	char uri[4200];
	snprintf(uri, sizeof(uri), "file:%s?mode=ro", db);
	sqlite3 *h;
	if (sqlite3_open_v2(":memory:", &h, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_URI,
			    NULL) != SQLITE_OK) {
		sqlite3_close(h);
		return NULL;
	}
	sqlite3_busy_timeout(h, 5000);
	sqlite3_stmt *st = NULL;
	int ok = sqlite3_prepare_v2(h, "ATTACH ?1 AS s", -1, &st, NULL) == SQLITE_OK;
	if (ok) {
		sqlite3_bind_text(st, 1, uri, -1, SQLITE_TRANSIENT);
		ok = sqlite3_step(st) == SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (!ok || flatten(h, db) < 0) {
		fprintf(stderr, "tp_cl_int: %s: %s\n", db, sqlite3_errmsg(h));
		sqlite3_close(h);
		return NULL;
	}
	snprintf(cache.path, sizeof(cache.path), "%s", db);
	cache.db = d;
	cache.wal = w;
	cache.h = h;
	return h;
}

int64_t tp_cl_int(const char *db, const char *sql_fmt, ...)
{
	char sql[1024];
	va_list ap;
	va_start(ap, sql_fmt);
	vsnprintf(sql, sizeof(sql), sql_fmt, ap);
	va_end(ap);
	sqlite3 *h = flat_db(db);
	if (!h)
		return -1;
	int64_t v = -1;
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(h, sql, -1, &st, NULL) == SQLITE_OK) {
		if (sqlite3_step(st) == SQLITE_ROW)
			v = sqlite3_column_int64(st, 0);
		sqlite3_finalize(st);
	} else {
		fprintf(stderr, "tp_cl_int: %s: %s\n", sql, sqlite3_errmsg(h));
	}
	return v;
}
