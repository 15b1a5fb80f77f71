/* Store core: opening, the statement cache, batch transactions and the write
 * path (sessions, the exactly-once records ledger, dispatch to the record
 * kinds of store_kinds.c), on either database engine (db.h). Depends only on
 * the db layer, the schema set-up and the kinds table; kind modules
 * (store_counters.c, store_samples.c, ...) call it, never the reverse. */
#include "store.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "log.h"
#include "net.h"
#include "store_ahead.h"
#include "store_kinds.h"
#include "store_priv.h"
#include "store_keyids.h"
#include "store_tally.h"
#include "store_writers.h"

static const char session_upsert[] =
    "INSERT INTO sessions (agent_id, boot_id, board, kernel_release, hostname, machine,"
    " agent_version, features, target, schema_version, clock_id, base_ns, realtime_ns, peer,"
    " first_seen, last_seen, connects, hello)"
    " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?15, 1, ?16)"
    " ON CONFLICT (agent_id, boot_id) DO UPDATE SET connects = sessions.connects + 1,"
    " last_seen = excluded.last_seen, peer = excluded.peer"
    " RETURNING id, connects";
static const char session_select[] = "SELECT id FROM sessions WHERE agent_id = ?1 AND boot_id = ?2";
static const char max_seq_select[] = "SELECT COALESCE(MAX(seq), 0) FROM records WHERE session_id = ?1";
static const char cpu_insert[] = "INSERT INTO cpus (session_id, cpu, model, implementer, part, max_freq_khz)"
				 " VALUES (?1, ?2, ?3, ?4, ?5, ?6)";
static const char gpu_insert[] = "INSERT INTO gpus (session_id, idx, platform, name, vendor, version, driver,"
				 " compute_units, global_mem_bytes, max_clock_mhz, type)"
				 " VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)";
/* The exactly-once rule: the primary key (session_id, seq); a duplicate changes nothing. */
static const char record_insert[] = "INSERT INTO records (session_id, seq, kind, bytes) VALUES (?1, ?2, ?3, ?4)"
				    " ON CONFLICT DO NOTHING";
/* A record sent ahead (store_ahead.h): a duplicate fails, the transaction's records are redone. */
static const char record_insert_ahead[] =
    "INSERT INTO records (session_id, seq, kind, bytes) VALUES (?1, ?2, ?3, ?4)";
static const char event_insert[] = "INSERT INTO events (session_id, event_id, name, type, config, unit)"
				   " VALUES (?1, ?2, ?3, ?4, ?5, ?6) ON CONFLICT DO NOTHING";

struct db_stmt *store_stmt_find(struct store *s, const char *key, int rows)
{
	for (int i = 0; i < s->ncache; i++)
		if (s->cache[i].sql == key && s->cache[i].rows == rows)
			return s->cache[i].st;
	return NULL;
}

struct db_stmt *store_stmt_add(struct store *s, const char *key, int rows, const char *sql)
{
	if (s->ncache == STORE_STMT_CACHE) {
		log_error("store %s: more than %d cached statements", db_name(s->db), STORE_STMT_CACHE);
		return NULL;
	}
	struct db_stmt *st;
	if (db_prepare(s->db, sql, key, &st) < 0)
		return NULL;
	s->cache[s->ncache].sql = key;
	s->cache[s->ncache].rows = rows;
	s->cache[s->ncache].st = st;
	s->ncache++;
	return st;
}

struct db_stmt *store_stmt(struct store *s, const char *sql)
{
	struct db_stmt *st = store_stmt_find(s, sql, 0);
	return st ? st : store_stmt_add(s, sql, 0, sql);
}

struct db_stmt *store_stmt_batch(struct store *s, const char *sql)
{
	struct db_stmt *st = store_stmt_find(s, sql, 0);
	if (!st && (st = store_stmt_add(s, sql, 0, sql)))
		db_batch(st);
	return st;
}

struct db_stmt *store_query(struct store *s, const char *sql)
{
	struct db_stmt *st;
	return db_prepare(s->db, sql, sql, &st) < 0 ? NULL : st;
}

int store_check_flags(const char *mode, unsigned *flags)
{
	if (strcmp(mode, "full") == 0)
		*flags = STORE_CHECK_FULL;
	else if (strcmp(mode, "auto") == 0)
		*flags = STORE_CHECK_AUTO;
	else if (strcmp(mode, "quick") == 0)
		*flags = STORE_CHECK_QUICK;
	else if (strcmp(mode, "off") == 0)
		*flags = 0;
	else
		return -EINVAL;
	return 0;
}

/* STORE_CHECK_AUTO: the quick check when the last writers did not all close the store. */
static void auto_check(struct store *s)
{
	char why[200] = "";
	int u = store_writers_unclean(s, why, sizeof(why));
	if (u == 1)
		log_warn("store %s was not closed cleanly (%s): checking it first (quick_check)",
			 db_name(s->db), why);
	else if (u == -ENOENT)
		log_debug("store %s: written before the writers ledger: checking it (quick_check)",
			  db_name(s->db));
	if (u != 0)
		s->flags |= STORE_CHECK_QUICK;
}

/* The integrity check on open, before the schema set-up (which may write). */
static int check(struct store *s, const char *path)
{
	const char *name = db_name(s->db); /* the path, or the URI without its password */
	bool full = (s->flags & STORE_CHECK_FULL) != 0;
	char why[512];
	uint64_t t0 = clock_mono_ns();
	int rc = db_check(s->db, full ? DB_CHECK_FULL : DB_CHECK_QUICK, full ? 0 : STORE_CHECK_QUICK_MS, why,
			  sizeof(why));
	double took = (double)(clock_mono_ns() - t0) / 1e9;
	struct stat sb;
	double mib = db_engine(s->db) == DB_SQLITE && stat(path, &sb) == 0 ? (double)sb.st_size / 1048576.0 : 0;
	if (rc == 1) {
		log_warn("store %s: quick check stopped after %.1f s (%.0f MiB): no damage in the part it read; run "
			 "once with --check full to check all of it (it takes longer)",
			 name, took, mib);
		return 0;
	}
	if (rc == -EUCLEAN)
		log_error("store %s is damaged (%s: %s): refused, nothing was written into it; copy what it holds "
			  "into a new store with `collector recover --store %s --out %s.recovered` and use --store "
			  "%s.recovered%s",
			  name, full ? "integrity_check" : "quick_check", why, name, name, name,
			  (s->flags & STORE_READ_ONLY) ? " (or --check off to read what is still readable)" : "");
	else if (rc == 0 && db_engine(s->db) == DB_SQLITE)
		log_debug("store %s: %s ok in %.2f s (%.0f MiB)", name, full ? "integrity_check" : "quick_check", took,
			  mib);
	return rc;
}

void store_set_loop_mode(struct store *s, int intr_fd0, int intr_fd1)
{
	db_pg_set_interrupt(s->db, intr_fd0, intr_fd1);
	db_set_quiet(s->db, true);
}

bool store_needs_reconnect(const struct store *s) { return db_needs_reconnect(s->db); }
const char *store_last_error(const struct store *s) { return db_last_error(s->db); }
size_t store_rows_held_peak(const struct store *s) { return db_pg_rows_held_peak(s->db); }
uint64_t store_statements_sent(const struct store *s) { return db_pg_statements(s->db); }
uint64_t store_keydict_loads(const struct store *s) { return s->keydict_loads; }
uint64_t store_keydict_extends(const struct store *s) { return s->keydict_extends; }

uint64_t store_text_blobs(const struct store *s) { return db_pg_text_blobs(s->db); }
size_t store_batch_bytes_peak(const struct store *s) { return db_pg_batch_bytes_peak(s->db); }
const char *store_name(const struct store *s) { return db_name(s->db); }

int store_reconnect_poll(struct store *s)
{
	if (s->in_tx)
		store_rollback(s);
	store_ahead_clear(s);
	return db_reconnect_poll(s->db);
}

const char *store_strerror(int err)
{
	switch (err < 0 ? -err : err) {
	case ECONNRESET: return "database connection lost";
	case EROFS: return "database is read-only";
	case ETIMEDOUT: return "database did not answer in time";
	case EINTR: return "stop requested while waiting for the database";
	case EACCES: return "database refused the write (permission denied)";
	case ENOSPC: return "database is out of disk space";
	case EBUSY: return "database busy (lock, deadlock or serialization failure)";
	case ENOMEM: return "out of memory";
	default: return "database error";
	}
}

int store_durability(struct store *s, char *buf, size_t len)
{
	if (db_engine(s->db) == DB_SQLITE) {
		snprintf(buf, len,
			 (s->flags & STORE_SYNC_FULL)
			     ? "SQLite synchronous=FULL: an ack means the record is on disk (survives a power cut)"
			     : "SQLite synchronous=NORMAL (WAL): an ack survives a collector crash, not a power cut");
		return 0;
	}
	char sc[32];
	int rc = db_pg_setting(s->db, "synchronous_commit", sc, sizeof(sc));
	if (rc < 0) {
		snprintf(buf, len, "PostgreSQL: cannot read synchronous_commit");
		return rc;
	}
	bool sync = strcmp(sc, "on") == 0 || strcmp(sc, "remote_apply") == 0 || strcmp(sc, "remote_write") == 0;
	if ((s->flags & STORE_SYNC_FULL) && !sync) {
		snprintf(buf, len, "PostgreSQL synchronous_commit=%s although the collector set it on", sc);
		return -EIO;
	}
	snprintf(buf, len,
		 sync ? "PostgreSQL synchronous_commit=%s: an ack means the commit is flushed to the server's WAL "
			"(a server crash keeps it; a failover keeps it only with synchronous standbys)"
		      : "PostgreSQL synchronous_commit=%s (--sync normal keeps the server's setting): an ack may be "
			"lost if the server crashes; agents see it as an ack regression and re-send what their "
			"spools still hold",
		 sc);
	return 0;
}

bool store_damaged(const struct store *s)
{
	return s && db_damaged(s->db);
}

int store_open(const char *path, unsigned flags, struct store **out)
{
	return store_open_timeout(path, flags, 0, -1, out);
}

int store_open_timeout(const char *path, unsigned flags, unsigned timeout_ms, int intr_fd, struct store **out)
{
	*out = NULL;
	struct store *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->flags = flags;
	int rc = 0;
	struct stat sb;
	if (!db_is_pg_uri(path) && stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
		/* SQLite says only "disk I/O error" (or "unable to open") for a directory. */
		log_error("store %s is a directory: --store takes the database file, e.g. %s/profile.db", path,
			  path);
		rc = -EISDIR;
	} else if (!db_is_pg_uri(path) && !(flags & (STORE_READ_ONLY | STORE_INIT)) && stat(path, &sb) == 0 &&
		   S_ISREG(sb.st_mode) && sb.st_size == 0) {
		/* An emptied file (truncated by mistake, a failed copy) is not silently a new store. */
		log_error("store %s is an empty (0-byte) file, not a profiler store: check the path, or pass "
			  "--init to start a new store in it",
			  path);
		rc = -ENODATA;
	}
	if (rc == 0)
		rc = db_is_pg_uri(path) ? db_open_pg(path,
							   &(struct db_pg_opts){.timeout_ms = timeout_ms,
										.sync_commit = (flags & STORE_SYNC_FULL) != 0,
										.read_only = (flags & STORE_READ_ONLY) != 0,
										.intr_fd = intr_fd},
							   &s->db)
					: db_open_sqlite(path, (flags & STORE_READ_ONLY) != 0, &s->db);
	bool file = rc == 0 && db_engine(s->db) == DB_SQLITE && strcmp(path, ":memory:") != 0;
	if (file && (flags & STORE_CHECK_AUTO) && !(flags & (STORE_CHECK_QUICK | STORE_CHECK_FULL)))
		auto_check(s);
	if (rc == 0 && (s->flags & (STORE_CHECK_QUICK | STORE_CHECK_FULL)) && strcmp(path, ":memory:") != 0)
		rc = check(s, path);
	if (rc == 0)
		rc = store_schema_setup(s);
	if (rc == 0 && file && !(flags & (STORE_READ_ONLY | STORE_SECOND))) {
		rc = store_writers_enter(s);
		s->writer = rc == 0;
	}
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
	if (s->in_tx)
		store_rollback(s);
	store_ahead_clear(s);
	store_ahead_forget_dups(s);
	free(s->tally);
	free(s->locked);
	store_keyids_free(s);
	for (int i = 0; i < s->ncache; i++)
		db_finalize(s->cache[i].st);
	if (s->writer && !db_damaged(s->db))
		store_writers_leave(s); /* closed cleanly */
	db_close(s->db);
	free(s);
}

int store_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	if (s->read_tx) { /* a write on a reading handle: the read transaction ends first (not nested) */
		log_debug("store %s: a write ends the read transaction", db_name(s->db));
		db_read_end(s->db);
		s->read_tx = false;
		s->read_depth = 0;
	}
	int rc = db_begin(s->db);
	if (rc < 0)
		return rc;
	s->in_tx = true;
	s->tx_records = 0;
	s->ahead_sps = 0;
	return 0;
}

int store_read_begin(struct store *s)
{
	if (s->in_tx)
		return 0;
	if (s->read_tx) {
		s->read_depth++;
		return 1;
	}
	int rc = db_read_begin(s->db);
	if (rc == 1) {
		s->read_tx = true;
		s->read_depth = 1;
	}
	return rc;
}

void store_read_end(struct store *s, int began)
{
	if (began != 1 || !s->read_tx || --s->read_depth > 0)
		return;
	db_read_end(s->db);
	s->read_tx = false;
}

bool store_read_snapshot(const struct store *s)
{
	return s->read_tx;
}

/* PostgreSQL, inside a read transaction: the next statements take their order from an index rather than
 * sort (SET LOCAL enable_sort; #40 w46a: a store not yet analyzed had each slice of blocks sorted to disk;
 * review r11 F3: session-wide it slowed statements that sort anyway), until called with false (the user's
 * own setting back: r12 F3). */
void store_read_index_order(struct store *s, bool on)
{
	if (s->read_tx && db_engine(s->db) == DB_PG)
		db_send(s->db, on ? "SET LOCAL enable_sort = off" : "SET LOCAL enable_sort TO DEFAULT", "planner setting");
}

void store_read_renew(struct store *s)
{
	if (!s->read_tx)
		return;
	db_read_end(s->db); /* PostgreSQL: a failed statement left the transaction unusable */
	if (db_read_begin(s->db) != 1) {
		s->read_tx = false; /* the outer store_read_end finds none to end */
		s->read_depth = 0;
	}
}

void store_set_keydict_hook(struct store *s, void (*fn)(void *arg), void *arg)
{
	s->keydict_hook = fn;
	s->keydict_hook_arg = arg;
}

int store_commit(struct store *s)
{
	if (!s->in_tx)
		return 0;
	int rc = store_tally_write(s); /* the sessions' counters, in the same transaction */
	if (rc == 0)
		rc = db_commit(s->db);
	else if (rc != -EEXIST) /* not committed: nothing of it may stay open on the server */
		db_rollback(s->db);
	if (rc == -EEXIST && s->ahead_sp) { /* a record sent ahead was a duplicate: redone, committed */
		rc = store_ahead_redo(s); /* the counters' UPDATEs rolled back with the records: again */
		if (rc == 0)
			rc = store_tally_write(s);
		if (rc == 0)
			rc = db_commit(s->db);
		if (rc < 0)
			db_rollback(s->db);
	} else if (rc == -EEXIST) {
		db_rollback(s->db);
	}
	store_ahead_clear(s);
	store_tally_clear(s);
	store_keyids_tx_end(s, rc == 0);
	s->in_tx = false;
	s->tx_records = 0;
	return rc;
}

void store_rollback(struct store *s)
{
	if (!s->in_tx)
		return;
	db_rollback(s->db);
	store_ahead_clear(s);
	store_tally_clear(s);
	store_keyids_tx_end(s, false);
	s->in_tx = false;
	s->tx_records = 0;
}

bool store_in_tx(const struct store *s) { return s->in_tx; }
uint64_t store_tx_records(const struct store *s) { return s->tx_records; }

static int session_hardware(struct store *s, int64_t id, const Prof__Hello *h)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < h->n_cpus; i++) {
		const Prof__CpuInfo *c = h->cpus[i];
		struct db_stmt *st = store_stmt(s, cpu_insert);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, id);
		db_bind_i64(st, 2, c->cpu);
		db_bind_text(st, 3, c->model);
		db_bind_i64(st, 4, c->implementer);
		db_bind_i64(st, 5, c->part);
		db_bind_u64(st, 6, c->max_freq_khz);
		rc = db_run(st);
	}
	for (size_t i = 0; rc == 0 && i < h->n_gpus; i++) {
		const Prof__GpuDevice *g = h->gpus[i];
		struct db_stmt *st = store_stmt(s, gpu_insert);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, id);
		db_bind_i64(st, 2, (int64_t)i);
		db_bind_text(st, 3, g->platform);
		db_bind_text(st, 4, g->name);
		db_bind_text(st, 5, g->vendor);
		db_bind_text(st, 6, g->version);
		db_bind_text(st, 7, g->driver);
		db_bind_i64(st, 8, g->compute_units);
		db_bind_u64(st, 9, g->global_mem_bytes);
		db_bind_i64(st, 10, g->max_clock_mhz);
		db_bind_i64(st, 11, g->type);
		rc = db_run(st);
	}
	return rc;
}

static int session_max_seq(struct store *s, int64_t id, uint64_t *max_seq)
{
	struct db_stmt *st = store_stmt(s, max_seq_select);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, id);
	int rc = db_step(st);
	if (rc == 1)
		*max_seq = db_col_u64(st, 0);
	db_reset(st);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

static int session_find(struct store *s, const char *agent_id, uint64_t boot_id, int64_t *session_id,
			uint64_t *max_seq)
{
	struct db_stmt *st = store_stmt(s, session_select);
	if (!st)
		return -EIO;
	db_bind_text(st, 1, agent_id);
	db_bind_u64(st, 2, boot_id);
	int rc = db_step(st);
	int64_t id = rc == 1 ? db_col_i64(st, 0) : 0;
	db_reset(st);
	if (rc <= 0)
		return rc;
	if ((rc = session_max_seq(s, id, max_seq)) < 0)
		return rc;
	*session_id = id;
	return 1;
}

/* A record sent ahead proved a duplicate when a later statement read the pipeline (rc -EEXIST):
 * the records sent ahead redone (store_ahead.h); 1: run the failed call again. */
static int after_ahead_failed(struct store *s, int rc)
{
	if (rc != -EEXIST || !s->ahead_sp)
		return rc;
	rc = store_ahead_redo(s);
	return rc < 0 ? rc : 1;
}

int store_session_find(struct store *s, const char *agent_id, uint64_t boot_id, int64_t *session_id,
		       uint64_t *max_seq)
{
	int rc = session_find(s, agent_id, boot_id, session_id, max_seq);
	if (rc == -EEXIST && (rc = after_ahead_failed(s, rc)) == 1)
		rc = session_find(s, agent_id, boot_id, session_id, max_seq);
	return rc;
}

static int session_open(struct store *s, const Prof__Hello *h, const char *peer, int64_t *session_id,
			uint64_t *max_seq, bool *created);

int store_session_open(struct store *s, const Prof__Hello *h, const char *peer, int64_t *session_id,
		       uint64_t *max_seq, bool *created)
{
	int rc = session_open(s, h, peer, session_id, max_seq, created);
	if (rc == -EEXIST && (rc = after_ahead_failed(s, rc)) == 1)
		rc = session_open(s, h, peer, session_id, max_seq, created);
	return rc;
}

static int session_open(struct store *s, const Prof__Hello *h, const char *peer, int64_t *session_id,
			uint64_t *max_seq, bool *created)
{
	int rc = store_begin(s);
	if (rc < 0)
		return rc;
	struct db_stmt *st = store_stmt(s, session_upsert);
	if (!st)
		return -EIO;
	/* The packed Hello is bounded by the frame it came in. */
	size_t hlen = prof__hello__get_packed_size(h);
	uint8_t *blob = malloc(hlen ? hlen : 1);
	if (!blob)
		return -ENOMEM;
	prof__hello__pack(h, blob);
	db_bind_text(st, 1, h->agent_id);
	db_bind_u64(st, 2, h->boot_id);
	db_bind_text(st, 3, h->board);
	db_bind_text(st, 4, h->kernel_release);
	db_bind_text(st, 5, h->hostname);
	db_bind_text(st, 6, h->machine);
	db_bind_text(st, 7, h->agent_version);
	db_bind_text(st, 8, h->features);
	db_bind_text(st, 9, h->target);
	db_bind_i64(st, 10, h->schema_version);
	db_bind_i64(st, 11, h->clock_id);
	db_bind_u64(st, 12, h->base_ns);
	db_bind_u64(st, 13, h->realtime_ns);
	db_bind_text(st, 14, peer);
	db_bind_i64(st, 15, (int64_t)time(NULL));
	db_bind_blob(st, 16, blob, hlen);
	free(blob);
	int64_t id = 0, connects = 0;
	rc = db_step(st);
	if (rc == 1) {
		id = db_col_i64(st, 0);
		connects = db_col_i64(st, 1);
		rc = db_step(st);
	} else if (rc == 0) {
		rc = -EIO;
	}
	db_reset(st);
	if (rc < 0)
		return rc;
	if (connects == 1 && (rc = session_hardware(s, id, h)) < 0)
		return rc;
	if ((rc = session_max_seq(s, id, max_seq)) < 0)
		return rc;
	*session_id = id;
	if (created)
		*created = connects == 1;
	return 0;
}

bool store_put_ahead(const struct store *s) { return s->put_ahead; }

int store_put_event_descs(struct store *s, int64_t sid, Prof__EventDesc *const *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const Prof__EventDesc *e = ev[i];
		struct db_stmt *st = store_stmt(s, event_insert);
		if (!st)
			return -EIO;
		db_bind_i64(st, 1, sid);
		db_bind_i64(st, 2, e->id);
		db_bind_text(st, 3, e->name);
		db_bind_i64(st, 4, e->type);
		db_bind_u64(st, 5, e->config);
		db_bind_text(st, 6, e->unit);
		int rc = db_run(st);
		if (rc < 0)
			return rc;
	}
	return 0;
}

/* One record: exactly (its ledger row's count read: one round trip on PostgreSQL) or sent ahead. */
static int put_record(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes, bool ahead)
{
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
		if (s->ahead_sp && db_pg_syncs(s->db) == s->ahead_mark && (rc = store_ahead_settle(s)) < 0)
			return rc; /* not undone with the records sent ahead if one proves a duplicate */
		rc = kind->put(s, sid, env);
		return rc < 0 ? rc : 1;
	}
	/* PostgreSQL: the session's row locked before any of its rows (store_tally_lock: no deadlock
	 * between two writers of one session), and before the savepoint of records sent ahead where
	 * this record opens one (a rollback to it keeps the lock) */
	if ((rc = store_tally_lock(s, sid)) < 0)
		return rc;
	if (ahead && db_engine(s->db) == DB_PG) {
		if ((rc = store_ahead_begin(s)) < 0)
			return rc;
		ahead = rc == 0; /* 1: no savepoint left in this transaction */
	} else {
		ahead = false;
	}
	/* sent ahead: the ledger rows of a transaction's records batched (its duplicate is found
	 * by the next read or the commit either way) */
	struct db_stmt *st = ahead ? store_stmt_batch(s, record_insert_ahead) : store_stmt(s, record_insert);
	if (!st)
		return -EIO;
	db_bind_i64(st, 1, sid);
	db_bind_u64(st, 2, env->seq);
	db_bind_text(st, 3, kind->name);
	db_bind_i64(st, 4, (int64_t)frame_bytes);
	rc = db_run(st);
	/* PostgreSQL: the one round trip of a record, but for one sent ahead */
	int64_t changed = rc < 0 ? rc : ahead ? 1 : db_changes(s->db);
	if (changed < 0)
		return (int)changed;
	if (changed == 0)
		return 0; /* already stored (by this or another collector): exactly once */
	s->put_ahead = ahead;
	rc = kind->put(s, sid, env);
	s->put_ahead = false;
	if (rc < 0)
		return rc;
	/* the session's records, bytes and last_seen: summed, written at the commit (store_tally.h) */
	if ((rc = store_tally_add(s, sid, frame_bytes, (int64_t)time(NULL))) < 0)
		return rc;
	s->tx_records++;
	if (ahead && (rc = store_ahead_keep(s, sid, env, frame_bytes)) < 0)
		return rc;
	return 1;
}

static int put_retry(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes, bool ahead)
{
	int rc = put_record(s, sid, env, frame_bytes, ahead);
	if (rc == -EEXIST && (rc = after_ahead_failed(s, rc)) == 1)
		rc = put_record(s, sid, env, frame_bytes, false);
	return rc;
}

int store_put_record(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes)
{
	return put_retry(s, sid, env, frame_bytes, false);
}

int store_put_record_ahead(struct store *s, int64_t sid, const Prof__Envelope *env, size_t frame_bytes)
{
	return put_retry(s, sid, env, frame_bytes, true);
}
