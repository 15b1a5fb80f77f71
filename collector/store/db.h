/* The store's database layer: one small API over two engines, SQLite
 * (db_sqlite.c) and PostgreSQL through libpq (db_pg.c), so that every table
 * and query of the store is written once.
 *
 * SQL is written in SQLite's spelling with `?` / `?N` placeholders; the
 * PostgreSQL engine translates them to `$N` (db_sql.c). Write SQL both
 * engines accept: INSERT ... ON CONFLICT DO NOTHING / DO UPDATE, RETURNING,
 * quoted identifiers for keywords ("end"). Schemas go through db_schema_sql().
 *
 * Writes on PostgreSQL are pipelined (libpq pipeline mode): db_run() of a
 * statement sends it and returns without waiting, so a failure may be
 * reported by a later call (db_changes, db_step, db_sync, db_commit) of the
 * same connection; a caller that gets an error rolls the transaction back.
 * Reads (db_step) and db_changes() wait for everything sent before them.
 *
 * Functions return 0 (or a documented positive value) or a negative errno;
 * engine errors are logged once with the database's name and `what`:
 * -ENOSPC disk full, -EBUSY locked/deadlock/serialization, -ECONNRESET
 * connection lost, -EROFS read-only transaction, -ETIMEDOUT no answer in time
 * (statement_timeout, or the client's wait), -EINTR stop requested, -EACCES,
 * -ENOMEM, -EEXIST a duplicate key in the records ledger, sample_blocks or
 * sample_intervals (PostgreSQL: an insert without ON CONFLICT of a record sent
 * ahead, store_put_record_ahead), else -EIO. */
#ifndef COLLECTOR_DB_H
#define COLLECTOR_DB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum db_engine { DB_SQLITE, DB_PG };

struct db;
struct db_stmt;

/* SQLite file (":memory:" works). read_only: the file must exist. */
int db_open_sqlite(const char *path, bool read_only, struct db **out);
/* PostgreSQL sessions (issue 31). The socket is non-blocking; every wait ends early when an
 * interrupt descriptor becomes readable, and in the collector's loop (db_set_quiet) after
 * timeout_ms + 1 s, the session then running with statement_timeout = lock_timeout =
 * timeout_ms (commands such as reports and migrate may run longer queries). A connection
 * attempt gives up after timeout_ms + 1 s. Connections default to
 * application_name=DB_PG_APP_NAME, target_session_attrs=read-write (any when
 * read_only) and
 * connect_timeout = timeout_ms (the URI may override each). */
/* This build's application_name (#40 w46e, review r10 F2): builds before it named their connections
 * DB_PG_APP_NAME_OLD, so the key ids' upgrade (store_schema.c) tells an older collector's connection
 * from this build's; a URI that sets its own application_name hides that (it is then neither). */
#define DB_PG_APP_NAME "prof-collector/2"
#define DB_PG_APP_NAME_OLD "prof-collector"
#define DB_PG_DEFAULT_TIMEOUT_MS 5000u
struct db_pg_opts {
	unsigned timeout_ms; /* 0: DB_PG_DEFAULT_TIMEOUT_MS */
	/* SET synchronous_commit = on in every session: a COMMIT returns once the
	 * commit record is flushed to the server's WAL, whatever the server's default. */
	bool sync_commit;
	bool read_only; /* queries only: target_session_attrs defaults to any (a standby will do) */
	int intr_fd;	/* > 0: readable ends the connection attempt (a stop request at start-up) */
};
/* postgresql:// or postgres:// URI; o NULL: defaults, sync_commit on. -ENOTSUP when built
 * without libpq. */
int db_open_pg(const char *uri, const struct db_pg_opts *o, struct db **out);
/* Readable descriptors (-1: none) that end any wait on the server with -EINTR (a stop
 * request); the connection is then given up. No-op on SQLite. */
void db_pg_set_interrupt(struct db *d, int fd0, int fd1);
/* quiet: engine errors are logged at debug level (the caller reports outages, once) and
 * a lost connection is not re-made by db_begin: the caller drives db_reconnect_poll(). */
void db_set_quiet(struct db *d, bool quiet);
/* The connection was given up (lost, timed out, interrupted, or an error that a new
 * connection cures: read-only transaction, server shutdown): calls fail fast with
 * -ECONNRESET / -EROFS until db_reconnect_poll() returns 1. Always false on SQLite. */
bool db_needs_reconnect(const struct db *d);
/* Advance a reconnect without blocking: 1 connected (session settings applied), 0 in
 * progress, negative errno: this attempt failed (db_last_error says why), call again
 * later to start another. 1 at once when nothing needs reconnecting. */
int db_reconnect_poll(struct db *d);
/* The most rows of query results this connection has held in memory at once since it opened
 * (PostgreSQL: a query's rows come one at a time, so 1, unless a caller ran another statement
 * between two rows of a query: its remaining rows were then read ahead and held). 0 on SQLite. */
size_t db_pg_rows_held_peak(const struct db *d);
/* How many times every statement sent so far was found to have run (PostgreSQL: a drain
 * of the pipeline without an error; 0 on SQLite): a change says the statements before it
 * are settled (the store's records sent ahead, store_ahead.h). */
uint64_t db_pg_syncs(const struct db *d);
/* Statements sent to run since the connection opened (PostgreSQL; prepares and syncs not
 * counted, a batch's multi-row INSERT one); 0 on SQLite. */
uint64_t db_pg_statements(const struct db *d);
/* Blobs read in text format (hex, decoded here) since the connection opened: a statement whose rows
 * are blobs takes them in binary format (db_pg_stmt.c, by its SQL's start); 0 on SQLite. */
uint64_t db_pg_text_blobs(const struct db *d);
/* The most bytes of batched rows' values (db_batch) kept unsent at once since the connection
 * opened: at most PG_BATCH_BYTES (1 MiB) or one row (PostgreSQL); 0 on SQLite. */
size_t db_pg_batch_bytes_peak(const struct db *d);
/* current_setting(name) of this session (PostgreSQL only; -ENOTSUP on SQLite). */
int db_pg_setting(struct db *d, const char *name, char *out, size_t outlen);
/* The engine's last failure as one line ("" if none). */
const char *db_last_error(const struct db *d);
bool db_is_pg_uri(const char *path);
/* The URI with any password replaced by "***" (for logs). */
void db_redact_uri(const char *uri, char *out, size_t outlen);
/* Rolls back an open transaction. NULL is fine. */
void db_close(struct db *d);

/* Integrity check of the whole database, before anything is written.
 * SQLite: DB_CHECK_QUICK runs PRAGMA quick_check (page structure, not index
 * contents), DB_CHECK_FULL PRAGMA integrity_check; budget_ms > 0 interrupts
 * the check after that long (a large store). PostgreSQL verifies its own pages
 * (data checksums): nothing to run, the setting is logged. Returns 0 sound, 1
 * stopped by the budget (sound as far as it read), -EUCLEAN damaged (the first
 * problems in why), or another -errno (logged). */
enum db_check { DB_CHECK_QUICK, DB_CHECK_FULL };
int db_check(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen);
/* Whether an engine error since the open said the database is damaged
 * (SQLite: corrupt, not a database, an I/O error; PostgreSQL: SQLSTATE XX001
 * data corrupted, XX002 index corrupted, 58030 I/O error). Sticky. */
bool db_damaged(const struct db *d);
enum db_engine db_engine(const struct db *d);
/* Path or redacted URI, for messages. */
const char *db_name(const struct db *d);

/* One or more statements without parameters, run now (waits). */
int db_exec(struct db *d, const char *sql, const char *what);
/* Schema SQL for this engine (malloc'd; NULL on ENOMEM): on PostgreSQL the
 * words INTEGER, REAL and BLOB become BIGINT, DOUBLE PRECISION and BYTEA and
 * WITHOUT ROWID is dropped (SQLite: a copy). */
char *db_schema_sql(const struct db *d, const char *sql);
/* Whether a table exists (false on error). */
bool db_has_table(struct db *d, const char *table);

/* Transactions: SQLite BEGIN IMMEDIATE; PostgreSQL BEGIN (pipelined).
 * db_commit fails (and the transaction is gone) if anything in it failed,
 * but for -EEXIST (PostgreSQL): the transaction is then left open in its
 * failed state, for a ROLLBACK TO SAVEPOINT (db_exec) or db_rollback. */
int db_begin(struct db *d);
int db_commit(struct db *d);
void db_rollback(struct db *d);
/* A read transaction around many reads (SQLite: one lock and one look at the WAL for all of them,
 * not one per statement; PostgreSQL: REPEATABLE READ READ ONLY, one snapshot; either way the reads
 * see one state of the store): 1 if one began (end it with db_read_end), 0 if none is needed (a
 * transaction is open, a PostgreSQL connection lost), or -errno. */
int db_read_begin(struct db *d);
void db_read_end(struct db *d);
/* Wait until every statement sent so far has run; its first error, if any. */
int db_sync(struct db *d);
/* A statement without parameters, sent without waiting (PostgreSQL: pipelined, its
 * error reported by a later call); SQLite: run now (db_exec). */
int db_send(struct db *d, const char *sql, const char *what);

/* Prepare sql (placeholders ? and ?N). what names it in messages. */
int db_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out);
void db_finalize(struct db_stmt *st);
/* Bindings, 1-based; values are copied. uint64 travels as int64 (two's
 * complement), as the columns store it. Text NULL binds "". */
void db_bind_i64(struct db_stmt *st, int i, int64_t v);
void db_bind_u64(struct db_stmt *st, int i, uint64_t v);
void db_bind_double(struct db_stmt *st, int i, double v);
void db_bind_text(struct db_stmt *st, int i, const char *v);
void db_bind_blob(struct db_stmt *st, int i, const void *v, size_t len);
void db_bind_null(struct db_stmt *st, int i);

/* A statement whose rows (if any) are not needed: run it, then reset it and
 * clear its bindings. Pipelined on PostgreSQL (see above). */
int db_run(struct db_stmt *st);
/* Mark an INSERT "... VALUES (?1, ..., ?n) [tail]" whose rows may be batched (PostgreSQL, #40
 * w40m): db_run keeps its parameters and its rows go as one multi-row INSERT (up to 64 rows)
 * before anything else is sent or read on the connection, so it keeps its place relative to
 * every unbatched statement; its error is reported by that later call. Use it only for inserts
 * whose rows nothing in the transaction reads before the next other statement, and never before
 * db_changes. Other statements and SQLite: no effect. */
void db_batch(struct db_stmt *st);
/* Rows inserted/updated/deleted by the last db_run() of this connection
 * (waits for it on PostgreSQL); negative errno if it or anything before it failed. */
int64_t db_changes(struct db *d);

/* Next row: 1 row, 0 done, or negative errno. The column getters read the
 * current row; text and blobs stay valid until the next db_step/db_reset. */
int db_step(struct db_stmt *st);
/* Reset (rows done with) and clear the bindings, for the next use. */
void db_reset(struct db_stmt *st);
bool db_col_null(struct db_stmt *st, int col);
int64_t db_col_i64(struct db_stmt *st, int col);
uint64_t db_col_u64(struct db_stmt *st, int col);
double db_col_double(struct db_stmt *st, int col);
/* Never NULL ("" for NULL). */
const char *db_col_text(struct db_stmt *st, int col);
/* NULL with *len 0 for NULL or empty. */
const void *db_col_blob(struct db_stmt *st, int col, size_t *len);

#endif
