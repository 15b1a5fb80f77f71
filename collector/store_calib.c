/* Record kind "calibration": one row per run (benchmark), per parameter and
 * per curve (points as little-endian float64 blobs). */
#include "store_calib.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store_kinds.h"
#include "store_priv.h"

static const char calib_schema[] =
	"CREATE TABLE IF NOT EXISTS calib_runs (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" device TEXT, device_index INTEGER, benchmark TEXT, clock_mhz REAL, quick INTEGER, seconds REAL,"
	" PRIMARY KEY(session_id, seq)) WITHOUT ROWID;"
	"CREATE TABLE IF NOT EXISTS calib_params (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" idx INTEGER NOT NULL, name TEXT NOT NULL, value REAL, unit TEXT, method TEXT, spread REAL,"
	" confidence REAL, flagged INTEGER, PRIMARY KEY(session_id, seq, idx)) WITHOUT ROWID;"
	"CREATE INDEX IF NOT EXISTS calib_params_name ON calib_params(session_id, name);"
	"CREATE TABLE IF NOT EXISTS calib_curves (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
	" idx INTEGER NOT NULL, name TEXT NOT NULL, x_unit TEXT, y_unit TEXT, npoints INTEGER,"
	" x BLOB, y BLOB, y_spread BLOB, PRIMARY KEY(session_id, seq, idx)) WITHOUT ROWID;";

static const char run_insert[] = "INSERT OR IGNORE INTO calib_runs(session_id, seq, device, device_index, benchmark,"
				 " clock_mhz, quick, seconds) VALUES (?,?,?,?,?,?,?,?)";
static const char param_insert[] = "INSERT OR IGNORE INTO calib_params(session_id, seq, idx, name, value, unit,"
				   " method, spread, confidence, flagged) VALUES (?,?,?,?,?,?,?,?,?,?)";
static const char curve_insert[] = "INSERT OR IGNORE INTO calib_curves(session_id, seq, idx, name, x_unit, y_unit,"
				   " npoints, x, y, y_spread) VALUES (?,?,?,?,?,?,?,?,?,?)";

static void bind_doubles(sqlite3_stmt *st, int i, const double *v, size_t n)
{
	if (n == 0)
		sqlite3_bind_null(st, i);
	else
		sqlite3_bind_blob(st, i, v, (int)(n * sizeof(double)), SQLITE_TRANSIENT);
}

static int put_calibration(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__Calibration *c = env->calibration;
	sqlite3_stmt *st = store_stmt(s, run_insert);
	if (!st)
		return -EIO;
	sqlite3_bind_int64(st, 1, sid);
	store_bind_u64(st, 2, env->seq);
	store_bind_text(st, 3, c->device);
	sqlite3_bind_int64(st, 4, c->device_index);
	store_bind_text(st, 5, c->benchmark);
	sqlite3_bind_double(st, 6, c->clock_mhz);
	sqlite3_bind_int(st, 7, c->quick);
	sqlite3_bind_double(st, 8, c->seconds);
	int rc = store_exec_stmt(s, st, "insert calibration run");
	for (size_t i = 0; rc == 0 && i < c->n_params; i++) {
		const Prof__CalibParam *p = c->params[i];
		if (!(st = store_stmt(s, param_insert)))
			return -EIO;
		sqlite3_bind_int64(st, 1, sid);
		store_bind_u64(st, 2, env->seq);
		sqlite3_bind_int64(st, 3, (int64_t)i);
		store_bind_text(st, 4, p->name);
		sqlite3_bind_double(st, 5, p->value);
		store_bind_text(st, 6, p->unit);
		store_bind_text(st, 7, p->method);
		sqlite3_bind_double(st, 8, p->spread);
		sqlite3_bind_double(st, 9, p->confidence);
		sqlite3_bind_int(st, 10, p->flagged);
		rc = store_exec_stmt(s, st, "insert calibration parameter");
	}
	for (size_t i = 0; rc == 0 && i < c->n_curves; i++) {
		const Prof__CalibCurve *k = c->curves[i];
		if (!(st = store_stmt(s, curve_insert)))
			return -EIO;
		sqlite3_bind_int64(st, 1, sid);
		store_bind_u64(st, 2, env->seq);
		sqlite3_bind_int64(st, 3, (int64_t)i);
		store_bind_text(st, 4, k->name);
		store_bind_text(st, 5, k->x_unit);
		store_bind_text(st, 6, k->y_unit);
		sqlite3_bind_int64(st, 7, (int64_t)k->n_x);
		bind_doubles(st, 8, k->x, k->n_x);
		bind_doubles(st, 9, k->y, k->n_y);
		bind_doubles(st, 10, k->y_spread, k->n_y_spread);
		rc = store_exec_stmt(s, st, "insert calibration curve");
	}
	return rc;
}

const struct store_kind store_kind_calibration = {
	.body_case = PROF__ENVELOPE__BODY_CALIBRATION,
	.name = "calibration",
	.schema_sql = calib_schema,
	.put = put_calibration,
};

int store_calib_params(struct store *s, int64_t session_id, store_calib_param_cb cb, void *arg)
{
	if (!s->db)
		return store_no_queries(s);
	sqlite3_stmt *st;
	if (sqlite3_prepare_v2(s->db,
			       "SELECT p.seq, r.device, r.benchmark, r.clock_mhz, p.name, p.value, p.unit, p.method,"
			       " p.spread, p.confidence, p.flagged FROM calib_params p JOIN calib_runs r"
			       " ON r.session_id = p.session_id AND r.seq = p.seq WHERE p.session_id = ?1"
			       " ORDER BY p.seq, p.idx",
			       -1, &st, NULL) != SQLITE_OK)
		return -ENOENT; /* a store written before calibration existed */
	sqlite3_bind_int64(st, 1, session_id);
	int n = 0, rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		struct store_calib_param_row r = {
			.seq = (uint64_t)sqlite3_column_int64(st, 0),
			.device = store_col_text(st, 1),
			.benchmark = store_col_text(st, 2),
			.clock_mhz = sqlite3_column_double(st, 3),
			.name = store_col_text(st, 4),
			.value = sqlite3_column_double(st, 5),
			.unit = store_col_text(st, 6),
			.method = store_col_text(st, 7),
			.spread = sqlite3_column_double(st, 8),
			.confidence = sqlite3_column_double(st, 9),
			.flagged = sqlite3_column_int(st, 10) != 0,
		};
		int crc = cb(&r, arg);
		if (crc < 0) {
			sqlite3_finalize(st);
			return crc;
		}
		n++;
	}
	int ret = rc == SQLITE_DONE ? n : store_fail(s, "read calibration parameters", rc);
	sqlite3_finalize(st);
	return ret;
}
