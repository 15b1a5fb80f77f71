/* PostgreSQL back end of the store (libpq), selected by store_open() when the
 * path is a postgresql:// or postgres:// URI. Several collectors may write one
 * database: the exactly-once rule is the primary key (session_id, seq) of
 * `records` and INSERT ... ON CONFLICT DO NOTHING; sessions are found or created
 * with an upsert on UNIQUE(agent_id, boot_id). The schema is versioned in
 * prof_schema_migrations and migrated under an advisory lock.
 * Record kinds: counters and heartbeats (the core). The other kinds (samples,
 * OpenCL commands, calibration, trace windows) are refused with -EOPNOTSUPP:
 * they need the SQLite store for now. The query API (store_list_*) is SQLite
 * only. Internal to store.c: include store.h. */
#ifndef COLLECTOR_STORE_PG_H
#define COLLECTOR_STORE_PG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

#define STORE_PG_SCHEMA_VERSION 1

struct store_pg;

bool store_pg_is_uri(const char *path);
/* uri_for_logs gets the URI with any password replaced by "***". */
void store_pg_redact(const char *uri, char *out, size_t outlen);
int store_pg_open(const char *uri, unsigned flags, struct store_pg **out);
void store_pg_close(struct store_pg *p);
int store_pg_begin(struct store_pg *p);
int store_pg_commit(struct store_pg *p);
void store_pg_rollback(struct store_pg *p);
bool store_pg_in_tx(const struct store_pg *p);
uint64_t store_pg_tx_records(const struct store_pg *p);
int store_pg_session_open(struct store_pg *p, const Prof__Hello *h, const char *peer, int64_t *session_id,
			  uint64_t *max_seq, bool *created);
int store_pg_put_record(struct store_pg *p, int64_t sid, const Prof__Envelope *env, size_t frame_bytes);

#endif
