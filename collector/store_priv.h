/* Internals shared by store.c (schema, writes) and store_query.c (reads).
 * Not part of the store API: include store.h instead. */
#ifndef COLLECTOR_STORE_PRIV_H
#define COLLECTOR_STORE_PRIV_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stdint.h>

#include "store.h"

enum store_stmt {
	ST_BEGIN,
	ST_COMMIT,
	ST_ROLLBACK,
	ST_SESSION_UPSERT,
	ST_MAX_SEQ,
	ST_CPU_INSERT,
	ST_GPU_INSERT,
	ST_RECORD_INSERT,
	ST_EVENT_INSERT,
	ST_SAMPLE_INSERT,
	ST_SESSION_RECORD,
	ST_HEARTBEAT,
	ST__COUNT
};

#define STORE_STMT_CACHE 64

struct store_pg;

struct store {
	struct store_pg *pg; /* PostgreSQL back end (store_pg.h); then db is NULL */
	sqlite3 *db;
	char *path;
	unsigned flags;
	bool in_tx;
	uint64_t tx_records;
	sqlite3_stmt *stmt[ST__COUNT];
	/* statements of the record-kind modules, keyed by their SQL's address */
	struct {
		const char *sql;
		sqlite3_stmt *st;
	} cache[STORE_STMT_CACHE];
	int ncache;
};

/* Queries are SQLite only: log and return -EOPNOTSUPP for a PostgreSQL store. */
int store_no_queries(struct store *s);
/* Log "store PATH: WHAT: sqlite message" and map the SQLite code to an errno. */
int store_fail(struct store *s, const char *what, int rc);
/* Prepare sql (not cached); logs on failure. */
int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st);
/* Column text as a non-NULL string. */
const char *store_col_text(sqlite3_stmt *st, int col);

#endif
