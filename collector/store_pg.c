/* PostgreSQL back end of the store: schema migrations, batch transactions,
 * sessions, the exactly-once records ledger, events and counter samples. */
#include "store_pg.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "generated/config.h"
#include "log.h"
#include "store.h"
#include "store_kinds.h"

bool store_pg_is_uri(const char *path)
{
	return path && (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

void store_pg_redact(const char *uri, char *out, size_t outlen)
{
	/* scheme://user:password@host... -> scheme://user:***@host... */
	snprintf(out, outlen, "%s", uri);
	char *scheme = strstr(out, "://");
	char *at = scheme ? strchr(scheme + 3, '@') : NULL;
	char *colon = scheme ? strchr(scheme + 3, ':') : NULL;
	if (at && colon && colon < at) {
		char rest[512];
		snprintf(rest, sizeof(rest), "%s", at);
		snprintf(colon, outlen - (size_t)(colon - out), ":***%s", rest);
	}
}

#ifndef CONFIG_STORE_POSTGRESQL

int store_pg_open(const char *uri, unsigned flags, struct store_pg **out)
{
	(void)flags;
	*out = NULL;
	char safe[512];
	store_pg_redact(uri, safe, sizeof(safe));
	log_error("store %s: this collector was built without PostgreSQL support (CONFIG_STORE_POSTGRESQL): "
		  "rebuild with it, or use an SQLite --store PATH",
		  safe);
	return -ENOTSUP;
}
void store_pg_close(struct store_pg *p) { (void)p; }
int store_pg_begin(struct store_pg *p) { (void)p; return -ENOTSUP; }
int store_pg_commit(struct store_pg *p) { (void)p; return -ENOTSUP; }
void store_pg_rollback(struct store_pg *p) { (void)p; }
bool store_pg_in_tx(const struct store_pg *p) { (void)p; return false; }
uint64_t store_pg_tx_records(const struct store_pg *p) { (void)p; return 0; }
int store_pg_session_open(struct store_pg *p, const Prof__Hello *h, const char *peer, int64_t *session_id,
			  uint64_t *max_seq, bool *created)
{
	(void)p, (void)h, (void)peer, (void)session_id, (void)max_seq, (void)created;
	return -ENOTSUP;
}
int store_pg_put_record(struct store_pg *p, int64_t sid, const Prof__Envelope *env, size_t frame_bytes)
{
	(void)p, (void)sid, (void)env, (void)frame_bytes;
	return -ENOTSUP;
}

#else

#include <libpq-fe.h>

#define MIGRATION_LOCK 7412001 /* pg_advisory_lock key: one migrating collector at a time */

/* Migration N (index N-1) takes the schema from version N-1 to N. Append only. */
static const char *const migrations[] = {
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
};
#define NMIGRATIONS ((int)(sizeof(migrations) / sizeof(migrations[0])))

enum pg_stmt { PS_UPSERT, PS_MAX_SEQ, PS_CPU, PS_GPU, PS_RECORD, PS_EVENT, PS_SAMPLES, PS_COUNT, PS_HEARTBEAT, PS__N };

static const char *const stmt_sql[PS__N] = {
    [PS_UPSERT] = "INSERT INTO sessions (agent_id, boot_id, board, kernel_release, hostname, machine,"
		  " agent_version, features, target, schema_version, clock_id, base_ns, realtime_ns, peer,"
		  " first_seen, last_seen, connects, hello)"
		  " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $15, 1, $16)"
		  " ON CONFLICT (agent_id, boot_id) DO UPDATE SET connects = sessions.connects + 1,"
		  " last_seen = EXCLUDED.last_seen, peer = EXCLUDED.peer RETURNING id, connects",
    [PS_MAX_SEQ] = "SELECT COALESCE(MAX(seq), 0) FROM records WHERE session_id = $1",
    [PS_CPU] = "INSERT INTO cpus (session_id, cpu, model, implementer, part, max_freq_khz)"
	       " VALUES ($1, $2, $3, $4, $5, $6)",
    [PS_GPU] = "INSERT INTO gpus (session_id, idx, platform, name, vendor, version, driver, compute_units,"
	       " global_mem_bytes, max_clock_mhz, type) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
    [PS_RECORD] = "INSERT INTO records (session_id, seq, kind, bytes) VALUES ($1, $2, $3, $4)"
		  " ON CONFLICT DO NOTHING",
    [PS_EVENT] = "INSERT INTO events (session_id, event_id, name, type, config, unit)"
		 " VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT DO NOTHING",
    /* one round trip per record: the rows travel as arrays */
    [PS_SAMPLES] = "INSERT INTO counter_samples (session_id, seq, t_ns, event_id, value, running_pct)"
		   " SELECT $1, $2, t, e, v, p FROM unnest($3::bigint[], $4::integer[], $5::bigint[],"
		   " $6::integer[]) AS u(t, e, v, p)",
    [PS_COUNT] = "UPDATE sessions SET records = records + 1, wire_bytes = wire_bytes + $1, last_seen = $2"
		 " WHERE id = $3",
    [PS_HEARTBEAT] = "UPDATE sessions SET last_seen = $1, spool_dropped = $2 WHERE id = $3",
};

struct store_pg {
	PGconn *conn;
	char uri[512]; /* redacted, for logs */
	bool in_tx;
	uint64_t tx_records;
	/* growable text buffers for the sample arrays */
	char *arr[4];
	size_t arrcap[4];
};

/* Map a failed result to an errno and log it. Clears res. */
static int pg_fail(struct store_pg *p, PGresult *res, const char *what)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res) : PQerrorMessage(p->conn);
	char m[512];
	snprintf(m, sizeof(m), "%s", msg && *msg ? msg : "unexpected result");
	m[strcspn(m, "\n")] = 0;
	log_error("store %s: %s: %s%s%s%s", p->uri, what, m, state ? " (SQLSTATE " : "", state ? state : "",
		  state ? ")" : "");
	int rc = -EIO;
	if (PQstatus(p->conn) == CONNECTION_BAD)
		rc = -ECONNRESET;
	else if (state && (strcmp(state, "40P01") == 0 || strcmp(state, "40001") == 0 ||
			   strcmp(state, "55P03") == 0))
		rc = -EBUSY;
	else if (state && strcmp(state, "53100") == 0)
		rc = -ENOSPC;
	PQclear(res);
	return rc;
}

static int pg_cmd(struct store_pg *p, const char *sql, const char *what)
{
	PGresult *res = PQexec(p->conn, sql);
	ExecStatusType st = PQresultStatus(res);
	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
		return pg_fail(p, res, what);
	PQclear(res);
	return 0;
}

static int pg_query_int(struct store_pg *p, const char *sql, int64_t *out)
{
	PGresult *res = PQexec(p->conn, sql);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(p, res, sql);
	*out = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	return 0;
}

/* Run prepared statement i with text parameters (binary where lens[k] > 0). */
static PGresult *pg_run(struct store_pg *p, enum pg_stmt i, int n, const char *const *vals, const int *lens,
			const int *fmts)
{
	char name[16];
	snprintf(name, sizeof(name), "prof_%d", (int)i);
	return PQexecPrepared(p->conn, name, n, vals, lens, fmts, 0);
}

static int pg_run_cmd(struct store_pg *p, enum pg_stmt i, int n, const char *const *vals, const char *what,
		      long *changed)
{
	PGresult *res = pg_run(p, i, n, vals, NULL, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		return pg_fail(p, res, what);
	if (changed)
		*changed = strtol(PQcmdTuples(res), NULL, 10);
	PQclear(res);
	return 0;
}

/* uint64 values are stored as BIGINT two's complement (as in SQLite). */
#define I64(buf, v) (snprintf((buf), sizeof(buf), "%" PRId64, (int64_t)(v)), (buf))

static int migrate(struct store_pg *p, unsigned flags)
{
	int rc = pg_cmd(p, "SET client_min_messages = warning", "configure");
	if (rc == 0)
		rc = pg_cmd(p, "SELECT pg_advisory_lock(" "7412001" ")", "take the migration lock");
	if (rc < 0)
		return rc;
	int64_t have = 0;
	rc = pg_cmd(p,
		    "CREATE TABLE IF NOT EXISTS prof_schema_migrations (version INTEGER PRIMARY KEY,"
		    " applied_at TIMESTAMPTZ NOT NULL DEFAULT now())",
		    "create the migrations table");
	if (rc == 0)
		rc = pg_query_int(p, "SELECT COALESCE(MAX(version), 0) FROM prof_schema_migrations", &have);
	if (rc == 0 && have > NMIGRATIONS) {
		log_error("store %s has schema version %lld, newer than this collector's %d: upgrade the collector",
			  p->uri, (long long)have, NMIGRATIONS);
		rc = -EPROTONOSUPPORT;
	}
	if (rc == 0 && have == 0) {
		int64_t tables = 0;
		rc = pg_query_int(p, "SELECT COUNT(*) FROM information_schema.tables WHERE table_schema ="
				     " current_schema() AND table_name = 'sessions'",
				  &tables);
		if (rc == 0 && tables > 0) {
			log_error("store %s: the database has a 'sessions' table but no collector schema version: "
				  "use another database",
				  p->uri);
			rc = -EINVAL;
		}
	}
	for (int v = (int)have + 1; rc == 0 && v <= NMIGRATIONS && !(flags & STORE_READ_ONLY); v++) {
		char ins[96];
		snprintf(ins, sizeof(ins), "INSERT INTO prof_schema_migrations (version) VALUES (%d)", v);
		rc = pg_cmd(p, "BEGIN", "begin migration");
		if (rc == 0)
			rc = pg_cmd(p, migrations[v - 1], "migrate");
		if (rc == 0)
			rc = pg_cmd(p, ins, "record the migration");
		if (rc == 0)
			rc = pg_cmd(p, "COMMIT", "commit migration");
		if (rc < 0)
			pg_cmd(p, "ROLLBACK", "roll back migration");
		else
			log_info("store %s: schema migrated to version %d", p->uri, v);
	}
	pg_cmd(p, "SELECT pg_advisory_unlock(7412001)", "release the migration lock");
	return rc;
}

int store_pg_open(const char *uri, unsigned flags, struct store_pg **out)
{
	*out = NULL;
	struct store_pg *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	store_pg_redact(uri, p->uri, sizeof(p->uri));
	p->conn = PQconnectdb(uri);
	if (!p->conn || PQstatus(p->conn) != CONNECTION_OK) {
		log_error("store %s: cannot connect: %s: check the URI, that the server runs and accepts this user",
			  p->uri, p->conn ? PQerrorMessage(p->conn) : "out of memory");
		store_pg_close(p);
		return -ECONNREFUSED;
	}
	int rc = migrate(p, flags);
	for (int i = 0; rc == 0 && i < PS__N; i++) {
		char name[16];
		snprintf(name, sizeof(name), "prof_%d", i);
		PGresult *res = PQprepare(p->conn, name, stmt_sql[i], 0, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			rc = pg_fail(p, res, "prepare");
		else
			PQclear(res);
	}
	if (rc < 0) {
		store_pg_close(p);
		return rc;
	}
	*out = p;
	return 0;
}

void store_pg_close(struct store_pg *p)
{
	if (!p)
		return;
	if (p->in_tx)
		store_pg_rollback(p);
	if (p->conn)
		PQfinish(p->conn);
	for (int i = 0; i < 4; i++)
		free(p->arr[i]);
	free(p);
}

int store_pg_begin(struct store_pg *p)
{
	if (p->in_tx)
		return 0;
	if (PQstatus(p->conn) == CONNECTION_BAD) {
		log_warn("store %s: connection lost; reconnecting", p->uri);
		PQreset(p->conn);
		if (PQstatus(p->conn) != CONNECTION_OK)
			return pg_fail(p, NULL, "reconnect");
		for (int i = 0; i < PS__N; i++) {
			char name[16];
			snprintf(name, sizeof(name), "prof_%d", i);
			PGresult *res = PQprepare(p->conn, name, stmt_sql[i], 0, NULL);
			if (PQresultStatus(res) != PGRES_COMMAND_OK)
				return pg_fail(p, res, "prepare");
			PQclear(res);
		}
	}
	int rc = pg_cmd(p, "BEGIN", "begin");
	if (rc < 0)
		return rc;
	p->in_tx = true;
	p->tx_records = 0;
	return 0;
}

int store_pg_commit(struct store_pg *p)
{
	if (!p->in_tx)
		return 0;
	PGresult *res = PQexec(p->conn, "COMMIT");
	/* A COMMIT of an aborted transaction "succeeds" as a ROLLBACK: that is a failure here. */
	int rc = PQresultStatus(res) == PGRES_COMMAND_OK && strcmp(PQcmdStatus(res), "COMMIT") == 0
		     ? 0
		     : pg_fail(p, res, "commit");
	if (rc == 0)
		PQclear(res);
	if (rc < 0)
		store_pg_rollback(p);
	p->in_tx = false;
	p->tx_records = 0;
	return rc;
}

void store_pg_rollback(struct store_pg *p)
{
	if (!p->in_tx)
		return;
	if (PQstatus(p->conn) == CONNECTION_OK && PQtransactionStatus(p->conn) != PQTRANS_IDLE)
		pg_cmd(p, "ROLLBACK", "rollback");
	p->in_tx = false;
	p->tx_records = 0;
}

bool store_pg_in_tx(const struct store_pg *p) { return p->in_tx; }
uint64_t store_pg_tx_records(const struct store_pg *p) { return p->tx_records; }

static int session_hardware(struct store_pg *p, const char *sid, const Prof__Hello *h)
{
	int rc = 0;
	for (size_t i = 0; rc == 0 && i < h->n_cpus; i++) {
		const Prof__CpuInfo *c = h->cpus[i];
		char a[24], b[24], d[24], e[24];
		const char *v[] = {sid, I64(a, c->cpu), c->model ? c->model : "", I64(b, c->implementer),
				   I64(d, c->part), I64(e, c->max_freq_khz)};
		rc = pg_run_cmd(p, PS_CPU, 6, v, "insert cpu", NULL);
	}
	for (size_t i = 0; rc == 0 && i < h->n_gpus; i++) {
		const Prof__GpuDevice *g = h->gpus[i];
		char a[24], b[24], c[24], d[24], e[24];
		const char *v[] = {sid,
				   I64(a, i),
				   g->platform ? g->platform : "",
				   g->name ? g->name : "",
				   g->vendor ? g->vendor : "",
				   g->version ? g->version : "",
				   g->driver ? g->driver : "",
				   I64(b, g->compute_units),
				   I64(c, g->global_mem_bytes),
				   I64(d, g->max_clock_mhz),
				   I64(e, g->type)};
		rc = pg_run_cmd(p, PS_GPU, 11, v, "insert gpu", NULL);
	}
	return rc;
}

int store_pg_session_open(struct store_pg *p, const Prof__Hello *h, const char *peer, int64_t *session_id,
			  uint64_t *max_seq, bool *created)
{
	int rc = store_pg_begin(p);
	if (rc < 0)
		return rc;
	size_t hlen = prof__hello__get_packed_size(h); /* bounded by the frame it came in */
	uint8_t *blob = malloc(hlen ? hlen : 1);
	if (!blob)
		return -ENOMEM;
	prof__hello__pack(h, blob);
	char boot[24], sv[24], clk[24], base[24], real[24], now[24];
	const char *v[16] = {h->agent_id,
			     I64(boot, h->boot_id),
			     h->board ? h->board : "",
			     h->kernel_release ? h->kernel_release : "",
			     h->hostname ? h->hostname : "",
			     h->machine ? h->machine : "",
			     h->agent_version ? h->agent_version : "",
			     h->features ? h->features : "",
			     h->target ? h->target : "",
			     I64(sv, h->schema_version),
			     I64(clk, h->clock_id),
			     I64(base, h->base_ns),
			     I64(real, h->realtime_ns),
			     peer ? peer : "",
			     I64(now, time(NULL)),
			     (const char *)blob};
	int lens[16] = {0};
	int fmts[16] = {0};
	lens[15] = (int)hlen;
	fmts[15] = 1; /* the packed Hello travels as binary */
	PGresult *res = pg_run(p, PS_UPSERT, 16, v, lens, fmts);
	free(blob);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(p, res, "open session");
	int64_t id = strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	int64_t connects = strtoll(PQgetvalue(res, 0, 1), NULL, 10);
	PQclear(res);
	char sid[24];
	I64(sid, id);
	if (connects == 1 && (rc = session_hardware(p, sid, h)) < 0)
		return rc;
	const char *mv[] = {sid};
	res = pg_run(p, PS_MAX_SEQ, 1, mv, NULL, NULL);
	if (PQresultStatus(res) != PGRES_TUPLES_OK || PQntuples(res) != 1)
		return pg_fail(p, res, "highest seq");
	*max_seq = (uint64_t)strtoll(PQgetvalue(res, 0, 0), NULL, 10);
	PQclear(res);
	*session_id = id;
	if (created)
		*created = connects == 1;
	return 0;
}

/* Append "v," to array buffer k. */
static int arr_add(struct store_pg *p, int k, size_t *len, int64_t v)
{
	if (*len + 24 > p->arrcap[k]) {
		size_t nc = p->arrcap[k] ? p->arrcap[k] * 2 : 4096;
		while (nc < *len + 24)
			nc *= 2;
		char *n = realloc(p->arr[k], nc);
		if (!n)
			return -ENOMEM;
		p->arr[k] = n;
		p->arrcap[k] = nc;
	}
	*len += (size_t)snprintf(p->arr[k] + *len, p->arrcap[k] - *len, "%s%" PRId64, *len > 1 ? "," : "", v);
	return 0;
}

static int put_counters(struct store_pg *p, const char *sid, const char *seq, const Prof__Counters *c)
{
	for (size_t i = 0; i < c->n_new_events; i++) {
		const Prof__EventDesc *e = c->new_events[i];
		char id[24], ty[24], cf[24];
		const char *v[] = {sid, I64(id, e->id), e->name, I64(ty, e->type), I64(cf, e->config),
				   e->unit ? e->unit : ""};
		int rc = pg_run_cmd(p, PS_EVENT, 6, v, "insert event", NULL);
		if (rc < 0)
			return rc;
	}
	/* validate.c: n_values == n_t_ns * n_event_ids; running_pct empty or n_values long */
	size_t len[4] = {1, 1, 1, 1};
	for (int k = 0; k < 4; k++) {
		size_t z = 0;
		if (arr_add(p, k, &z, 0) < 0)
			return -ENOMEM;
		p->arr[k][0] = '{';
		len[k] = 1;
	}
	uint64_t t = 0;
	size_t ncols = c->n_event_ids;
	for (size_t r = 0; r < c->n_t_ns; r++) {
		t += c->t_ns[r];
		for (size_t col = 0; col < ncols; col++) {
			size_t i = r * ncols + col;
			if (arr_add(p, 0, &len[0], (int64_t)t) < 0 || arr_add(p, 1, &len[1], c->event_ids[col]) < 0 ||
			    arr_add(p, 2, &len[2], (int64_t)c->values[i]) < 0 ||
			    arr_add(p, 3, &len[3], c->n_running_pct ? c->running_pct[i] : 100) < 0)
				return -ENOMEM;
		}
	}
	for (int k = 0; k < 4; k++) {
		size_t z = len[k];
		if (arr_add(p, k, &z, 0) < 0) /* room for the closing brace */
			return -ENOMEM;
		p->arr[k][len[k]] = '}';
		p->arr[k][len[k] + 1] = 0;
	}
	const char *v[] = {sid, seq, p->arr[0], p->arr[1], p->arr[2], p->arr[3]};
	return pg_run_cmd(p, PS_SAMPLES, 6, v, "insert counter samples", NULL);
}

static int put_heartbeat(struct store_pg *p, const char *sid, const Prof__Heartbeat *hb)
{
	char now[24], dr[24];
	const char *v[] = {I64(now, time(NULL)), I64(dr, hb->spool_dropped), sid};
	return pg_run_cmd(p, PS_HEARTBEAT, 3, v, "heartbeat", NULL);
}

int store_pg_put_record(struct store_pg *p, int64_t session_id, const Prof__Envelope *env, size_t frame_bytes)
{
	const struct store_kind *kind = store_kind_find(env->body_case);
	if (!kind)
		return -EINVAL;
	if (env->body_case != PROF__ENVELOPE__BODY_COUNTERS && env->body_case != PROF__ENVELOPE__BODY_HEARTBEAT)
		return -EOPNOTSUPP; /* the other kinds need the SQLite store for now */
	if (kind->check) {
		int crc = kind->check(env);
		if (crc < 0)
			return crc;
	}
	if (env->seq > (uint64_t)INT64_MAX)
		return -ERANGE;
	int rc = store_pg_begin(p);
	if (rc < 0)
		return rc;
	char sid[24], seq[24], bytes[24], now[24];
	I64(sid, session_id);
	I64(seq, env->seq);
	if (env->seq == 0) {
		if (env->body_case != PROF__ENVELOPE__BODY_HEARTBEAT)
			return -EINVAL;
		rc = put_heartbeat(p, sid, env->heartbeat);
		return rc < 0 ? rc : 1;
	}
	long changed = 0;
	const char *v[] = {sid, seq, kind->name, I64(bytes, frame_bytes)};
	rc = pg_run_cmd(p, PS_RECORD, 4, v, "insert record", &changed);
	if (rc < 0)
		return rc;
	if (changed == 0)
		return 0; /* already stored (by this or another collector): exactly once */
	rc = env->body_case == PROF__ENVELOPE__BODY_COUNTERS ? put_counters(p, sid, seq, env->counters)
							      : put_heartbeat(p, sid, env->heartbeat);
	if (rc < 0)
		return rc;
	const char *cv[] = {bytes, I64(now, time(NULL)), sid};
	rc = pg_run_cmd(p, PS_COUNT, 3, cv, "count record", NULL);
	if (rc < 0)
		return rc;
	p->tx_records++;
	return 1;
}

#endif
