/* Database layer, SQLite engine: a thin wrapper over sqlite3. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db_priv.h"
#include "log.h"
#include "net.h"

struct sq {
	struct db base;
	sqlite3 *db;
};

struct sq_stmt {
	struct db_stmt base;
	sqlite3_stmt *st;
	const char *what;
};

static sqlite3 *conn(struct db *d) { return ((struct sq *)d)->db; }
static sqlite3_stmt *stmt(struct db_stmt *st) { return ((struct sq_stmt *)st)->st; }

static int sq_errno(int rc)
{
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	default:
		return -EIO;
	}
}

/* Errors that mean the file cannot be trusted any more: its pages are
 * malformed, it is no database, or the disk failed to read or write it. */
static bool sq_damage(int rc)
{
	int primary = rc & 0xff;
	return primary == SQLITE_CORRUPT || primary == SQLITE_NOTADB ||
	       (primary == SQLITE_IOERR && rc != SQLITE_IOERR_NOMEM);
}

static int sq_fail(struct db *d, const char *what, int rc)
{
	log_error("store %s: %.80s: %s (sqlite code %d)", d->name, what, sqlite3_errmsg(conn(d)), rc);
	d->damaged = d->damaged || sq_damage(rc);
	return sq_errno(rc);
}

static void sq_close(struct db *d)
{
	if (conn(d) && sqlite3_close(conn(d)) != SQLITE_OK)
		log_error("store %s: close: %s", d->name, sqlite3_errmsg(conn(d)));
	free(d);
}

static int sq_exec(struct db *d, const char *sql, const char *what)
{
	char *msg = NULL;
	int rc = sqlite3_exec(conn(d), sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		log_error("store %s: %s: %s", d->name, what, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		d->damaged = d->damaged || sq_damage(rc);
		return sq_errno(rc);
	}
	return 0;
}

/* The check's time budget: SQLite (3.40) runs a b-tree check as one VM
 * instruction, so a progress handler is not called during it; a watchdog
 * thread calls sqlite3_interrupt() (thread-safe) when the budget is spent. */
struct watchdog {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	bool done, fired;
	uint64_t deadline_ns;
	sqlite3 *db;
};

static void *watchdog_run(void *arg)
{
	struct watchdog *w = arg;
	struct timespec ts = {.tv_sec = (time_t)(w->deadline_ns / 1000000000u), .tv_nsec = (long)(w->deadline_ns % 1000000000u)};
	pthread_mutex_lock(&w->mu);
	while (!w->done && pthread_cond_timedwait(&w->cv, &w->mu, &ts) != ETIMEDOUT)
		;
	if (!w->done) {
		w->fired = true;
		sqlite3_interrupt(w->db);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* Append "; " and s to why, on one line (newlines become spaces), cut to whylen. */
static void why_add(char *why, size_t whylen, const char *s)
{
	if (!whylen)
		return;
	size_t n = strlen(why);
	if (n && n + 2 < whylen) {
		memcpy(why + n, "; ", 2);
		n += 2;
	}
	for (; *s && n + 1 < whylen; s++)
		why[n++] = *s == '\n' || *s == '\r' ? ' ' : *s;
	why[n] = 0;
}

static int sq_check(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen)
{
	sqlite3 *db = conn(d);
	sqlite3_stmt *st;
	int rc = sqlite3_prepare_v2(db, how == DB_CHECK_FULL ? "PRAGMA integrity_check(8)" : "PRAGMA quick_check(8)", -1,
				    &st, NULL);
	if (rc != SQLITE_OK) { /* the schema itself is unreadable (a damaged first page, or no database) */
		why_add(why, whylen, sqlite3_errmsg(db));
		if (!sq_damage(rc))
			return sq_fail(d, "integrity check", rc);
		d->damaged = true;
		return -EUCLEAN;
	}
	struct watchdog w = {.mu = PTHREAD_MUTEX_INITIALIZER, .db = db};
	pthread_t th;
	bool timed = false;
	if (budget_ms) {
		pthread_condattr_t ca;
		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&w.cv, &ca);
		pthread_condattr_destroy(&ca);
		w.deadline_ns = clock_mono_ns() + (uint64_t)budget_ms * 1000000u;
		timed = pthread_create(&th, NULL, watchdog_run, &w) == 0;
		if (!timed)
			pthread_cond_destroy(&w.cv);
	}
	int nbad = 0;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *line = (const char *)sqlite3_column_text(st, 0);
		if (!line || strcmp(line, "ok") == 0)
			continue;
		static const char prefix[] = "*** in database main ***\n";
		if (strncmp(line, prefix, sizeof(prefix) - 1) == 0)
			line += sizeof(prefix) - 1;
		if (nbad++ < 2) /* the first two problems */
			why_add(why, whylen, line);
	}
	if (timed) {
		pthread_mutex_lock(&w.mu);
		w.done = true;
		pthread_cond_signal(&w.cv);
		pthread_mutex_unlock(&w.mu);
		pthread_join(th, NULL);
		pthread_cond_destroy(&w.cv);
	}
	int err = rc == SQLITE_DONE ? 0 : rc, ext = sqlite3_extended_errcode(db);
	char msg[256];
	snprintf(msg, sizeof(msg), "%s", sqlite3_errmsg(db));
	sqlite3_finalize(st); /* also clears an interrupt that came after the last row */
	if (err == SQLITE_INTERRUPT && w.fired && !nbad)
		return 1;
	if (err && sq_damage(ext)) {
		why_add(why, whylen, msg);
		nbad++;
	} else if (err && !nbad) {
		log_error("store %s: integrity check: %s (sqlite code %d)", d->name, msg, ext);
		return sq_errno(ext);
	}
	if (!nbad)
		return 0;
	d->damaged = true;
	if (nbad > 2)
		why_add(why, whylen, "more");
	return -EUCLEAN;
}

static bool sq_has_table(struct db *d, const char *table)
{
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(conn(d), "SELECT 1 FROM sqlite_schema WHERE type = 'table' AND name = ?1", -1, &st,
			       NULL) != SQLITE_OK)
		return false;
	sqlite3_bind_text(st, 1, table, -1, SQLITE_STATIC);
	bool ok = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return ok;
}

static int sq_begin(struct db *d) { return sq_exec(d, "BEGIN IMMEDIATE", "begin"); }

/* A deferred transaction: its first read takes the lock, held to sq_read_end (#40: each statement of
 * a query took and dropped it, an fcntl and an fstat apiece, a third of a report's CPU over many stacks). */
static int sq_read_begin(struct db *d)
{
	if (!sqlite3_get_autocommit(conn(d)))
		return 0;
	int rc = sq_exec(d, "BEGIN", "begin a read");
	return rc < 0 ? rc : 1;
}

static void sq_read_end(struct db *d)
{
	if (!sqlite3_get_autocommit(conn(d)))
		sq_exec(d, "COMMIT", "end a read");
}

static int sq_commit(struct db *d)
{
	int rc = sq_exec(d, "COMMIT", "commit");
	if (rc < 0 && sqlite3_get_autocommit(conn(d)) == 0)
		sq_exec(d, "ROLLBACK", "rollback");
	return rc;
}

static void sq_rollback(struct db *d)
{
	/* SQLite may have rolled back on its own (disk full). */
	if (sqlite3_get_autocommit(conn(d)) == 0)
		sq_exec(d, "ROLLBACK", "rollback");
}

static int sq_sync(struct db *d) { return 0; }

static int sq_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out)
{
	struct sq_stmt *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.db = d;
	s->what = what;
	int rc = sqlite3_prepare_v2(conn(d), sql, -1, &s->st, NULL);
	if (rc != SQLITE_OK) {
		rc = sq_fail(d, what, rc);
		free(s);
		return rc;
	}
	*out = &s->base;
	return 0;
}

static void sq_finalize(struct db_stmt *st)
{
	sqlite3_finalize(stmt(st));
	free(st);
}

static void sq_bind(struct db_stmt *st, int i, const struct db_value *v)
{
	sqlite3_stmt *s = stmt(st);
	switch (v->type) {
	case DBV_NULL:
		sqlite3_bind_null(s, i);
		break;
	case DBV_I64:
		sqlite3_bind_int64(s, i, v->i);
		break;
	case DBV_DOUBLE:
		sqlite3_bind_double(s, i, v->d);
		break;
	case DBV_TEXT:
		sqlite3_bind_text(s, i, v->p, (int)v->len, SQLITE_TRANSIENT);
		break;
	case DBV_BLOB:
		sqlite3_bind_blob(s, i, v->p, (int)v->len, SQLITE_TRANSIENT);
		break;
	}
}

static void sq_reset(struct db_stmt *st)
{
	sqlite3_reset(stmt(st));
	sqlite3_clear_bindings(stmt(st));
}

static int sq_step(struct db_stmt *st)
{
	int rc = sqlite3_step(stmt(st));
	if (rc == SQLITE_ROW)
		return 1;
	if (rc == SQLITE_DONE)
		return 0;
	return sq_fail(st->db, ((struct sq_stmt *)st)->what, rc);
}

static int sq_run(struct db_stmt *st)
{
	int rc;
	while ((rc = sq_step(st)) == 1)
		;
	sq_reset(st);
	return rc;
}

static int64_t sq_changes(struct db *d) { return sqlite3_changes(conn(d)); }

static bool sq_col_null(struct db_stmt *st, int col) { return sqlite3_column_type(stmt(st), col) == SQLITE_NULL; }
static int64_t sq_col_i64(struct db_stmt *st, int col) { return sqlite3_column_int64(stmt(st), col); }
static double sq_col_double(struct db_stmt *st, int col) { return sqlite3_column_double(stmt(st), col); }

static const char *sq_col_text(struct db_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(stmt(st), col);
	return t ? (const char *)t : "";
}

static const void *sq_col_blob(struct db_stmt *st, int col, size_t *len)
{
	const void *b = sqlite3_column_blob(stmt(st), col);
	*len = b ? (size_t)sqlite3_column_bytes(stmt(st), col) : 0;
	return *len ? b : NULL;
}

static const struct db_ops sq_ops = {
    .close = sq_close,
    .check = sq_check,
    .exec = sq_exec,
    .has_table = sq_has_table,
    .begin = sq_begin,
    .commit = sq_commit,
    .rollback = sq_rollback,
    .read_begin = sq_read_begin,
    .read_end = sq_read_end,
    .sync = sq_sync,
    .prepare = sq_prepare,
    .finalize = sq_finalize,
    .bind = sq_bind,
    .run = sq_run,
    .changes = sq_changes,
    .step = sq_step,
    .reset = sq_reset,
    .col_null = sq_col_null,
    .col_i64 = sq_col_i64,
    .col_double = sq_col_double,
    .col_text = sq_col_text,
    .col_blob = sq_col_blob,
};

int db_open_sqlite(const char *path, bool read_only, struct db **out)
{
	*out = NULL;
	struct sq *d = calloc(1, sizeof(*d));
	if (!d)
		return -ENOMEM;
	d->base.ops = &sq_ops;
	d->base.engine = DB_SQLITE;
	snprintf(d->base.name, sizeof(d->base.name), "%s", path);
	int oflags = read_only ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	if (!read_only && strcmp(path, ":memory:") != 0 && strncmp(path, "file:", 5) != 0) {
		/* Create it 0600 ourselves (SQLite would use 0644 & ~umask): the records and the boot ids
		 * are the owner's. SQLite gives the -wal and -shm files the database file's mode. */
		int fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
		struct stat st;
		if (fd >= 0)
			close(fd);
		else if (stat(path, &st) == 0 && (st.st_mode & (S_IRWXG | S_IRWXO)))
			log_warn("store %s is accessible by group or others (mode %04o): it holds every session's "
				 "boot id and records; run chmod 600 %s (and on its -wal and -shm files)",
				 path, (unsigned)(st.st_mode & 07777), path);
	}
	int rc = sqlite3_open_v2(path, &d->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		if (!d->db) {
			log_error("store %s: cannot open: %s", path, sqlite3_errstr(rc));
			rc = -ENOMEM;
		} else if (read_only && (rc & 0xff) == SQLITE_CANTOPEN) {
			log_error("store %s: cannot open: %s: check the path (the collector creates it with "
				  "--store)",
				  path, sqlite3_errmsg(d->db));
			rc = -ENOENT;
		} else {
			log_error("store %s: cannot open: %s: check the path and its directory's permissions",
				  path, sqlite3_errmsg(d->db));
			rc = (rc & 0xff) == SQLITE_CANTOPEN ? -ENOENT : -EIO;
		}
		sq_close(&d->base);
		return rc;
	}
	sqlite3_extended_result_codes(d->db, 1);
	sqlite3_busy_timeout(d->db, 5000);
	*out = &d->base;
	return 0;
}
