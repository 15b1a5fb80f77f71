/* The mappings of a store as the tests read them (#40, w40h): a record's mappings are stored packed
 * (collector/store/store_map_blocks.h), older stores' as sample_mappings rows, so a test that asserts on
 * stored mappings reads a temporary table
 *   map_rows(session_id, map_id, pid, start, "end", pgoff, path)
 * of the connection: the rows, then the blocks decoded in seq order, the first of each (session, map id)
 * kept, as the collector's query reads them (collector/query/query_sess.c). */
#ifndef TESTS_LIB_MAP_ROWS_H
#define TESTS_LIB_MAP_ROWS_H

#include <sqlite3.h>

/* Create and fill temp.map_rows on h (a read-only connection will do); 0 or an SQLite error code. */
int tp_map_rows(sqlite3 *h);

#endif
