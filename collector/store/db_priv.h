/* Internals of the database layer (db.h): the engine interface that
 * db_sqlite.c and db_pg.c implement, and the SQL rewriting of db_sql.c.
 * Not part of the API: include db.h. */
#ifndef COLLECTOR_DB_PRIV_H
#define COLLECTOR_DB_PRIV_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"

enum db_type { DBV_NULL, DBV_I64, DBV_DOUBLE, DBV_TEXT, DBV_BLOB };

struct db_value {
	enum db_type type;
	int64_t i;
	double d;
	const void *p; /* text (NUL-terminated) or blob; the engine copies it */
	size_t len;
};

struct db_ops {
	void (*close)(struct db *d);
	int (*check)(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen);
	int (*exec)(struct db *d, const char *sql, const char *what);
	bool (*has_table)(struct db *d, const char *table);
	int (*begin)(struct db *d);
	int (*commit)(struct db *d);
	void (*rollback)(struct db *d);
	int (*read_begin)(struct db *d); /* NULL: reads need none */
	void (*read_end)(struct db *d);
	int (*sync)(struct db *d);
	int (*send)(struct db *d, const char *sql, const char *what); /* NULL: exec */
	int (*prepare)(struct db *d, const char *sql, const char *what, struct db_stmt **out);
	void (*finalize)(struct db_stmt *st);
	void (*bind)(struct db_stmt *st, int i, const struct db_value *v);
	int (*run)(struct db_stmt *st);
	void (*batch)(struct db_stmt *st); /* NULL: db_batch does nothing (SQLite) */
	int64_t (*changes)(struct db *d);
	int (*step)(struct db_stmt *st);
	void (*reset)(struct db_stmt *st);
	bool (*col_null)(struct db_stmt *st, int col);
	int64_t (*col_i64)(struct db_stmt *st, int col);
	double (*col_double)(struct db_stmt *st, int col);
	const char *(*col_text)(struct db_stmt *st, int col);
	const void *(*col_blob)(struct db_stmt *st, int col, size_t *len);
};

/* The first member of each engine's connection and statement. */
struct db {
	const struct db_ops *ops;
	enum db_engine engine;
	bool damaged; /* db_damaged(): set by the engines' error paths */
	char last_error[256]; /* db_last_error(): the engine's last failure, one line */
	char name[512];
};

struct db_stmt {
	struct db *db;
};

/* `?` / `?N` placeholders to `$N` (outside quotes and comments); *nparams
 * gets the highest number. malloc'd; NULL on ENOMEM. */
char *db_sql_dollar(const char *sql, int *nparams);
/* Whole-word, case-sensitive type substitution for PostgreSQL schemas
 * (INTEGER -> BIGINT, REAL -> DOUBLE PRECISION, BLOB -> BYTEA, drop
 * " WITHOUT ROWID"). malloc'd; NULL on ENOMEM. */
char *db_sql_pg_schema(const char *sql);

#endif
