/* Internals of the PostgreSQL engine (db_pg.c: connection, pipeline, transactions;
 * db_pg_stmt.c: prepared statements, parameters, rows). Only with
 * CONFIG_STORE_POSTGRESQL; not an API: include db.h. */
#ifndef COLLECTOR_DB_PG_PRIV_H
#define COLLECTOR_DB_PG_PRIV_H

#include <libpq-fe.h>
#include <stdbool.h>
#include <stdint.h>

#include "db_priv.h"

#define OID_INT8 20
#define OID_FLOAT8 701
#define OID_BYTEA 17
#define PG_MAX_PENDING 1024 /* drain after this many queued statements */
#define PG_BATCH_LOG 6	     /* a batched statement's rows go in statements of up to 2^6 rows */
#define PG_BATCH_ROWS (1 << PG_BATCH_LOG)
/* ... and sent earlier when their values would pass this many bytes (#40 w40q) */
#define PG_BATCH_BYTES ((size_t)1 << 20)

enum pend_kind { P_CMD, P_RUN, P_PREPARE, P_QUERY, P_COMMIT, P_IGNORE, P_SYNC };

struct pend {
	enum pend_kind kind;
	const char *what;
	struct pg_stmt *query; /* P_QUERY: where the rows go */
};

struct pg {
	struct db base;
	PGconn *conn;
	unsigned gen; /* bumped when server-side statements may be gone (reconnect, failed pipeline) */
	unsigned next_name;
	struct pend *q;
	size_t qlen, qcap;
	int64_t changes;
	uint64_t statements; /* db_pg_statements() */
	uint64_t text_blobs; /* db_pg_text_blobs() */
	uint64_t syncs; /* db_pg_syncs(): drains that found every statement sent before them run */
	/* Bounded, interruptible I/O (issue 31): the socket is non-blocking; every wait polls it
	 * with a deadline and the interrupt descriptors (a stop request). */
	char *uri;
	unsigned timeout_ms;  /* statement_timeout / lock_timeout; client waits end 1 s later */
	int intr_fd[2];	      /* readable: give up waiting (-EINTR), -1 unused */
	bool sync_commit;     /* SET synchronous_commit = on in every session */
	bool read_only;	      /* opened for queries: any session will do */
	bool quiet;	      /* engine errors go to debug (the caller reports outages) */
	bool async_reconnect; /* begin() does not reconnect; the caller drives db_reconnect_poll() */
	/* The connection cannot be used any more (lost, timed out, read-only, shut down):
	 * every call fails fast until a reconnect. */
	bool broken;
	PGconn *next;	 /* reconnect in progress (PQconnectStartParams) */
	bool next_write; /* it waits for writability (else readability) */
	uint64_t next_deadline_ns;
	char last_error[256];
	/* A query whose rows come one at a time (single-row mode, db_pg_stream.c): its first row
	 * was read; the rest, its end and (sync_after) the pipeline's sync are still on the wire. */
	struct pg_stmt *streaming;
	bool sync_after;
	size_t rows_peak; /* db_rows_held_peak(): the most rows held at once */
	/* statements with batched rows not sent yet (db_pg_batch.c), in the order of their first */
	struct pg_stmt **batched;
	size_t nbatched, batchedcap;
	size_t batch_bytes, batch_bytes_peak; /* their values' bytes kept, now and at most */
};

struct pg_stmt {
	struct db_stmt base;
	char *sql;
	const char *what;
	int nparams;
	char name[24];
	unsigned gen;
	bool prepared;
	bool binary; /* its rows come in binary format (db_pg_stmt.c: blob reads) */
	/* parameters */
	char **val;
	int *len, *fmt;
	Oid *types;
	char (*num)[32];
	bool *owned;
	/* rows of the last execution */
	PGresult *res;
	int row;
	bool executed;
	uint8_t **blob;
	size_t *blobcap;
	int nblob;
	/* Single-row mode (db_pg_stream.c): open while rows may follow the one in res; the
	 * rows read ahead when another statement needed the connection (spill) and the
	 * stream's error, given by db_step after them. */
	bool stream_open;
	PGresult **spill;
	size_t nspill, spill_at, spillcap;
	int spill_rc;
	/* db_batch (db_pg_batch.c): its rows kept (brows, nparams values each) until sent as one
	 * multi-row INSERT; the SQL's head (to " VALUES ") and tail (after the row); the statement of
	 * 2^k rows prepared as mname[k] on connection generation mgen[k] */
	bool batch, queued;
	bool lead; /* the records ledger's rows: flushed before the other batched statements' */
	size_t bhead, btail;
	char **bval;
	int *blen, *bfmt;
	int brows;
	char mname[PG_BATCH_LOG + 1][24];
	unsigned mgen[PG_BATCH_LOG + 1];
	bool mprepared[PG_BATCH_LOG + 1];
};

static inline struct pg *pgd(struct db *d)
{
	return (struct pg *)d;
}
static inline struct pg_stmt *pgs(struct db_stmt *st)
{
	return (struct pg_stmt *)st;
}

/* db_pg.c: the pipeline */
int dbpg_fail(struct pg *p, const PGresult *res, const char *what);
int dbpg_push(struct pg *p, enum pend_kind kind, const char *what, struct pg_stmt *query);
int dbpg_drain(struct pg *p);
int dbpg_send_simple(struct pg *p, const char *sql, enum pend_kind kind, const char *what);
int dbpg_next_result(struct pg *p, PGresult **out, const char *what);

/* db_pg_batch.c: batched rows (db_batch) */
void dbpg_batch(struct db_stmt *st);
/* db_run of a batched statement: its parameters kept (sent at PG_BATCH_ROWS rows). */
int dbpg_batch_run(struct pg_stmt *s);
/* Before anything else is sent or read: every kept row sent, in multi-row statements. */
int dbpg_batch_flush(struct pg *p);
/* The transaction or connection ended: kept rows dropped. */
void dbpg_batch_drop(struct pg *p);
/* The statement is finalized: its kept rows sent (or dropped), its buffers freed. */
void dbpg_batch_free(struct pg_stmt *s);

/* db_pg_read.c: a read transaction (db_read_begin: one REPEATABLE READ READ ONLY snapshot) */
int dbpg_read_begin(struct db *d);
void dbpg_read_end(struct db *d);

/* db_pg_stream.c: a query's rows read one at a time */
/* Before anything else uses the connection: the streaming query's remaining rows read into
 * its spill (held until its db_step takes them), its end and sync read. */
void dbpg_settle(struct pg *p);
/* The streaming s's next row into s->res (1), 0 at its end, or the stream's error. */
int dbpg_stream_next(struct pg *p, struct pg_stmt *s);
/* The rest of s's rows read and dropped (db_reset before the last row), its spill freed. */
void dbpg_stream_close(struct pg *p, struct pg_stmt *s);
/* The connection was replaced or given up: the streaming query ends with -ECONNRESET. */
void dbpg_stream_lost(struct pg *p);

/* db_pg_stmt.c: the statement operations of pg_ops */
int dbpg_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out);
void dbpg_finalize(struct db_stmt *st);
void dbpg_bind(struct db_stmt *st, int i, const struct db_value *v);
int dbpg_run(struct db_stmt *st);
int64_t dbpg_changes(struct db *d);
int dbpg_step(struct db_stmt *st);
void dbpg_reset(struct db_stmt *st);
bool dbpg_col_null(struct db_stmt *st, int col);
int64_t dbpg_col_i64(struct db_stmt *st, int col);
double dbpg_col_double(struct db_stmt *st, int col);
const char *dbpg_col_text(struct db_stmt *st, int col);
const void *dbpg_col_blob(struct db_stmt *st, int col, size_t *len);

#endif
