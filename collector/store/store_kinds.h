/* How the store writes each record kind. A kind lives in its own file
 * (store_<kind>.c) with its tables and its writer, and is listed once in
 * store_kinds.c; the ingest accepts exactly the kinds listed there. Kinds
 * write through the database layer (db.h), so each works on both back ends. */
#ifndef COLLECTOR_STORE_KINDS_H
#define COLLECTOR_STORE_KINDS_H

#include <stdint.h>

#include "db.h"
#include "profiler.pb-c.h"
#include "store.h"

struct store_kind {
	Prof__Envelope__BodyCase body_case;
	const char *name; /* records.kind */
	/* CREATE TABLE/INDEX IF NOT EXISTS ..., run at every read-write open, in
	 * SQLite's types (db_schema_sql() adapts them for PostgreSQL). */
	const char *schema_sql;
	/* Optional: refuse a record before anything is written (-ERANGE, -EINVAL). */
	int (*check)(const Prof__Envelope *env);
	/* Write the record's rows (inside the store's open transaction). */
	int (*put)(struct store *s, int64_t sid, const Prof__Envelope *env);
};

/* NULL-terminated list (store_kinds.c). */
extern const struct store_kind *const store_kinds[];
const struct store_kind *store_kind_find(Prof__Envelope__BodyCase body_case);

/* Helpers for kind writers. */
/* A prepared statement for sql, cached in the store by the address of sql (pass a string literal or
 * a static const array). NULL on error (logged). */
struct db_stmt *store_stmt(struct store *s, const char *sql);
/* Event declarations (Counters and Samples share the events table). */
int store_put_event_descs(struct store *s, int64_t sid, Prof__EventDesc *const *ev, size_t n);

#endif
