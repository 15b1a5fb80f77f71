/* block_keys.h: the stored sample blocks decoded into a temporary table. */
#include "block_keys.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_blocks.h"

static int insert_keys(sqlite3_stmt *ins, sqlite3_stmt *sel)
{
	int len = sqlite3_column_bytes(sel, 5);
	const uint8_t *z = sqlite3_column_blob(sel, 5);
	size_t rawlen, off = 0;
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, (size_t)len, &rawlen, &owned);
	if (!p)
		return SQLITE_NOMEM;
	int rc = SQLITE_OK;
	while (rc == SQLITE_OK && off < rawlen) {
		struct store_block_key k;
		size_t used = store_block_get(p + off, rawlen - off, &k);
		if (!used) {
			rc = SQLITE_CORRUPT;
			break;
		}
		off += used;
		for (int c = 0; c < 5; c++) /* session_id, seq, t_ns, backend, event_id */
			sqlite3_bind_value(ins, c + 1, sqlite3_column_value(sel, c));
		sqlite3_bind_int64(ins, 6, k.pid);
		sqlite3_bind_int64(ins, 7, k.tid);
		sqlite3_bind_int64(ins, 8, (sqlite3_int64)k.ip);
		sqlite3_bind_int64(ins, 9, (sqlite3_int64)k.kip);
		sqlite3_bind_int64(ins, 10, k.stack_id);
		sqlite3_bind_int64(ins, 11, (sqlite3_int64)k.count);
		rc = sqlite3_step(ins) == SQLITE_DONE ? SQLITE_OK : SQLITE_ERROR;
		sqlite3_reset(ins);
	}
	free(owned);
	return rc;
}

int tp_block_keys(sqlite3 *h)
{
	int rc = sqlite3_exec(
	    h,
	    "CREATE TEMP TABLE IF NOT EXISTS block_keys (session_id INTEGER, seq INTEGER, t_ns INTEGER,"
	    " backend INTEGER, event_id INTEGER, pid INTEGER, tid INTEGER, ip INTEGER, kip INTEGER,"
	    " stack_id INTEGER, count INTEGER); DELETE FROM temp.block_keys",
	    NULL, NULL, NULL);
	sqlite3_stmt *sel = NULL, *ins = NULL;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    h,
		    "SELECT b.session_id, b.seq, b.t_ns, i.backend, i.event_id, b.data FROM sample_blocks b"
		    " LEFT JOIN sample_intervals i ON i.session_id = b.session_id AND i.seq = b.seq",
		    -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    h, "INSERT INTO temp.block_keys VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
		    -1, &ins, NULL);
	while (rc == SQLITE_OK && sqlite3_step(sel) == SQLITE_ROW)
		rc = insert_keys(ins, sel);
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc;
}

int tp_rows_from_blocks(sqlite3 *h, long long sid)
{
	char sql[1024];
	snprintf(sql, sizeof(sql),
		 TP_OLD_CPU_SAMPLES_SCHEMA
		 "INSERT INTO cpu_samples SELECT session_id, seq, t_ns, backend, event_id,"
		 " pid, tid, ip, kip, stack_id, count FROM temp.block_keys WHERE session_id = %lld;"
		 " DELETE FROM sample_blocks WHERE session_id = %lld;",
		 sid, sid);
	int rc = tp_block_keys(h);
	return rc == SQLITE_OK ? sqlite3_exec(h, sql, NULL, NULL, NULL) : rc;
}

char *tp_old_cpu_samples_schema_pg(void)
{
	static const char from[] = " INTEGER", to[] = " BIGINT";
	const char *sql = TP_OLD_CPU_SAMPLES_SCHEMA;
	char *out = malloc(2 * sizeof(TP_OLD_CPU_SAMPLES_SCHEMA)), *o = out;
	while (out && *sql) {
		if (strncmp(sql, from, sizeof(from) - 1) == 0) {
			memcpy(o, to, sizeof(to) - 1);
			o += sizeof(to) - 1;
			sql += sizeof(from) - 1;
		} else {
			*o++ = *sql++;
		}
	}
	if (out)
		*o = 0;
	return out;
}
