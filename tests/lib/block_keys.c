/* block_keys.h: the stored sample blocks decoded into a temporary table. */
#include "block_keys.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/store_blocks.h"
#include "store/store_keyids.h"

/* Session sid's key dictionary (store_keyids.h) into d, from the chunks statement dq (NULL: none). */
static int load_dict(sqlite3_stmt *dq, long long sid, struct store_keydict *d)
{
	d->n = 0;
	if (!dq)
		return SQLITE_OK;
	sqlite3_bind_int64(dq, 1, sid);
	int rc = SQLITE_OK;
	while (rc == SQLITE_OK && sqlite3_step(dq) == SQLITE_ROW)
		if (store_keydict_add_chunk(d, sqlite3_column_int64(dq, 0), sqlite3_column_int64(dq, 1),
					    sqlite3_column_blob(dq, 2), (size_t)sqlite3_column_bytes(dq, 2),
					    STORE_KEYIDS_READ_MAX) != 0)
			rc = SQLITE_CORRUPT;
	sqlite3_reset(dq);
	return rc;
}

static int insert_keys(sqlite3_stmt *ins, sqlite3_stmt *sel, const struct store_keydict *d)
{
	int len = sqlite3_column_bytes(sel, 5);
	const uint8_t *z = sqlite3_column_blob(sel, 5);
	size_t rawlen, off = 0;
	uint8_t *owned;
	const uint8_t *p = store_block_unpack(z, (size_t)len, &rawlen, &owned);
	if (!p)
		return SQLITE_NOMEM;
	int rc = SQLITE_OK, fmt = sqlite3_column_int(sel, 6);
	int64_t prev = -1;
	while (rc == SQLITE_OK && off < rawlen) {
		struct store_block_key k;
		size_t used = store_block_next(p + off, rawlen - off, fmt, d, &prev, &k);
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
	sqlite3_stmt *sel = NULL, *ins = NULL, *dq = NULL;
	/* the key ids' dictionary where the store has it (#40 w45a) */
	bool ids = rc == SQLITE_OK && sqlite3_prepare_v2(h, "SELECT first_id, n, data FROM sample_key_ids"
							 " WHERE session_id = ?1 ORDER BY first_id",
						      -1, &dq, NULL) == SQLITE_OK;
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    h,
		    ids ? "SELECT b.session_id, b.seq, b.t_ns, i.backend, i.event_id, b.data, b.fmt FROM sample_blocks b"
			  " LEFT JOIN sample_intervals i ON i.session_id = b.session_id AND i.seq = b.seq"
			  " ORDER BY b.session_id, b.seq"
			: "SELECT b.session_id, b.seq, b.t_ns, i.backend, i.event_id, b.data, 0 FROM sample_blocks b"
			  " LEFT JOIN sample_intervals i ON i.session_id = b.session_id AND i.seq = b.seq",
		    -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    h, "INSERT INTO temp.block_keys VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
		    -1, &ins, NULL);
	struct store_keydict d = {0};
	long long sid = -1;
	while (rc == SQLITE_OK && sqlite3_step(sel) == SQLITE_ROW) {
		if (sqlite3_column_int64(sel, 0) != sid) {
			sid = sqlite3_column_int64(sel, 0);
			rc = load_dict(dq, sid, &d);
		}
		if (rc == SQLITE_OK)
			rc = insert_keys(ins, sel, &d);
	}
	store_keydict_free(&d);
	sqlite3_finalize(dq);
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
