/* map_rows.h: the stored mappings, rows and packed blocks, in one temporary table. */
#include "map_rows.h"

#include <stdint.h>

#include "store/store_map_blocks.h"

static int insert_map(void *arg, const struct store_map *m)
{
	sqlite3_stmt *ins = arg;
	sqlite3_bind_int64(ins, 2, m->id);
	sqlite3_bind_int64(ins, 3, m->pid);
	sqlite3_bind_int64(ins, 4, (sqlite3_int64)m->start);
	sqlite3_bind_int64(ins, 5, (sqlite3_int64)m->end);
	sqlite3_bind_int64(ins, 6, (sqlite3_int64)m->pgoff);
	sqlite3_bind_text(ins, 7, m->path, (int)m->pathlen, SQLITE_TRANSIENT);
	int rc = sqlite3_step(ins) == SQLITE_DONE ? 0 : -1;
	sqlite3_reset(ins);
	return rc;
}

int tp_map_rows(sqlite3 *h)
{
	int rc = sqlite3_exec(
	    h,
	    "CREATE TEMP TABLE IF NOT EXISTS map_rows (session_id INTEGER, map_id INTEGER, pid INTEGER,"
	    " start INTEGER, \"end\" INTEGER, pgoff INTEGER, path TEXT, PRIMARY KEY(session_id, map_id));"
	    " DELETE FROM temp.map_rows;"
	    " INSERT INTO temp.map_rows SELECT session_id, map_id, pid, start, \"end\", pgoff, path"
	    " FROM main.sample_mappings",
	    NULL, NULL, NULL);
	sqlite3_stmt *sel = NULL, *ins = NULL;
	if (rc == SQLITE_OK &&
	    sqlite3_prepare_v2(h,
			       "SELECT session_id, data FROM main.sample_map_blocks ORDER BY session_id, seq",
			       -1, &sel, NULL) != SQLITE_OK)
		return SQLITE_OK; /* an older collector's store: rows only */
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(
		    h, "INSERT OR IGNORE INTO temp.map_rows VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)", -1, &ins,
		    NULL);
	while (rc == SQLITE_OK && sqlite3_step(sel) == SQLITE_ROW) {
		sqlite3_bind_int64(ins, 1, sqlite3_column_int64(sel, 0));
		const uint8_t *z = sqlite3_column_blob(sel, 1);
		int len = sqlite3_column_bytes(sel, 1);
		if (z && store_map_block_each(z, (size_t)len, insert_map, ins) != 0)
			rc = SQLITE_CORRUPT;
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc;
}
