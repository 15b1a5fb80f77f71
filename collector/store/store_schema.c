/* Store schema: the core tables (sessions, hardware, the records ledger,
 * events, counter samples), versioned per engine (SQLite: PRAGMA
 * user_version; PostgreSQL: prof_schema_migrations, migrated under an
 * advisory lock so that several collectors can start at once), then the
 * record kinds' tables (store_kinds.c), created if missing at every
 * read-write open. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "store_kinds.h"
#include "store_priv.h"
#include "store_writers.h"

static const char sqlite_core[] =
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

#define PG_MIGRATION_LOCK "7412001" /* pg_advisory_lock key: one migrating collector at a time */

/* PostgreSQL migration N (index N-1) takes the schema from version N-1 to N. Append only. */
static const char *const pg_migrations[] = {
    /* 1: sessions, hardware, the records ledger, events, counter samples */
    "CREATE TABLE sessions (id BIGSERIAL PRIMARY KEY, agent_id TEXT NOT NULL, boot_id BIGINT NOT NULL,"
    " board TEXT, kernel_release TEXT, hostname TEXT, machine TEXT, agent_version TEXT, features TEXT,"
    " target TEXT, schema_version INTEGER, clock_id INTEGER, base_ns BIGINT, realtime_ns BIGINT, peer TEXT,"
    " first_seen BIGINT, last_seen BIGINT, connects BIGINT NOT NULL DEFAULT 0,"
    " records BIGINT NOT NULL DEFAULT 0, wire_bytes BIGINT NOT NULL DEFAULT 0,"
    " spool_dropped BIGINT NOT NULL DEFAULT 0, hello BYTEA, UNIQUE(agent_id, boot_id));"
    "CREATE TABLE cpus (session_id BIGINT NOT NULL REFERENCES sessions(id), cpu INTEGER, model TEXT,"
    " implementer INTEGER, part INTEGER, max_freq_khz BIGINT);"
    "CREATE INDEX cpus_session ON cpus(session_id);"
    "CREATE TABLE gpus (session_id BIGINT NOT NULL REFERENCES sessions(id), idx INTEGER, platform TEXT,"
    " name TEXT, vendor TEXT, version TEXT, driver TEXT, compute_units INTEGER, global_mem_bytes BIGINT,"
    " max_clock_mhz INTEGER, type INTEGER);"
    "CREATE INDEX gpus_session ON gpus(session_id);"
    "CREATE TABLE records (session_id BIGINT NOT NULL REFERENCES sessions(id), seq BIGINT NOT NULL,"
    " kind TEXT, bytes BIGINT, PRIMARY KEY(session_id, seq));"
    "CREATE TABLE events (session_id BIGINT NOT NULL REFERENCES sessions(id), event_id INTEGER NOT NULL,"
    " name TEXT, type INTEGER, config BIGINT, unit TEXT, PRIMARY KEY(session_id, event_id));"
    "CREATE TABLE counter_samples (session_id BIGINT NOT NULL, seq BIGINT NOT NULL, t_ns BIGINT NOT NULL,"
    " event_id INTEGER NOT NULL, value BIGINT, running_pct INTEGER);"
    "CREATE INDEX counter_samples_event ON counter_samples(session_id, event_id, t_ns);",
    /* 2: the samples of a record's block summed (#40: the blocks are the only store of the samples); the
     * table is a record kind's, created with the column where missing */
    "ALTER TABLE IF EXISTS sample_blocks ADD COLUMN IF NOT EXISTS samples BIGINT;",
    /* 3: each block's pid range and pid bits (#40: a --pid query passes over the blocks without it; the
     * index on them is the record kind's, sample_blocks_keys, made after this) */
    "ALTER TABLE IF EXISTS sample_blocks ADD COLUMN IF NOT EXISTS pid_min BIGINT,"
    " ADD COLUMN IF NOT EXISTS pid_max BIGINT, ADD COLUMN IF NOT EXISTS pid_bits BIGINT;",
    /* 4: a record's mappings packed (#40, w40h: store_map_blocks.h); a store at 3 runs no DDL at open */
    "CREATE TABLE IF NOT EXISTS sample_map_blocks (session_id BIGINT NOT NULL, seq BIGINT NOT NULL, n BIGINT,"
    " data BYTEA, PRIMARY KEY(session_id, seq));",
    /* 5: the names of a pid's later processes in a session (w44a, pid reuse: TaskName.incarnation).
     * (The records ledger's foreign key to sessions is no migration: no reader needs its drop, which is
     * done at a read-write open, drop_ledger_key, #40 w40q; a version for it would make every older
     * collector refuse the store.) */
    "CREATE TABLE IF NOT EXISTS sample_task_incs (session_id BIGINT NOT NULL, pid BIGINT NOT NULL,"
    " tid BIGINT NOT NULL, incarnation BIGINT NOT NULL, seq BIGINT NOT NULL, first_map_id BIGINT, comm TEXT,"
    " thread TEXT, PRIMARY KEY(session_id, pid, tid, incarnation));",
    /* 6: each session's sample keys stored once, the blocks holding their ids (#40, w45a:
     * store_keyids.h): a collector before it would misread such a block, hence a version */
    "ALTER TABLE IF EXISTS sample_blocks ADD COLUMN IF NOT EXISTS fmt BIGINT;"
    "CREATE TABLE IF NOT EXISTS sample_key_ids (session_id BIGINT NOT NULL, first_id BIGINT NOT NULL,"
    " seq BIGINT, n BIGINT, data BYTEA, PRIMARY KEY(session_id, first_id));",
};
#define PG_NMIGRATIONS ((int)(sizeof(pg_migrations) / sizeof(pg_migrations[0])))

/* One statement, not cached (db layer directly: the schema sits below the
 * store core, which calls it from store_open). db_finalize it. */
static struct db_stmt *schema_query(struct store *s, const char *sql)
{
	struct db_stmt *st;
	return db_prepare(s->db, sql, sql, &st) < 0 ? NULL : st;
}

static int query_int(struct store *s, const char *sql, int64_t *out)
{
	struct db_stmt *st = schema_query(s, sql);
	if (!st)
		return -EIO;
	int rc = db_step(st);
	if (rc == 1)
		*out = db_col_i64(st, 0);
	db_finalize(st);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

static int kind_tables(struct store *s)
{
	int rc = 0;
	for (size_t k = 0; rc == 0 && store_kinds[k]; k++) {
		if (!store_kinds[k]->schema_sql)
			continue;
		char *sql = db_schema_sql(s->db, store_kinds[k]->schema_sql);
		rc = sql ? db_exec(s->db, sql, "create record-kind tables") : -ENOMEM;
		free(sql);
	}
	return rc;
}

static int sqlite_configure(struct store *s)
{
	int rc = db_exec(s->db, "PRAGMA foreign_keys = OFF", "pragma");
	if (rc < 0 || (s->flags & STORE_READ_ONLY))
		return rc;
	struct db_stmt *st = schema_query(s, "PRAGMA journal_mode = WAL");
	if (!st)
		return -EIO;
	rc = db_step(st);
	if (rc == 1) {
		const char *mode = db_col_text(st, 0);
		if (strcmp(mode, "wal") != 0 && strcmp(mode, "memory") != 0)
			log_warn("store %s: journal mode is '%s', not WAL (file system without shared memory?)",
				 db_name(s->db), mode);
		rc = 0;
	}
	db_finalize(st);
	if (rc < 0)
		return rc;
	return db_exec(s->db,
		       (s->flags & STORE_SYNC_FULL) ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL",
		       "pragma synchronous");
}

/* A version 1 store is upgraded at this read-write open: -EBUSY (logged) while the writers ledger
 * (store_writers.c) holds another process still running, an older collector that would read the id
 * blocks written after the upgrade as whole keys (review r7 #7, w46c); 0 otherwise. */
static int sqlite_older_writing(struct store *s)
{
	int64_t version = 0;
	long long pid = 0, since = 0;
	int rc = query_int(s, "PRAGMA user_version", &version);
	if (rc < 0 || version != 1 || (rc = store_writers_other_live(s, &pid, &since)) <= 0)
		return rc;
	log_error("store %s has schema version 1 and is upgraded to %d (sample keys stored once per session) at "
		  "this open, but pid %lld still writes it (opened it at unix time %lld): an older collector "
		  "would read the new blocks' key ids as whole keys. Stop it first, then start this one again",
		  db_name(s->db), STORE_SCHEMA_VERSION, pid, since);
	return -EBUSY;
}

static int sqlite_schema(struct store *s)
{
	const char *name = db_name(s->db);
	int rc = sqlite_configure(s);
	int64_t version = 0, objects = 0;
	if (rc == 0)
		rc = query_int(s, "PRAGMA user_version", &version);
	if (rc < 0 || version == STORE_SCHEMA_VERSION)
		return rc;
	if (version > STORE_SCHEMA_VERSION) {
		log_error("store %s has schema version %lld, newer than this collector's %d: upgrade the collector "
			  "or use another --store",
			  name, (long long)version, STORE_SCHEMA_VERSION);
		return -EPROTONOSUPPORT;
	}
	if (version == 1) /* before the key ids (#40 w45a): read as it is, upgraded at a read-write open */
		return 0;
	if (version != 0 || (s->flags & STORE_READ_ONLY)) {
		log_error("store %s is not a collector store (schema version %lld): check the --store path", name,
			  (long long)version);
		return -EINVAL;
	}
	rc = query_int(s, "SELECT COUNT(*) FROM sqlite_schema", &objects);
	if (rc < 0)
		return rc;
	if (objects > 0) {
		log_error("store %s is an SQLite database of something else (%lld objects, schema version 0): "
			  "choose another --store path",
			  name, (long long)objects);
		return -EINVAL;
	}
	rc = db_exec(s->db, "BEGIN IMMEDIATE", "begin schema");
	if (rc < 0)
		return rc;
	rc = db_exec(s->db, sqlite_core, "create schema");
	if (rc == 0)
		rc = db_exec(s->db, "PRAGMA user_version = " STORE_SCHEMA_VERSION_STR, "set schema version");
	if (rc == 0)
		return db_exec(s->db, "COMMIT", "commit schema");
	db_exec(s->db, "ROLLBACK", "rollback schema");
	return rc;
}

/* -EBUSY (logged) while an older collector's connection (application_name exactly DB_PG_APP_NAME_OLD,
 * db.h: this build names its own DB_PG_APP_NAME, so current collectors opening together, or still
 * connecting, never refuse each other; review r10 F2, w46e) is open on the database, other than one
 * waiting for the migration lock; 0 when none is. A connection whose URI set another name is not seen. */
static int pg_older_connected(struct store *s)
{
	int64_t pid = 0;
	int rc = query_int(s,
			   "SELECT COALESCE(MIN(pid), 0) FROM pg_stat_activity WHERE datname = current_database() AND"
			   " application_name = '" DB_PG_APP_NAME_OLD "' AND pid <> pg_backend_pid() AND"
			   " (wait_event_type IS DISTINCT FROM 'Lock' OR wait_event IS DISTINCT FROM 'advisory')",
			   &pid);
	if (rc < 0 || pid == 0)
		return rc;
	log_error("store %s: its schema is migrated to version 6 (sample keys stored once per session) at this "
		  "open, but another collector is connected (server backend pid %lld, pg_stat_activity): an older "
		  "one would read the new blocks' key ids as whole keys. Stop the older collectors (and their "
		  "reports) on this store first, then start this one again",
		  db_name(s->db), (long long)pid);
	return -EBUSY;
}

static int pg_migrate(struct store *s)
{
	const char *name = db_name(s->db);
	int64_t have = 0, tables = 0;
	int rc = db_exec(s->db,
			 "CREATE TABLE IF NOT EXISTS prof_schema_migrations (version INTEGER PRIMARY KEY,"
			 " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
			 "create the migrations table");
	if (rc == 0)
		rc = query_int(s, "SELECT COALESCE(MAX(version), 0) FROM prof_schema_migrations", &have);
	if (rc == 0 && have > PG_NMIGRATIONS) {
		log_error("store %s has schema version %lld, newer than this collector's %d: upgrade the collector",
			  name, (long long)have, PG_NMIGRATIONS);
		return -EPROTONOSUPPORT;
	}
	if (rc == 0 && have == 0)
		rc = query_int(s, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema ="
				  " current_schema() AND table_name = 'sessions'",
			       &tables);
	if (rc == 0 && tables > 0) {
		log_error("store %s: the database has a 'sessions' table but no collector schema version: "
			  "use another database",
			  name);
		return -EINVAL;
	}
	/* migration 6 (key ids) on a store in use: an older collector connected now would read the id blocks
	 * written after it as whole keys (it checks the version only at its open; review r7 #7, w46c) */
	if (rc == 0 && have >= 1 && have < 6)
		rc = pg_older_connected(s);
	for (int v = (int)have + 1; rc == 0 && v <= PG_NMIGRATIONS; v++) {
		char ins[96];
		snprintf(ins, sizeof(ins), "INSERT INTO prof_schema_migrations (version) VALUES (%d)", v);
		rc = db_exec(s->db, "BEGIN", "begin migration");
		if (rc == 0)
			rc = db_exec(s->db, pg_migrations[v - 1], "migrate");
		if (rc == 0)
			rc = db_exec(s->db, ins, "record the migration");
		if (rc == 0)
			rc = db_exec(s->db, "COMMIT", "commit migration");
		if (rc < 0)
			db_exec(s->db, "ROLLBACK", "roll back migration");
		else
			log_info("store %s: schema migrated to version %d", name, v);
	}
	return rc == 0 ? kind_tables(s) : rc;
}

static int pg_schema(struct store *s)
{
	if (s->flags & STORE_READ_ONLY) {
		int64_t have = 0;
		int rc = db_has_table(s->db, "prof_schema_migrations")
			     ? query_int(s, "SELECT COALESCE(MAX(version), 0) FROM prof_schema_migrations", &have)
			     : 0;
		if (rc == 0 && have == 0) {
			log_error("store %s has no collector schema: check the --store URI (a collector creates it)",
				  db_name(s->db));
			rc = -EINVAL;
		} else if (rc == 0 && have > PG_NMIGRATIONS) {
			log_error("store %s has schema version %lld, newer than this collector's %d: upgrade the "
				  "collector",
				  db_name(s->db), (long long)have, PG_NMIGRATIONS);
			rc = -EPROTONOSUPPORT;
		}
		return rc;
	}
	int rc = db_exec(s->db, "SELECT pg_advisory_lock(" PG_MIGRATION_LOCK ")", "take the migration lock");
	if (rc < 0)
		return rc;
	rc = pg_migrate(s);
	db_exec(s->db, "SELECT pg_advisory_unlock(" PG_MIGRATION_LOCK ")", "release the migration lock");
	if (rc == -EACCES)
		log_error("store %s: the schema is missing or older than this collector's and this role may not "
			  "create tables: run `collector migrate --store URI` once as the database owner; collectors "
			  "then need only SELECT, INSERT, UPDATE on the tables and USAGE on the sequences",
			  db_name(s->db));
	return rc;
}

/* Whether every table the collector writes exists and the migrations are all
 * applied: then a start runs no DDL (an insert-only role suffices). */
static bool pg_schema_current(struct store *s)
{
	int64_t have = 0;
	if (!db_has_table(s->db, "prof_schema_migrations") ||
	    query_int(s, "SELECT COALESCE(MAX(version), 0) FROM prof_schema_migrations", &have) < 0 ||
	    have != PG_NMIGRATIONS)
		return false;
	static const char create[] = "CREATE TABLE IF NOT EXISTS ";
	for (size_t k = 0; store_kinds[k]; k++) {
		for (const char *p = store_kinds[k]->schema_sql; p && (p = strstr(p, create)) != NULL;) {
			p += sizeof(create) - 1;
			char table[64];
			size_t n = strcspn(p, " (");
			if (n == 0 || n >= sizeof(table))
				return false;
			memcpy(table, p, n);
			table[n] = 0;
			if (!db_has_table(s->db, table))
				return false;
		}
	}
	return true;
}

/* PostgreSQL, a read-write open (#40 w40m, w40q): the records ledger's foreign key to sessions
 * dropped where it is there (the server checked it per record: a trigger running a query that locks
 * the session's row, ~10 % of its CPU per record; every session_id the store writes comes from the
 * session it opened, prune locks the session's row before deleting its rows and a commit to a
 * pruned session fails, and SQLite never had the key). Not a schema version: no reader depends on
 * it. The ALTER waits for a lock on records at most 2 s: if it cannot have it (or this role may not
 * alter the table), the key stays (correct, the server's CPU per record higher) and the open goes
 * on. */
static void drop_ledger_key(struct store *s)
{
	int64_t n = 0;
	if (query_int(s, "SELECT COUNT(*) FROM pg_constraint WHERE conname = 'records_session_id_fkey' AND"
			 " conrelid = to_regclass('records')",
		      &n) < 0 || n == 0)
		return;
	int rc = db_exec(s->db, "BEGIN", "begin");
	if (rc == 0)
		rc = db_exec(s->db, "SET LOCAL lock_timeout = '2s'", "lock timeout");
	if (rc == 0)
		rc = db_exec(s->db, "ALTER TABLE records DROP CONSTRAINT IF EXISTS records_session_id_fkey",
			     "drop the records ledger's foreign key");
	if (rc == 0)
		rc = db_exec(s->db, "COMMIT", "commit");
	if (rc < 0) {
		db_exec(s->db, "ROLLBACK", "roll back");
		log_warn("store %s: the records ledger's foreign key to sessions could not be dropped (%s): kept,"
			 " the server checks it per record (slower); tried again at the next open",
			 db_name(s->db), db_last_error(s->db));
	} else {
		log_info("store %s: the records ledger's foreign key to sessions dropped", db_name(s->db));
	}
}

int store_schema_setup(struct store *s)
{
	bool pg_rw = db_engine(s->db) == DB_PG && !(s->flags & STORE_READ_ONLY);
	if (pg_rw && pg_schema_current(s)) {
		log_debug("store %s: schema version %d is current: no DDL", db_name(s->db), PG_NMIGRATIONS);
		drop_ledger_key(s);
		return 0;
	}
	if (db_engine(s->db) == DB_PG) {
		int rc = pg_schema(s);
		if (rc == 0 && pg_rw)
			drop_ledger_key(s);
		return rc;
	}
	int rc = sqlite_schema(s);
	bool rw = !(s->flags & STORE_READ_ONLY);
	if (rc == 0 && rw)
		rc = sqlite_older_writing(s);
	/* sample_blocks of an older collector: without the samples column (NULL in its rows: their
	 * records' cpu_samples rows are counted, store_query.c), nor the pid columns (NULL: such a block is
	 * read by every query); added before the record kinds' schema indexes them */
	static const char *const added[][2] = {
	    {"samples", "ALTER TABLE sample_blocks ADD COLUMN samples INTEGER"},
	    {"pid_min", "ALTER TABLE sample_blocks ADD COLUMN pid_min INTEGER"},
	    {"pid_max", "ALTER TABLE sample_blocks ADD COLUMN pid_max INTEGER"},
	    {"pid_bits", "ALTER TABLE sample_blocks ADD COLUMN pid_bits INTEGER"},
	    {"fmt", "ALTER TABLE sample_blocks ADD COLUMN fmt INTEGER"}, /* version 2, #40 w45a */
	};
	for (size_t i = 0; rc == 0 && rw && db_has_table(s->db, "sample_blocks") && i < 5; i++)
		if (!store_has_column(s, "sample_blocks", added[i][0]))
			rc = db_exec(s->db, added[i][1], "add a sample_blocks column");
	/* Tables of the record kinds: created if missing, also in stores made by an older collector. */
	if (rc == 0 && rw)
		rc = kind_tables(s);
	/* a version 1 store (before the key ids) now has their table and column: marked, so that an older
	 * collector refuses it rather than misread its id blocks */
	int64_t version = 0;
	if (rc == 0 && rw && (rc = query_int(s, "PRAGMA user_version", &version)) == 0 &&
	    version < STORE_SCHEMA_VERSION) {
		rc = db_exec(s->db, "PRAGMA user_version = " STORE_SCHEMA_VERSION_STR, "set schema version");
		if (rc == 0)
			log_info("store %s: schema upgraded to version %d (sample keys stored once per session)",
				 db_name(s->db), STORE_SCHEMA_VERSION);
	}
	return rc;
}
