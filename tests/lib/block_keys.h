/* The CPU samples of a store as the tests read them (#40): sample_blocks are
 * the only store of the samples, so a test that asserts on stored samples
 * decodes the blocks (collector/store/store_blocks.h) into a temporary table
 *   block_keys(session_id, seq, t_ns, backend, event_id, pid, tid, ip, kip, stack_id, count)
 * of the connection, one row per key, in the shape of the cpu_samples rows an
 * older collector wrote, backend and event_id from the record's
 * sample_intervals row. */
#ifndef TESTS_LIB_BLOCK_KEYS_H
#define TESTS_LIB_BLOCK_KEYS_H

#include <sqlite3.h>

/* Create and fill temp.block_keys on h (a read-only connection will do);
 * 0, or an SQLite error code (a damaged block: SQLITE_CORRUPT). */
int tp_block_keys(sqlite3 *h);

/* The cpu_samples table as the collectors before #40 created it (store_samples.c then). */
#define TP_OLD_CPU_SAMPLES_SCHEMA                                                                            \
	"CREATE TABLE IF NOT EXISTS cpu_samples (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"         \
	" t_ns INTEGER NOT NULL, backend INTEGER, event_id INTEGER, pid INTEGER, tid INTEGER, ip INTEGER,"   \
	" kip INTEGER, stack_id INTEGER, count INTEGER NOT NULL);"                                           \
	"CREATE INDEX IF NOT EXISTS cpu_samples_time ON cpu_samples(session_id, t_ns);"

/* TP_OLD_CPU_SAMPLES_SCHEMA for PostgreSQL: its INTEGER columns BIGINT, as the collector's
 * db_sql_pg_schema makes them (malloc'd; NULL on ENOMEM). */
char *tp_old_cpu_samples_schema_pg(void);

/* Session sid of the store on h as a collector before sample_blocks stored it: its
 * blocks' keys as cpu_samples rows (the table created where missing), its blocks
 * deleted. 0, or an SQLite error code. */
int tp_rows_from_blocks(sqlite3 *h, long long sid);

#endif
