/* Store: opening, schema, batch transactions and the write path. */
#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "store_kinds.h"
#include "store_pg.h"
#include "store_priv.h"

static const char *const schema_sql =
    "CREATE TABLE IF NOT EXISTS sessions ("
    " id INTEGER PRIMARY KEY, agent_id TEXT NOT NULL, boot_id INTEGER NOT NULL,"
    " board TEXT, kernel_release TEXT, hostname TEXT, machine TEXT, agent_version TEXT,"
    " features TEXT, target TEXT, schema_version INTEGER, clock_id INTEGER, base_ns INTEGER,"
    " realtime_ns INTEGER, peer TEXT, first_seen INTEGER, last_seen INTEGER,"
    " connects INTEGER NOT NULL DEFAULT 0, records INTEGER NOT NULL DEFAULT 0,"
    " wire_bytes INTEGER NOT NULL DEFAULT 0, spool_dropped INTEGER NOT NULL DEFAULT 0, hello BLOB,"
    " UNIQUE(agent_id, boot_id));"
    "CREATE TABLE IF NOT EXISTS cpus (session_id INTEGER NOT NULL, cpu INTEGER, model TEXT,"
    " implementer INTEGER, part INTEGER, max_freq_khz INTEGER);"
    "CREATE INDEX IF NOT EXISTS cpus_session ON cpus(session_id);"
    "CREATE TABLE IF NOT EXISTS gpus (session_id INTEGER NOT NULL, idx INTEGER, platform TEXT, name TEXT,"
    " vendor TEXT, version TEXT, driver TEXT, compute_units INTEGER, global_mem_bytes INTEGER,"
    " max_clock_mhz INTEGER, type INTEGER);"
    "CREATE INDEX IF NOT EXISTS gpus_session ON gpus(session_id);"
    "CREATE TABLE IF NOT EXISTS records (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " kind TEXT, bytes INTEGER, PRIMARY KEY(session_id, seq)) WITHOUT ROWID;"
    "CREATE TABLE IF NOT EXISTS events (session_id INTEGER NOT NULL, event_id INTEGER NOT NULL,"
    " name TEXT, type INTEGER, config INTEGER, unit TEXT, PRIMARY KEY(session_id, event_id));"
    "CREATE TABLE IF NOT EXISTS counter_samples (session_id INTEGER NOT NULL, seq INTEGER NOT NULL,"
    " t_ns INTEGER NOT NULL, event_id INTEGER NOT NULL, value INTEGER, running_pct INTEGER);"
    "CREATE INDEX IF NOT EXISTS counter_samples_event ON counter_samples(session_id, event_id, t_ns);";

static const char *const stmt_sql[ST__COUNT] = {
    [ST_BEGIN] = "BEGIN IMMEDIATE",
    [ST_COMMIT] = "COMMIT",
    [ST_ROLLBACK] = "ROLLBACK",
    [ST_SESSION_UPSERT] =
	"INSERT INTO sessions (agent_id, boot_id, board, kernel_release, hostname, machine,"
	" agent_version, features, target, schema_version, clock_id, base_ns, realtime_ns, peer,"
	" first_seen, last_seen, connects, hello)"
	" VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, 1, ?16)"
	" ON CONFLICT(agent_id, boot_id) DO UPDATE SET connects = connects + 1,"
	" last_seen = excluded.last_seen, peer = excluded.peer"
	" RETURNING id, connects",
    [ST_MAX_SEQ] = "SELECT MAX(seq) FROM records WHERE session_id = ?1",
    [ST_CPU_INSERT] = "INSERT INTO cpus (session_id, cpu, model, implementer, part, max_freq_khz)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_GPU_INSERT] = "INSERT INTO gpus (session_id, idx, platform, name, vendor, version, driver,"
		      " compute_units, global_mem_bytes, max_clock_mhz, type)"
		      " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    [ST_RECORD_INSERT] =
	"INSERT OR IGNORE INTO records (session_id, seq, kind, bytes) VALUES (?1, ?2, ?3, ?4)",
    [ST_EVENT_INSERT] = "INSERT OR IGNORE INTO events (session_id, event_id, name, type, config, unit)"
			" VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_SAMPLE_INSERT] = "INSERT INTO counter_samples (session_id, seq, t_ns, event_id, value, running_pct)"
			 " VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    [ST_SESSION_RECORD] = "UPDATE sessions SET records = records + 1, wire_bytes = wire_bytes + ?1,"
			  " last_seen = ?2 WHERE id = ?3",
    [ST_HEARTBEAT] = "UPDATE sessions SET last_seen = ?1, spool_dropped = ?2 WHERE id = ?3",
};

int store_fail(struct store *s, const char *what, int rc)
{
	log_error("store %s: %s: %s (sqlite code %d)", s->path, what, sqlite3_errmsg(s->db), rc);
	switch (rc & 0xff) {
	case SQLITE_FULL:
		return -ENOSPC;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return -EBUSY;
	case SQLITE_NOMEM:
		return -ENOMEM;
	case SQLITE_READONLY:
	case SQLITE_PERM:
	case SQLITE_AUTH:
		return -EACCES;
	case SQLITE_CANTOPEN:
		return -ENOENT;
	default:
		return -EIO;
	}
}

int store_prepare(struct store *s, const char *sql, sqlite3_stmt **st)
{
	int rc = sqlite3_prepare_v2(s->db, sql, -1, st, NULL);
	if (rc != SQLITE_OK)
		return store_fail(s, "prepare", rc);
	return 0;
}

const char *store_col_text(sqlite3_stmt *st, int col)
{
	const unsigned char *t = sqlite3_column_text(st, col);
	return t ? (const char *)t : "";
}

/* Run a statement that returns no rows (or whose rows are ignored). */
int store_exec_stmt(struct store *s, sqlite3_stmt *st, const char *what)
{
	int rc;
	while ((rc = sqlite3_step(st)) == SQLITE_ROW)
		;
	int ret = rc == SQLITE_DONE ? 0 : store_fail(s, what, rc);
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return ret;
}

static int exec_sql(struct store *s, const char *sql, const char *what)
{
	char *msg = NULL;
	int rc = sqlite3_exec(s->db, sql, NULL, NULL, &msg);
	if (rc != SQLITE_OK) {
		log_error("store %s: %s: %s", s->path, what, msg ? msg : sqlite3_errstr(rc));
		sqlite3_free(msg);
		return rc == SQLITE_FULL ? -ENOSPC : rc == SQLITE_BUSY ? -EBUSY : -EIO;
	}
	return 0;
}

static int query_int(struct store *s, const char *sql, int64_t *out)
{
	sqlite3_stmt *st;
	int rc = store_prepare(s, sql, &st);
	if (rc < 0)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*out = sqlite3_column_int64(st, 0);
		rc = 0;
	} else {
		rc = store_fail(s, sql, rc);
	}
	sqlite3_finalize(st);
	return rc;
}

static int schema_setup(struct store *s)
{
	int64_t version;
	int rc = query_int(s, "PRAGMA user_version", &version);
	if (rc < 0)
		return rc;
	if (version == STORE_SCHEMA_VERSION)
		return 0;
	if (version > STORE_SCHEMA_VERSION) {
		log_error(
		    "store %s has schema version %lld, newer than this collector's %d: upgrade the collector "
		    "or use another --store",
		    s->path, (long long)version, STORE_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (version != 0 || (s->flags & STORE_READ_ONLY)) {
		log_error("store %s is not a collector store (schema version %lld): check the --store path",
			  s->path, (long long)version);
		return -EINVAL;
	}
	int64_t objects;
	rc = query_int(s, "SELECT COUNT(*) FROM sqlite_schema", &objects);
	if (rc < 0)
		return rc;
	if (objects > 0) {
		log_error(
		    "store %s is an SQLite database of something else (%lld objects, schema version 0): "
		    "choose another --store path",
		    s->path, (long long)objects);
		return -EINVAL;
	}
	rc = exec_sql(s, "BEGIN IMMEDIATE", "begin schema");
	if (rc < 0)
		return rc;
	rc = exec_sql(s, schema_sql, "create schema");
	if (rc == 0)
		rc = exec_sql(s, "PRAGMA user_version = 1", "set schema version");
	if (rc == 0)
		return exec_sql(s, "COMMIT", "commit schema");
	exec_sql(s, "ROLLBACK", "rollback schema");
	return rc;
}

static int configure(struct store *s)
{
	sqlite3_busy_timeout(s->db, 5000);
	int rc = exec_sql(s, "PRAGMA foreign_keys = OFF", "pragma");
	if (rc < 0 || (s->flags & STORE_READ_ONLY))
		return rc;
	sqlite3_stmt *st;
	rc = store_prepare(s, "PRAGMA journal_mode = WAL", &st);
	if (rc < 0)
		return rc;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		const char *mode = store_col_text(st, 0);
		if (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)
			log_warn(
			    "store %s: journal mode is '%s', not WAL (file system without shared memory?)",
			    s->path, mode);
		rc = 0;
	} else {
		rc = store_fail(s, "set WAL journal mode", rc);
	}
	sqlite3_finalize(st);
	if (rc < 0)
		return rc;
	return exec_sql(
	    s, (s->flags & STORE_SYNC_FULL) ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
	    "pragma synchronous");
}

int store_no_queries(struct store *s)
{
	log_error("store %s: reports and queries read SQLite stores only for now; query PostgreSQL with psql",
		  s->path);
	return -EOPNOTSUPP;
}

static int open_pg(const char *uri, unsigned flags, struct store **out)
{
	struct store *s = calloc(1, sizeof(*s));
	char safe[512];
	store_pg_redact(uri, safe, sizeof(safe));
	if (!s || !(s->path = strdup(safe))) {
		free(s);
		return -ENOMEM;
	}
	s->flags = flags;
	int rc = store_pg_open(uri, flags, &s->pg);
	if (rc < 0) {
		free(s->path);
		free(s);
		return rc;
	}
	*out = s;
	return 0;
}

int store_open(const char *path, unsigned flags, struct store **out)
{
	*out = NULL;
	if (store_pg_is_uri(path))
		return open_pg(path, flags, out);
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->flags = flags;
	s->path = strdup(path);
	if (!s->path) {
		free(s);
		return -ENOMEM;
	}
	int oflags =
	    (flags & STORE_READ_ONLY) ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	int rc = sqlite3_open_v2(path, &s->db, oflags | SQLITE_OPEN_NOMUTEX, NULL);
	if (rc != SQLITE_OK) {
		if (!s->db) {
			log_error("store %s: cannot open: %s", path, sqlite3_errstr(rc));
			rc = -ENOMEM;
		} else if ((flags & STORE_READ_ONLY) && (rc & 0xff) == SQLITE_CANTOPEN) {
			log_error("store %s: cannot open: %s: check the path (the collector creates it with "
				  "--store)",
				  path, sqlite3_errmsg(s->db));
			rc = -ENOENT;
		} else {
			log_error("store %s: cannot open: %s: check the path and its directory's permissions",
				  path, sqlite3_errmsg(s->db));
			rc = (rc & 0xff) == SQLITE_CANTOPEN ? -ENOENT : -EIO;
		}
		store_close(s);
		return rc;
	}
	sqlite3_extended_result_codes(s->db, 1);
	rc = configure(s);
	if (rc == 0)
		rc = schema_setup(s);
	/* Tables of the record kinds: created if missing, also in stores made by an older collector. */
	for (size_t k = 0; rc == 0 && !(flags & STORE_READ_ONLY) && store_kinds[k]; k++)
		if (store_kinds[k]->schema_sql)
			rc = exec_sql(s, store_kinds[k]->schema_sql, "create record-kind tables");
	for (int i = 0; rc == 0 && i < ST__COUNT; i++)
		rc = store_prepare(s, stmt_sql[i], &s->stmt[i]);
	if (rc < 0) {
		store_close(s);
		return rc;
	}
	*out = s;
	return 0;
}

void store_close(struct store *s)
{
	if (!s)
		return;
	if (s->pg) {
		store_pg_close(s->pg);
		free(s->path);
		free(s);
		return;
	}
	if (s->in_tx)
		store_rollback(s);
	for (int i = 0; i < ST__COUNT; i++)
		sqlite3_finalize(s->stmt[i]);
	for (int i = 0; i < s->ncache; i++)
		sqlite3_finalize(s->cache[i].st);
	if (s->db && sqlite3_close(s->db) != SQLITE_OK)
		log_error("store %s: close: %s", s->path, sqlite3_errmsg(s->db));
	free(s->path);
	free(s);
}

int store_begin(struct store *s)
{
	if (s->pg)
		return store_pg_begin(s->pg);
	if (s->in_tx)
		return 0;
	int rc = store_exec_stmt(s, s->stmt[ST_BEGIN], "begin");
	if (rc < 0)
		return rc;
	s->in_tx = true;
	s->tx_records = 0;
	return 0;
}

int store_commit(struct store *s)
{
	if (s->pg)
		return store_pg_commit(s->pg);
	if (!s->in_tx)
		return 0;
	int rc = store_exec_stmt(s, s->stmt[ST_COMMIT], "commit");
	if (rc < 0) {
		store_rollback(s);
		return rc;
	}
	s->in_tx = false;
	s->tx_records = 0;
	return 0;
}

void store_rollback(struct store *s)
{
	if (s->pg) {
		store_pg_rollback(s->pg);
		return;
	}
	if (!s->in_tx)
		return;
	/* Fails harmlessly when SQLite already rolled back on its own (disk full). */
	if (sqlite3_get_autocommit(s->db) == 0)
		store_exec_stmt(s, s->stmt[ST_ROLLBACK], "rollback");
	s->in_tx = false;
	s->tx_records = 0;
}

bool store_in_tx(const struct store *s)
{
	return s->pg ? store_pg_in_tx(s->pg) : s->in_tx;
}

uint64_t store_tx_records(const struct store *s)
{
	return s->pg ? store_pg_tx_records(s->pg) : s->tx_records;
}

void store_bind_text(sqlite3_stmt *st, int i, const char *v)
{
	sqlite3_bind_text(st, i, v ? v : "", -1, SQLITE_STATIC);
}

void store_bind_u64(sqlite3_stmt *st, int i, uint64_t v)
{
	sqlite3_bind_int64(st, i, (sqlite3_int64)v);
}

static int session_hardware(struct store *s, int64_t id, const Prof__Hello *h)
{
	int rc = 0;
	sqlite3_stmt *st = s->stmt[ST_CPU_INSERT];
	for (size_t i = 0; rc == 0 && i < h->n_cpus; i++) {
		const Prof__CpuInfo *c = h->cpus[i];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, c->cpu);
		store_bind_text(st, 3, c->model);
		sqlite3_bind_int64(st, 4, c->implementer);
		sqlite3_bind_int64(st, 5, c->part);
		store_bind_u64(st, 6, c->max_freq_khz);
		rc = store_exec_stmt(s, st, "insert cpu");
	}
	st = s->stmt[ST_GPU_INSERT];
	for (size_t i = 0; rc == 0 && i < h->n_gpus; i++) {
		const Prof__GpuDevice *g = h->gpus[i];
		sqlite3_bind_int64(st, 1, id);
		sqlite3_bind_int64(st, 2, (sqlite3_int64)i);
		store_bind_text(st, 3, g->platform);
		store_bind_text(st, 4, g->name);
		store_bind_text(st, 5, g->vendor);
		store_bind_text(st, 6, g->version);
		store_bind_text(st, 7, g->driver);
		sqlite3_bind_int64(st, 8, g->compute_units);
		store_bind_u64(st, 9, g->global_mem_bytes);
		sqlite3_bind_int64(st, 10, g->max_clock_mhz);
		sqlite3_bind_int64(st, 11, g->type);
		rc = store_exec_stmt(s, st, "insert gpu");
	}
	return rc;
}

static int session_max_seq(struct store *s, int64_t id, uint64_t *max_seq)
{
	sqlite3_stmt *st = s->stmt[ST_MAX_SEQ];
	sqlite3_bind_int64(st, 1, id);
	int rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		*max_seq = (uint64_t)sqlite3_column_int64(st, 0); /* NULL (no records) reads as 0 */
		rc = 0;
	} else {
		rc = store_fail(s, "highest seq", rc);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	return rc;
}

int store_session_open(struct store *s, const Prof__Hello *h, const char *peer, int64_t *session_id,
		       uint64_t *max_seq, bool *created)
{
	if (s->pg)
		return store_pg_session_open(s->pg, h, peer, session_id, max_seq, created);
	int rc = store_begin(s);
	if (rc < 0)
		return rc;
	/* The packed Hello is bounded by the frame it came in. */
	size_t hlen = prof__hello__get_packed_size(h);
	uint8_t *blob = malloc(hlen ? hlen : 1);
	if (!blob)
		return -ENOMEM;
	prof__hello__pack(h, blob);

	sqlite3_stmt *st = s->stmt[ST_SESSION_UPSERT];
	store_bind_text(st, 1, h->agent_id);
	store_bind_u64(st, 2, h->boot_id);
	store_bind_text(st, 3, h->board);
	store_bind_text(st, 4, h->kernel_release);
	store_bind_text(st, 5, h->hostname);
	store_bind_text(st, 6, h->machine);
	store_bind_text(st, 7, h->agent_version);
	store_bind_text(st, 8, h->features);
	store_bind_text(st, 9, h->target);
	sqlite3_bind_int64(st, 10, h->schema_version);
	sqlite3_bind_int64(st, 11, h->clock_id);
	store_bind_u64(st, 12, h->base_ns);
	store_bind_u64(st, 13, h->realtime_ns);
	store_bind_text(st, 14, peer);
	sqlite3_bind_int64(st, 15, (sqlite3_int64)time(NULL));
	sqlite3_bind_blob(st, 16, blob, (int)hlen, SQLITE_STATIC);
	int64_t id = 0, connects = 0;
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		id = sqlite3_column_int64(st, 0);
		connects = sqlite3_column_int64(st, 1);
		rc = sqlite3_step(st) == SQLITE_DONE ? 0 : store_fail(s, "open session", rc);
	} else {
		rc = store_fail(s, "open session", rc);
	}
	sqlite3_reset(st);
	sqlite3_clear_bindings(st);
	free(blob);
	if (rc < 0)
		return rc;
	if (connects == 1) {
		rc = session_hardware(s, id, h);
		if (rc < 0)
			return rc;
	}
	rc = session_max_seq(s, id, max_seq);
	if (rc < 0)
		return rc;
	*session_id = id;
	if (created)
		*created = connects == 1;
	return 0;
}

int store_put_event_descs(struct store *s, int64_t sid, Prof__EventDesc *const *ev, size_t n)
{
	sqlite3_stmt *st = s->stmt[ST_EVENT_INSERT];
	for (size_t i = 0; i < n; i++) {
		const Prof__EventDesc *e = ev[i];
		sqlite3_bind_int64(st, 1, sid);
		sqlite3_bind_int64(st, 2, e->id);
		store_bind_text(st, 3, e->name);
		sqlite3_bind_int64(st, 4, e->type);
		store_bind_u64(st, 5, e->config);
		store_bind_text(st, 6, e->unit);
		int rc = store_exec_stmt(s, st, "insert event");
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* Undo the delta encoding of the row times first, so that an overflowing
 * record is refused before anything of it is written. */
static int check_times(const Prof__Counters *c)
{
	uint64_t t = 0;
	for (size_t r = 0; r < c->n_t_ns; r++) {
		if (c->t_ns[r] > (uint64_t)INT64_MAX - t)
			return -ERANGE;
		t += c->t_ns[r];
	}
	return 0;
}

static int put_counters(struct store *s, int64_t sid, uint64_t seq, const Prof__Counters *c)
{
	int rc = store_put_event_descs(s, sid, c->new_events, c->n_new_events);
	if (rc < 0)
		return rc;
	/* validate.c guarantees n_values == n_t_ns * n_event_ids and running_pct
	 * empty or n_values long. */
	size_t ncols = c->n_event_ids;
	sqlite3_stmt *st = s->stmt[ST_SAMPLE_INSERT];
	uint64_t t = 0;
	for (size_t r = 0; r < c->n_t_ns; r++) {
		t += c->t_ns[r];
		for (size_t col = 0; col < ncols; col++) {
			size_t i = r * ncols + col;
			sqlite3_bind_int64(st, 1, sid);
			store_bind_u64(st, 2, seq);
			store_bind_u64(st, 3, t);
			sqlite3_bind_int64(st, 4, c->event_ids[col]);
			store_bind_u64(st, 5, c->values[i]);
			sqlite3_bind_int64(st, 6, c->n_running_pct ? c->running_pct[i] : 100);
			rc = store_exec_stmt(s, st, "insert counter sample");
			if (rc < 0)
				return rc;
		}
	}
	return 0;
}

static int put_heartbeat(struct store *s, int64_t sid, const Prof__Heartbeat *hb)
{
	sqlite3_stmt *st = s->stmt[ST_HEARTBEAT];
	sqlite3_bind_int64(st, 1, (sqlite3_int64)time(NULL));
	store_bind_u64(st, 2, hb->spool_dropped);
	sqlite3_bind_int64(st, 3, sid);
	return store_exec_stmt(s, st, "heartbeat");
}

sqlite3_stmt *store_stmt(struct store *s, const char *sql)
{
	for (int i = 0; i < s->ncache; i++)
		if (s->cache[i].sql == sql)
			return s->cache[i].st;
	if (s->ncache == STORE_STMT_CACHE) {
		log_error("store %s: more than %d cached statements", s->path, STORE_STMT_CACHE);
		return NULL;
	}
	sqlite3_stmt *st;
	if (store_prepare(s, sql, &st) < 0)
		return NULL;
	s->cache[s->ncache].sql = sql;
	s->cache[s->ncache].st = st;
	s->ncache++;
	return st;
}

static int put_counters_kind(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	return put_counters(s, sid, env->seq, env->counters);
}

static int check_counters_kind(const Prof__Envelope *env)
{
	return check_times(env->counters);
}

static int put_heartbeat_kind(struct store *s, int64_t sid, const Prof__Envelope *env)
{
	return put_heartbeat(s, sid, env->heartbeat);
}

const struct store_kind store_kind_counters = {
	.body_case = PROF__ENVELOPE__BODY_COUNTERS,
	.name = "counters",
	.check = check_counters_kind,
	.put = put_counters_kind,
};

const struct store_kind store_kind_heartbeat = {
	.body_case = PROF__ENVELOPE__BODY_HEARTBEAT,
	.name = "heartbeat",
	.put = put_heartbeat_kind,
};

int store_put_record(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes)
{
	if (s->pg)
		return store_pg_put_record(s->pg, sid, env, frame_bytes);
	const struct store_kind *kind = store_kind_find(env->body_case);
	if (!kind)
		return -EINVAL; /* Hello, Ack, Error: not records */
	if (kind->check) {
		int crc = kind->check(env);
		if (crc < 0)
			return crc;
	}
	if (env->seq > (uint64_t)INT64_MAX)
		return -ERANGE;
	int rc = store_begin(s);
	if (rc < 0)
		return rc;
	if (env->seq == 0) {
		/* Only heartbeats may travel outside the sequence (nothing to replay). */
		if (env->body_case != PROF__ENVELOPE__BODY_HEARTBEAT)
			return -EINVAL;
		rc = put_heartbeat(s, sid, env->heartbeat);
		return rc < 0 ? rc : 1;
	}

	sqlite3_stmt *st = s->stmt[ST_RECORD_INSERT];
	sqlite3_bind_int64(st, 1, sid);
	store_bind_u64(st, 2, env->seq);
	sqlite3_bind_text(st, 3, kind->name, -1, SQLITE_STATIC);
	sqlite3_bind_int64(st, 4, (sqlite3_int64)frame_bytes);
	rc = store_exec_stmt(s, st, "insert record");
	if (rc < 0)
		return rc;
	if (sqlite3_changes(s->db) == 0)
		return 0; /* already stored: exactly once */

	rc = kind->put(s, sid, env);
	if (rc < 0)
		return rc;
	st = s->stmt[ST_SESSION_RECORD];
	sqlite3_bind_int64(st, 1, (sqlite3_int64)frame_bytes);
	sqlite3_bind_int64(st, 2, (sqlite3_int64)time(NULL));
	sqlite3_bind_int64(st, 3, sid);
	rc = store_exec_stmt(s, st, "count record");
	if (rc < 0)
		return rc;
	s->tx_records++;
	return 1;
}
