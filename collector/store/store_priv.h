/* Internals shared by the store's files (store.c: open, statement cache,
 * batches, writes; store_schema.c; store_rows.c; store_query.c and the record
 * kinds' queries). Not part of
 * the store API: include store.h. */
#ifndef COLLECTOR_STORE_PRIV_H
#define COLLECTOR_STORE_PRIV_H

#include <stdbool.h>
#include <stdint.h>

#include "db.h"
#include "store.h"

#define STORE_STMT_CACHE 64

struct store {
	struct db *db; /* SQLite or PostgreSQL (db.h) */
	unsigned flags;
	bool writer; /* in store_writers: removed by a clean store_close */
	bool in_tx;
	/* A read transaction this store began (store_read_begin; PostgreSQL: one REPEATABLE READ snapshot)
	 * and how many store_read_begin calls it serves; the store_read_end of the last ends it. */
	bool read_tx;
	unsigned read_depth;
	/* For tests: called once a session's dictionary is read (store_keydict_load) */
	void (*keydict_hook)(void *arg);
	void *keydict_hook_arg;
	uint64_t tx_records;
	uint64_t keydict_loads; /* sessions' dictionaries read whole (store_keydict_load), for tests */
	/* ... and extended by the ids stored since (store_keydict_extend), for tests */
	uint64_t keydict_extends;
	/* Records sent ahead (store_ahead.h): the savepoint before them is open, tx_records then, the
	 * records since it (packed) and their bytes, redos done (and duplicates they found) since open. */
	bool ahead_sp;
	unsigned ahead_sps; /* savepoints sent in this transaction */
	uint64_t ahead_base;
	uint64_t ahead_mark; /* db_pg_syncs() when the last record was sent ahead */
	struct store_ahead_rec *ahead;
	size_t nahead, aheadcap, ahead_bytes;
	uint64_t ahead_redos, ahead_redo_dups;
	struct store_ahead_dups *redo_dups; /* per session, not taken yet (store_ahead_take_dups) */
	size_t nredo_dups, capredo_dups;
	bool put_ahead; /* the record being put was sent ahead (store_put_ahead) */
	/* the sessions' counters of the open transaction, written at its commit (store_tally.h) */
	struct store_tally *tally;
	size_t ntally, tallycap;
	/* PostgreSQL: the sessions whose row this transaction has locked (store_tally_lock) */
	int64_t *locked;
	size_t nlocked, lockedcap;
	/* the sessions' key dictionaries this writer keeps (store_keyids_w.c) */
	struct store_keyw *keyw;
	/* prepared statements, keyed by their SQL's address (store_stmt) */
	struct {
		const char *sql;
		int rows; /* store_stmt_rows: rows per statement; 0: sql as is */
		struct db_stmt *st;
	} cache[STORE_STMT_CACHE];
	int ncache;
};

/* Create or check the schema (core tables, versioned; then the record kinds'
 * tables). store_schema.c. */
int store_schema_setup(struct store *s);

/* The statement cache: the statement for (key, rows), or NULL; add one
 * prepared from sql under (key, rows) (NULL on error, logged). */
struct db_stmt *store_stmt_find(struct store *s, const char *key, int rows);
struct db_stmt *store_stmt_add(struct store *s, const char *key, int rows, const char *sql);

/* A prepared statement for sql, cached in the store by the address of sql
 * (pass a string literal or a static const array). NULL on error (logged). */
struct db_stmt *store_stmt(struct store *s, const char *sql);
/* The same for an INSERT whose rows may be batched (db_batch: PostgreSQL, #40 w40m). */
struct db_stmt *store_stmt_batch(struct store *s, const char *sql);
/* One query's statement, not cached: db_finalize it. NULL on error (logged). */
struct db_stmt *store_query(struct store *s, const char *sql);

/* collector recover, after the copy: each session's key ids cut at its first lost chunk, and the id
 * blocks that do not decode whole deleted, counted in out (store_salvage_keys.c). 0 or -errno. */
struct store_salvage_stats;
int store_salvage_key_ids(struct store *s, struct store_salvage_stats *out);

#endif
