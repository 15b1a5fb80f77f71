/* Multi-row INSERTs for the store's bulk tables (counter samples, CPU
 * samples): "head (?,...),(?,...)..." with up to STORE_ROWS_MAX rows per
 * statement, one statement per power of two, so a record's rows cost a few
 * statements on either engine (and no round trip on PostgreSQL: pipelined). */
#ifndef COLLECTOR_STORE_ROWS_H
#define COLLECTOR_STORE_ROWS_H

#include <stddef.h>

#include "db.h"
#include "store.h"

#define STORE_ROWS_MAX 32

/* Bind row `row` at parameters base+1 .. base+ncols. */
typedef void (*store_row_bind)(struct db_stmt *st, int base, size_t row, void *arg);

/* head ends with "VALUES "; malloc'd SQL for nrows rows of ncols parameters. */
char *store_rows_sql(const char *head, int ncols, int nrows);
/* The cached statement for head with nrows rows (nrows 0: head as is). */
struct db_stmt *store_stmt_rows(struct store *s, const char *head, int ncols, int nrows);
/* Insert nrows rows through the statements for head. */
int store_insert_rows(struct store *s, const char *head, int ncols, size_t nrows, store_row_bind bind, void *arg);

#endif
