/* Record kinds that have no table of their own yet: the whole envelope is
 * kept packed in raw_records, so a later collector can still read it. */
#include <errno.h>
#include <stdlib.h>

#include "store_kinds.h"

static const char raw_schema[] =
	"CREATE TABLE IF NOT EXISTS raw_records (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" kind TEXT NOT NULL, envelope BLOB NOT NULL, PRIMARY KEY(session_id, seq)) WITHOUT ROWID;";

static const char raw_insert[] = "INSERT OR IGNORE INTO raw_records(session_id, seq, kind, envelope) VALUES (?,?,?,?)";

static int put_raw(struct store *s, int64_t sid, const Prof__Envelope *env, const char *kind)
{
	size_t len = prof__envelope__get_packed_size(env);
	uint8_t *buf = malloc(len ? len : 1);
	if (!buf)
		return -ENOMEM;
	prof__envelope__pack(env, buf);
	sqlite3_stmt *st = store_stmt(s, raw_insert);
	if (!st) {
		free(buf);
		return -EIO;
	}
	sqlite3_bind_int64(st, 1, sid);
	store_bind_u64(st, 2, env->seq);
	sqlite3_bind_text(st, 3, kind, -1, SQLITE_STATIC);
	sqlite3_bind_blob(st, 4, buf, (int)len, SQLITE_TRANSIENT);
	int rc = store_exec_stmt(s, st, "insert raw record");
	free(buf);
	return rc;
}

#define RAW_KIND(field, CASE)                                                                              \
	static int put_raw_##field(struct store *s, int64_t sid, const Prof__Envelope *env)               \
	{                                                                                                  \
		return put_raw(s, sid, env, #field);                                                       \
	}                                                                                                  \
	const struct store_kind store_kind_raw_##field = {                                                 \
		.body_case = PROF__ENVELOPE__BODY_##CASE,                                                  \
		.name = #field,                                                                            \
		.schema_sql = raw_schema,                                                                  \
		.put = put_raw_##field,                                                                    \
	};

RAW_KIND(samples, SAMPLES)
RAW_KIND(cl_command, CL_COMMAND)
RAW_KIND(calibration, CALIBRATION)
RAW_KIND(trace_window, TRACE_WINDOW)
