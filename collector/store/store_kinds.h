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
/* The same for an INSERT whose rows may be batched (db_batch in db.h: PostgreSQL sends up to 64
 * of them as one statement before the next other statement or read). */
struct db_stmt *store_stmt_batch(struct store *s, const char *sql);
/* The record being put was sent ahead (store_ahead.h; PostgreSQL): rows keyed by its (session, seq)
 * may go without ON CONFLICT DO NOTHING (the server's check before each insert saved, #40 w40m): a row
 * already there fails it like a duplicate in the ledger (db.h: -EEXIST for records, sample_blocks and
 * sample_intervals), and the records sent ahead are redone exactly, where ON CONFLICT applies. */
bool store_put_ahead(const struct store *s);
/* Event declarations (Counters and Samples share the events table). */
int store_put_event_descs(struct store *s, int64_t sid, Prof__EventDesc *const *ev, size_t n);

#endif
