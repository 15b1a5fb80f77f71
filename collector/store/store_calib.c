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

static const char run_insert[] = "INSERT INTO calib_runs(session_id, seq, device, device_index, benchmark,"
				 " clock_mhz, quick, seconds) VALUES (?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING";
static const char param_insert[] = "INSERT INTO calib_params(session_id, seq, idx, name, value, unit,"
				   " method, spread, confidence, flagged) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING";
static const char curve_insert[] = "INSERT INTO calib_curves(session_id, seq, idx, name, x_unit, y_unit,"
				   " npoints, x, y, y_spread) VALUES (?,?,?,?,?,?,?,?,?,?) ON CONFLICT DO NOTHING";

static void bind_doubles(struct db_stmt *st, int i, const double *v, size_t n)
{
	if (n == 0)
		db_bind_null(st, i);
	else
		db_bind_blob(st, i, v, n * sizeof(double));
}

static int put_calibration(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	const Prof__Calibration *c = env->calibration;
	struct db_stmt *st = store_stmt(s, run_insert);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_text(st, 3, c->device);
	db_bind_i64(st, 4, c->device_index);
	db_bind_text(st, 5, c->benchmark);
	db_bind_double(st, 6, c->clock_mhz);
	db_bind_i64(st, 7, c->quick);
	db_bind_double(st, 8, c->seconds);
	int rc = db_run(st);
	for (size_t i = 0; rc == 0 && i < c->n_params; i++) {
		const Prof__CalibParam *p = c->params[i];
		if (!(st = store_stmt(s, param_insert)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, env->seq);
		db_bind_i64(st, 3, (int64_t)i);
		db_bind_text(st, 4, p->name);
		db_bind_double(st, 5, p->value);
		db_bind_text(st, 6, p->unit);
		db_bind_text(st, 7, p->method);
		db_bind_double(st, 8, p->spread);
		db_bind_double(st, 9, p->confidence);
		db_bind_i64(st, 10, p->flagged);
		rc = db_run(st);
	}
	for (size_t i = 0; rc == 0 && i < c->n_curves; i++) {
		const Prof__CalibCurve *k = c->curves[i];
		if (!(st = store_stmt(s, curve_insert)))
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_u64(st, 2, env->seq);
		db_bind_i64(st, 3, (int64_t)i);
		db_bind_text(st, 4, k->name);
		db_bind_text(st, 5, k->x_unit);
		db_bind_text(st, 6, k->y_unit);
		db_bind_i64(st, 7, (int64_t)k->n_x);
		bind_doubles(st, 8, k->x, k->n_x);
		bind_doubles(st, 9, k->y, k->n_y);
		bind_doubles(st, 10, k->y_spread, k->n_y_spread);
		rc = db_run(st);
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
	if (!db_has_table(s->db, "calib_params"))
		return -ENOENT; /* a store written before calibration existed */
	struct db_stmt *st = store_query(s,
			       "SELECT p.seq, r.device, r.benchmark, r.clock_mhz, p.name, p.value, p.unit, p.method,"
			       " p.spread, p.confidence, p.flagged FROM calib_params p JOIN calib_runs r"
			       " ON r.session_id = p.session_id AND r.seq = p.seq WHERE p.session_id = ?1"
			       " ORDER BY p.seq, p.idx");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	int n = 0, rc;
	while ((rc = db_step(st)) == 1) {
		struct store_calib_param_row r = {
			.seq = db_col_u64(st, 0),
			.device = db_col_text(st, 1),
			.benchmark = db_col_text(st, 2),
			.clock_mhz = db_col_double(st, 3),
			.name = db_col_text(st, 4),
			.value = db_col_double(st, 5),
			.unit = db_col_text(st, 6),
			.method = db_col_text(st, 7),
			.spread = db_col_double(st, 8),
			.confidence = db_col_double(st, 9),
			.flagged = db_col_i64(st, 10) != 0,
		};
		int crc = cb(&r, arg);
		if (crc < 0) {
			db_finalize(st);
			return crc;
		}
		n++;
	}
	db_finalize(st);
	return rc < 0 ? rc : n;
}

int store_calib_sessions_before(struct store *s, int64_t session_id, int64_t *ids, int max)
{
	if (!db_has_table(s->db, "calib_params"))
		return -ENOENT;
	struct db_stmt *st = store_query(s, "SELECT DISTINCT session_id FROM calib_params WHERE session_id < ?1"
					    " ORDER BY session_id DESC LIMIT ?2");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, session_id);
	db_bind_i64(st, 2, max);
	int n = 0, rc;
	while (n < max && (rc = db_step(st)) == 1)
		ids[n++] = db_col_i64(st, 0);
	db_finalize(st);
	return n;
}

/* Calibrated sessions c of the profile of session s (the outer query's row):
 * same agent id, board and machine. */
#define SAME_PROFILE_CALIBRATED                                                                                \
	" FROM sessions c WHERE c.agent_id = s.agent_id AND COALESCE(c.board, '') = COALESCE(s.board, '')"      \
	" AND COALESCE(c.machine, '') = COALESCE(s.machine, '')"                                                 \
	" AND EXISTS (SELECT 1 FROM calib_params p WHERE p.session_id = c.id)"

int store_calib_for_session(struct store *s, int64_t sid, int64_t *calib_sid, bool *later)
{
	if (!db_has_table(s->db, "calib_params"))
		return 0;
	struct db_stmt *st = store_query(s,
			       "SELECT COALESCE((SELECT MAX(c.id)" SAME_PROFILE_CALIBRATED " AND c.id < s.id),"
			       " (SELECT MIN(c.id)" SAME_PROFILE_CALIBRATED " AND c.id > s.id), 0)"
			       " FROM sessions s WHERE s.id = ?1");
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	int rc = db_step(st);
	if (rc == 1) {
		*calib_sid = db_col_i64(st, 0);
		*later = *calib_sid > sid;
		rc = *calib_sid > 0;
	}
	db_finalize(st);
	return rc;
}

int store_calib_map(struct store *s, store_calib_map_cb cb, void *arg)
{
	if (!db_has_table(s->db, "calib_params"))
		return 0;
	struct db_stmt *st = store_query(s,
			       "SELECT s.id, COALESCE((SELECT MAX(c.id)" SAME_PROFILE_CALIBRATED " AND c.id <= s.id),"
			       " (SELECT MIN(c.id)" SAME_PROFILE_CALIBRATED " AND c.id > s.id), 0)"
			       " FROM sessions s ORDER BY s.id");
	if (!st)
		return -EIO;
	int rc;
	while ((rc = db_step(st)) == 1) {
		int stop = cb(db_col_i64(st, 0), db_col_i64(st, 1), arg);
		if (stop) {
			db_finalize(st);
			return stop;
		}
	}
	db_finalize(st);
	return rc;
}
