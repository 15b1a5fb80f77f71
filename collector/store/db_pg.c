/* Database layer, PostgreSQL engine (libpq). The connection stays in pipeline mode: db_run() queues a
 * statement and returns; the results are read in order (a "drain": Sync, then every pending result) when a
 * caller needs one (db_changes, a query's rows, commit) or when many are pending. Statements are prepared
 * on the server under unique names the first time they run (pipelined too); parameters travel as text,
 * blobs as binary. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_priv.h"
#include "generated/config.h"
#include "log.h"

#ifndef CONFIG_STORE_POSTGRESQL

int db_open_pg(const char *uri, const struct db_pg_opts *o, struct db **out)
{
	(void)o;
	*out = NULL;
	char safe[512];
	db_redact_uri(uri, safe, sizeof(safe));
	log_error("store %s: this collector was built without PostgreSQL support (CONFIG_STORE_POSTGRESQL): "
		  "rebuild with it, or use an SQLite --store PATH",
		  safe);
	return -ENOTSUP;
}

void db_pg_set_interrupt(struct db *d, int fd0, int fd1) { (void)d, (void)fd0, (void)fd1; }
void db_set_quiet(struct db *d, bool quiet) { (void)d, (void)quiet; }
bool db_needs_reconnect(const struct db *d) { (void)d; return false; }
int db_reconnect_poll(struct db *d) { (void)d; return 1; }
size_t db_pg_rows_held_peak(const struct db *d) { (void)d; return 0; }
uint64_t db_pg_syncs(const struct db *d) { (void)d; return 0; }
uint64_t db_pg_statements(const struct db *d) { (void)d; return 0; }
int db_pg_setting(struct db *d, const char *name, char *out, size_t outlen)
{
	(void)d, (void)name;
	if (outlen)
		out[0] = 0;
	return -ENOTSUP;
}

#else

#include <libpq-fe.h>
#include <poll.h>
#include <time.h>

#include "db_pg_priv.h"

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static bool state_is(const char *state, const char *code) { return state && !strcmp(state, code); }

/* Error classes a new connection can cure: connection exceptions (08xxx), the
 * server shutting down or starting (57P01..57P03), a read-only transaction (a
 * session made while the database was read-only, or on a standby after a
 * failover: 25006). */
static bool curable_by_reconnect(const char *state)
{
	return state && (!strncmp(state, "08", 2) || state_is(state, "57P01") || state_is(state, "57P02") ||
			 state_is(state, "57P03") || state_is(state, "25006"));
}

/* unique_violation on the records ledger: a record sent ahead (store_put_record_ahead, #40) that
 * another collector had stored; the store redoes the transaction's records one by one. Also on the
 * two tables a record sent ahead writes without ON CONFLICT (store_put_ahead, w40m). */
static bool records_duplicate(const PGresult *res)
{
	const char *table = res ? PQresultErrorField(res, PG_DIAG_TABLE_NAME) : NULL;
	return res && state_is(PQresultErrorField(res, PG_DIAG_SQLSTATE), "23505") && table &&
	       (!strcmp(table, "records") || !strcmp(table, "sample_blocks") || !strcmp(table, "sample_intervals"));
}

static int pg_errno(struct pg *p, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (!p->conn || p->broken || PQstatus(p->conn) == CONNECTION_BAD || curable_by_reconnect(state)) {
		p->broken = true;
		return state_is(state, "25006") ? -EROFS : -ECONNRESET;
	}
	if (records_duplicate(res))
		return -EEXIST;
	if (state_is(state, "40P01") || state_is(state, "40001") || state_is(state, "55P03"))
		return -EBUSY;
	if (state_is(state, "57014"))
		return -ETIMEDOUT; /* statement_timeout */
	if (state_is(state, "53100"))
		return -ENOSPC;
	if (state_is(state, "42501"))
		return -EACCES;
	return -EIO;
}

/* Log a failure and map it to an errno; res may be NULL (connection error). */
int dbpg_fail(struct pg *p, const PGresult *res, const char *what)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *msg = res && *PQresultErrorMessage(res) ? PQresultErrorMessage(res)
			  : p->conn				   ? PQerrorMessage(p->conn)
								   : "no connection";
	char m[200];
	snprintf(m, sizeof(m), "%s", msg && *msg ? msg : "unexpected result");
	m[strcspn(m, "\n")] = 0;
	snprintf(p->base.last_error, sizeof(p->base.last_error), "%.60s: %.150s%s%s%s", what, m,
		 state ? " (SQLSTATE " : "", state ? state : "", state ? ")" : "");
	if (p->quiet || records_duplicate(res)) /* a duplicate is handled by the store: not an error */
		log_debug("store %s: %s", p->base.name, p->base.last_error);
	else
		log_error("store %s: %s", p->base.name, p->base.last_error);
	/* data_corrupted, index_corrupted, io_error: the server cannot vouch for what it holds */
	if (state && (!strcmp(state, "XX001") || !strcmp(state, "XX002") || !strcmp(state, "58030")))
		p->base.damaged = true;
	return pg_errno(p, res);
}

/* A wait that ended without an answer: the connection is given up. */
static int pg_fail_wait(struct pg *p, int rc, const char *what)
{
	p->broken = true;
	if (rc == -ETIMEDOUT)
		snprintf(p->base.last_error, sizeof(p->base.last_error), "%.60s: no answer within %u ms", what,
			 p->timeout_ms + 1000u);
	else
		snprintf(p->base.last_error, sizeof(p->base.last_error), "%.60s: interrupted (stop requested)",
			 what);
	if (p->quiet || rc == -EINTR)
		log_debug("store %s: %s", p->base.name, p->base.last_error);
	else
		log_error("store %s: %s", p->base.name, p->base.last_error);
	return rc;
}

/* Wait until sock has one of events (or an interrupt descriptor is readable);
 * 0, -ETIMEDOUT (once past the deadline: one look without waiting) or -EINTR. */
static int wait_sock(struct pg *p, int sock, short events, uint64_t deadline)
{
	for (;;) {
		struct pollfd pf[3] = {{.fd = sock, .events = events},
				       {.fd = p->intr_fd[0], .events = POLLIN},
				       {.fd = p->intr_fd[1], .events = POLLIN}};
		uint64_t now = now_ns();
		uint64_t left = now >= deadline ? 0 : deadline - now;
		uint64_t ms = left > 60000000000ull ? 60000 : (left + 999999u) / 1000000u;
		int n = poll(pf, 3, (int)ms);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if ((pf[1].revents | pf[2].revents) & POLLIN)
			return -EINTR;
		if (n > 0)
			return 0;
		if (ms == 0)
			return -ETIMEDOUT;
	}
}

/* The next result of the connection without blocking past the deadline: 0 with
 * *out (NULL at the end of a statement's results), or a negative errno
 * (connection lost, timed out, interrupted). */
int dbpg_next_result(struct pg *p, PGresult **out, const char *what)
{
	*out = NULL;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	/* In the loop the wait is bounded; commands (reports, migrate) may run long queries. */
	uint64_t deadline = p->quiet ? now_ns() + ((uint64_t)p->timeout_ms + 1000u) * 1000000u : UINT64_MAX;
	for (;;) {
		int f = PQflush(p->conn);
		if (f < 0)
			return dbpg_fail(p, NULL, what);
		if (f == 0 && !PQisBusy(p->conn)) {
			*out = PQgetResult(p->conn);
			return 0;
		}
		int rc = wait_sock(p, PQsocket(p->conn), (short)(POLLIN | (f == 1 ? POLLOUT : 0)), deadline);
		if (rc < 0)
			return pg_fail_wait(p, rc, what);
		if (PQconsumeInput(p->conn) != 1)
			return dbpg_fail(p, NULL, what);
	}
}

int dbpg_push(struct pg *p, enum pend_kind kind, const char *what, struct pg_stmt *query)
{
	if (p->qlen == p->qcap) {
		size_t nc = p->qcap ? p->qcap * 2 : 64;
		struct pend *nq = realloc(p->q, nc * sizeof(*nq));
		if (!nq)
			return -ENOMEM;
		p->q = nq;
		p->qcap = nc;
	}
	p->q[p->qlen++] = (struct pend){.kind = kind, .what = what, .query = query};
	p->statements += kind != P_PREPARE && kind != P_SYNC;
	return 0;
}

/* Read the results of one pending entry; 0 or the (logged) error. */
static int take(struct pg *p, const struct pend *e, bool *conn_lost)
{
	PGresult *res;
	/* A query's rows one at a time (db_pg_stream.c); libpq takes the mode for the query
	 * whose results come next, so here, not when it was sent (where it fails, the result
	 * comes whole). */
	if (e->kind == P_QUERY)
		PQsetSingleRowMode(p->conn);
	int wrc = dbpg_next_result(p, &res, e->what);
	if (wrc < 0 || !res) {
		*conn_lost = true;
		return wrc < 0 ? wrc : dbpg_fail(p, NULL, e->what);
	}
	ExecStatusType st = PQresultStatus(res);
	if (e->kind == P_SYNC) {
		int rc = st == PGRES_PIPELINE_SYNC ? 0 : dbpg_fail(p, res, "pipeline sync");
		PQclear(res);
		return rc;
	}
	int rc = 0;
	if (e->kind == P_QUERY && st == PGRES_SINGLE_TUPLE) { /* its first row: the rest stays on the wire */
		e->query->res = res;
		e->query->stream_open = true;
		p->streaming = e->query;
		if (p->rows_peak < 1)
			p->rows_peak = 1;
		return 0;
	}
	if (st == PGRES_PIPELINE_ABORTED) {
		rc = -ECANCELED; /* an earlier statement failed: that one was reported */
	} else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = e->kind == P_IGNORE ? 0 : dbpg_fail(p, res, e->what);
	} else if (e->kind == P_COMMIT && strcmp(PQcmdStatus(res), "COMMIT") != 0) {
		/* COMMIT of a failed transaction "succeeds" as ROLLBACK */
		snprintf(p->base.last_error, sizeof(p->base.last_error), "commit: the transaction was rolled back");
		if (p->quiet)
			log_debug("store %s: commit: the transaction was rolled back", p->base.name);
		else
			log_error("store %s: commit: the transaction was rolled back", p->base.name);
		rc = -EIO;
	} else if (e->kind == P_RUN) {
		p->changes = strtoll(PQcmdTuples(res), NULL, 10);
	}
	if (e->kind == P_QUERY && rc == 0) {
		if ((size_t)PQntuples(res) > p->rows_peak)
			p->rows_peak = (size_t)PQntuples(res);
		e->query->res = res;
		res = NULL;
	}
	PQclear(res);
	for (;;) { /* the end of this statement's results */
		int nrc = dbpg_next_result(p, &res, e->what);
		if (nrc < 0) {
			*conn_lost = true;
			return rc < 0 ? rc : nrc;
		}
		if (!res)
			break;
		PQclear(res);
	}
	if (rc == 0 && p->broken)
		rc = -ECONNRESET;
	return rc;
}

/* Sync and read every pending result. Returns the first real error. */
int dbpg_drain(struct pg *p)
{
	dbpg_settle(p);
	int brc = dbpg_batch_flush(p);
	if (brc < 0) {
		dbpg_batch_drop(p);
		p->qlen = 0;
		p->broken = true; /* statements may have been half sent */
		return brc;
	}
	if (p->qlen == 0)
		return 0;
	if (!p->conn || p->broken) {
		p->qlen = 0;
		return -ECONNRESET;
	}
	int first = 0;
	bool lost = false;
	if (PQpipelineSync(p->conn) != 1 || dbpg_push(p, P_SYNC, "sync", NULL) < 0) {
		first = dbpg_fail(p, NULL, "pipeline sync");
		lost = true;
	}
	for (size_t i = 0; i < p->qlen && !lost; i++) {
		int rc = take(p, &p->q[i], &lost);
		if (rc < 0 && (first == 0 || first == -ECANCELED))
			first = rc;
		if (p->streaming && i + 2 == p->qlen && p->q[i + 1].kind == P_SYNC) {
			p->sync_after = true; /* a query's rows, then this sync, read by its db_step */
			break;
		}
		dbpg_settle(p); /* statements after it: its rows read ahead */
	}
	p->qlen = 0;
	if (lost)
		p->broken = true; /* results left unread: the connection's state is unknown */
	if (first < 0)
		p->gen++; /* statements prepared in the failed part may not exist */
	else if (!lost)
		p->syncs++; /* everything sent so far ran */
	return first == -ECANCELED ? -EIO : first;
}

int dbpg_send_simple(struct pg *p, const char *sql, enum pend_kind kind, const char *what)
{
	dbpg_settle(p);
	int brc = dbpg_batch_flush(p); /* batched rows sent before it: their place kept */
	if (brc < 0)
		return brc;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	if (PQsendQueryParams(p->conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1)
		return dbpg_fail(p, NULL, what);
	return dbpg_push(p, kind, what, NULL);
}

static void pg_close(struct db *d)
{
	struct pg *p = pgd(d);
	if (p->conn)
		PQfinish(p->conn);
	if (p->next)
		PQfinish(p->next);
	free(p->uri);
	free(p->q);
	free(p->batched);
	free(p);
}

/* Outside pipeline mode: one or more statements (simple query protocol), bounded waits. */
static int pg_exec(struct db *d, const char *sql, const char *what)
{
	struct pg *p = pgd(d);
	int rc = dbpg_drain(p);
	if (rc < 0)
		return rc;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	PQexitPipelineMode(p->conn);
	if (PQsendQuery(p->conn, sql) != 1)
		rc = dbpg_fail(p, NULL, what);
	for (PGresult *res; rc == 0 || !p->broken;) {
		int nrc = dbpg_next_result(p, &res, what);
		if (nrc < 0) {
			rc = rc < 0 ? rc : nrc;
			break;
		}
		if (!res)
			break;
		ExecStatusType st = PQresultStatus(res);
		if (rc == 0 && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
			rc = dbpg_fail(p, res, what);
		PQclear(res);
	}
	if (!p->broken && PQenterPipelineMode(p->conn) != 1 && rc == 0)
		rc = dbpg_fail(p, NULL, "enter pipeline mode");
	return rc;
}

static int pg_send(struct db *d, const char *sql, const char *what)
{
	int rc = dbpg_read_mend(pgd(d)); /* a failed read transaction: a new one first (review r12 F2) */
	return rc < 0 ? rc : dbpg_send_simple(pgd(d), sql, P_CMD, what);
}

static int pg_sync(struct db *d)
{
	return dbpg_drain(pgd(d));
}

/* The collector loop's bounds (db_set_quiet): statement and lock timeouts, and no
 * transaction left open on the server by a collector that went away. */
static int apply_timeouts(struct pg *p)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SET statement_timeout = %u; SET lock_timeout = %u; SET idle_in_transaction_session_timeout = %u",
		 p->timeout_ms, p->timeout_ms, p->timeout_ms * 4u);
	return pg_exec(&p->base, sql, "session timeouts");
}

/* Every connection: quiet notices; no parallel workers, random_page_cost 1.1 (#40 w46a) where the server's
 * default holds (r11/r12 F4: not a user's or postgresql.conf's); synchronous_commit; timeouts. */
static int configure(struct pg *p)
{
	int rc = pg_exec(&p->base, "SET client_min_messages = warning; SELECT set_config(name, v, false) FROM (VALUES"
				   " ('max_parallel_workers_per_gather', '0'), ('random_page_cost', '1.1')) w(name, v)"
				   " JOIN pg_settings USING (name) WHERE source = 'default' AND CASE WHEN vartype IN"
				   " ('integer', 'real') THEN setting::float8 > v::float8 END", "session settings");
	if (rc == 0 && p->sync_commit)
		rc = pg_exec(&p->base, "SET synchronous_commit = on", "set synchronous_commit");
	if (rc == 0 && p->quiet)
		rc = apply_timeouts(p);
	return rc;
}

static int connect_failed(struct pg *p, int rc, const char *why)
{
	snprintf(p->base.last_error, sizeof(p->base.last_error), "connect: %s", why);
	p->base.last_error[strcspn(p->base.last_error, "\n")] = 0;
	PQfinish(p->next);
	p->next = NULL;
	return rc;
}

/* Start or continue a connection attempt: 1 connected (and configured), 0 in
 * progress (block false: nothing more to do until the socket is ready), or a
 * negative errno (the attempt failed; the next call starts another). block:
 * wait up to timeout + 1 s, or until an interrupt descriptor is readable. */
static int connect_step(struct pg *p, bool block)
{
	if (!p->next) {
		/* Defaults first, the URI after: what the URI says wins. */
		char tmo[16];
		snprintf(tmo, sizeof(tmo), "%u", (p->timeout_ms + 999u) / 1000u);
		const char *keys[] = {"connect_timeout", "application_name", "target_session_attrs", "dbname", NULL};
		const char *vals[] = {tmo, DB_PG_APP_NAME, p->read_only ? "any" : "read-write", p->uri, NULL};
		p->next = PQconnectStartParams(keys, vals, 1);
		if (!p->next)
			return -ENOMEM;
		if (PQstatus(p->next) == CONNECTION_BAD)
			return connect_failed(p, -ECONNREFUSED, PQerrorMessage(p->next));
		p->next_deadline_ns = now_ns() + ((uint64_t)p->timeout_ms + 1000u) * 1000000u;
		p->next_write = true;
	}
	for (;;) {
		int w = wait_sock(p, PQsocket(p->next), p->next_write ? POLLOUT : POLLIN,
				  block ? p->next_deadline_ns : 0);
		if (w == -EINTR)
			return connect_failed(p, -EINTR, "interrupted (stop requested)");
		if (w == -ETIMEDOUT && now_ns() >= p->next_deadline_ns)
			return connect_failed(p, -ETIMEDOUT, "no answer in time");
		if (w < 0)
			return 0; /* not ready yet */
		PostgresPollingStatusType ps = PQconnectPoll(p->next);
		if (ps == PGRES_POLLING_FAILED)
			return connect_failed(p, -ECONNREFUSED, PQerrorMessage(p->next));
		if (ps == PGRES_POLLING_OK)
			break;
		p->next_write = ps == PGRES_POLLING_WRITING;
	}
	if (p->conn)
		PQfinish(p->conn);
	p->conn = p->next;
	p->next = NULL;
	dbpg_stream_lost(p);
	dbpg_batch_drop(p); /* rows of the transaction the old connection lost */
	p->broken = false;
	p->qlen = 0;
	p->gen++;
	PQsetnonblocking(p->conn, 1);
	int rc = configure(p);
	if (rc == 0 && PQpipelineStatus(p->conn) == PQ_PIPELINE_OFF && PQenterPipelineMode(p->conn) != 1)
		rc = dbpg_fail(p, NULL, "enter pipeline mode");
	if (rc < 0) {
		p->broken = true;
		return rc;
	}
	return 1;
}

static int connect_wait(struct pg *p)
{
	int rc = connect_step(p, true);
	return rc < 0 ? rc : rc == 1 ? 0 : -ETIMEDOUT;
}

static int pg_begin(struct db *d)
{
	struct pg *p = pgd(d);
	if (!p->conn || p->broken) {
		if (p->async_reconnect)
			return -ECONNRESET;
		log_warn("store %s: connection lost (%s); reconnecting", p->base.name,
			 *p->base.last_error ? p->base.last_error : "?");
		int rc = connect_wait(p);
		if (rc < 0) {
			log_error("store %s: reconnect failed: %s", p->base.name, p->base.last_error);
			return rc;
		}
		log_info("store %s: reconnected", p->base.name);
	}
	return dbpg_send_simple(p, "BEGIN", P_CMD, "begin");
}

static int pg_commit(struct db *d)
{
	struct pg *p = pgd(d);
	int rc = dbpg_send_simple(p, "COMMIT", P_COMMIT, "commit");
	int drc = dbpg_drain(p);
	rc = rc < 0 ? rc : drc;
	/* -EEXIST: a record sent ahead was a duplicate; the transaction stays open in its failed state
	 * for the store to roll back to its savepoint (db.h). */
	if (rc < 0 && rc != -EEXIST && !p->broken && PQstatus(p->conn) == CONNECTION_OK &&
	    PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
		dbpg_send_simple(p, "ROLLBACK", P_IGNORE, "rollback");
		dbpg_drain(p);
	}
	return rc;
}

static void pg_rollback(struct db *d)
{
	struct pg *p = pgd(d);
	if (!p->conn || p->broken || PQstatus(p->conn) != CONNECTION_OK) {
		p->qlen = 0;
		dbpg_batch_drop(p);
		return;
	}
	dbpg_batch_drop(p); /* rolled back: not sent */
	dbpg_drain(p); /* errors of the abandoned statements were logged */
	if (!p->broken && PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
		dbpg_send_simple(p, "ROLLBACK", P_IGNORE, "rollback");
		dbpg_drain(p);
	}
}

static bool pg_has_table(struct db *d, const char *table)
{
	struct db_stmt *st;
	if (dbpg_prepare(d,
			 "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
			 " AND table_name = ?1",
			 "look up a table", &st) < 0)
		return false;
	db_bind_text(st, 1, table);
	bool ok = dbpg_step(st) == 1;
	dbpg_finalize(st);
	return ok;
}

/* PostgreSQL checks its own pages as it reads them (with data checksums, a damaged page is an error,
 * SQLSTATE XX001, which db_damaged() reports): there is no whole-database check to run from a client. Say
 * what the server does, once. */
static int pg_check(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen)
{
	(void)how, (void)budget_ms, (void)why, (void)whylen;
	struct db_stmt *st;
	int rc = dbpg_prepare(d, "SHOW data_checksums", "show data_checksums", &st);
	if (rc < 0)
		return rc;
	rc = dbpg_step(st);
	if (rc == 1)
		log_info("store %s: PostgreSQL checks its pages itself (data_checksums = %s%s); --check has "
			 "nothing more to run here",
			 d->name, dbpg_col_text(st, 0),
			 strcmp(dbpg_col_text(st, 0), "on") == 0
			     ? ""
			     : ": a damaged page may go unnoticed; initdb "
			       "--data-checksums or pg_checksums --enable");
	dbpg_finalize(st);
	return rc < 0 ? rc : 0;
}

static const struct db_ops pg_ops = {
    .close = pg_close,
    .check = pg_check,
    .exec = pg_exec,
    .has_table = pg_has_table,
    .begin = pg_begin,
    .commit = pg_commit,
    .rollback = pg_rollback,
    .read_begin = dbpg_read_begin,
    .read_end = dbpg_read_end,
    .sync = pg_sync,
    .send = pg_send,
    .prepare = dbpg_prepare,
    .finalize = dbpg_finalize,
    .bind = dbpg_bind,
    .run = dbpg_run,
    .batch = dbpg_batch,
    .changes = dbpg_changes,
    .step = dbpg_step,
    .reset = dbpg_reset,
    .col_null = dbpg_col_null,
    .col_i64 = dbpg_col_i64,
    .col_double = dbpg_col_double,
    .col_text = dbpg_col_text,
    .col_blob = dbpg_col_blob,
};

int db_open_pg(const char *uri, const struct db_pg_opts *o, struct db **out)
{
	*out = NULL;
	struct pg *p = calloc(1, sizeof(*p));
	if (!p)
		return -ENOMEM;
	p->base.ops = &pg_ops;
	p->base.engine = DB_PG;
	p->intr_fd[0] = p->intr_fd[1] = -1;
	p->timeout_ms = o && o->timeout_ms ? o->timeout_ms : DB_PG_DEFAULT_TIMEOUT_MS;
	p->sync_commit = o ? o->sync_commit : true;
	p->read_only = o && o->read_only;
	if (o && o->intr_fd > 0)
		p->intr_fd[0] = o->intr_fd;
	db_redact_uri(uri, p->base.name, sizeof(p->base.name));
	p->uri = strdup(uri);
	if (!p->uri) {
		pg_close(&p->base);
		return -ENOMEM;
	}
	int rc = connect_wait(p);
	if (rc == -EINTR) {
		log_info("store %s: stop requested while connecting: not started", p->base.name);
		pg_close(&p->base);
		return rc;
	}
	if (rc < 0) {
		log_error("store %s: cannot connect: %s: check the URI, that the server runs, accepts this user and "
			  "is not read-only (target_session_attrs=read-write unless the URI says otherwise)",
			  p->base.name, p->base.last_error);
		pg_close(&p->base);
		return rc == -ENOMEM ? rc : -ECONNREFUSED;
	}
	*out = &p->base;
	return 0;
}

void db_pg_set_interrupt(struct db *d, int fd0, int fd1)
{
	if (d->engine != DB_PG)
		return;
	pgd(d)->intr_fd[0] = fd0;
	pgd(d)->intr_fd[1] = fd1;
}

void db_set_quiet(struct db *d, bool quiet)
{
	if (d->engine != DB_PG)
		return;
	struct pg *p = pgd(d);
	p->quiet = quiet;
	p->async_reconnect = quiet;
	if (quiet && p->conn && !p->broken)
		apply_timeouts(p); /* a failure leaves the connection broken: the loop reconnects */
}

uint64_t db_pg_syncs(const struct db *d)
{
	return d->engine == DB_PG ? ((const struct pg *)d)->syncs : 0;
}

uint64_t db_pg_statements(const struct db *d)
{
	return d->engine == DB_PG ? ((const struct pg *)d)->statements : 0;
}

size_t db_pg_rows_held_peak(const struct db *d)
{
	return d->engine == DB_PG ? ((const struct pg *)d)->rows_peak : 0;
}

bool db_needs_reconnect(const struct db *d)
{
	if (d->engine != DB_PG)
		return false;
	const struct pg *p = (const struct pg *)d;
	return !p->conn || p->broken;
}

int db_reconnect_poll(struct db *d)
{
	if (d->engine != DB_PG)
		return 1;
	struct pg *p = pgd(d);
	if (p->conn && !p->broken)
		return 1;
	return connect_step(p, false);
}

int db_pg_setting(struct db *d, const char *name, char *out, size_t outlen)
{
	out[0] = 0;
	if (d->engine != DB_PG)
		return -ENOTSUP;
	struct db_stmt *st;
	int rc = dbpg_prepare(d, "SELECT current_setting(?1)", "read a setting", &st);
	if (rc < 0)
		return rc;
	db_bind_text(st, 1, name);
	rc = dbpg_step(st);
	if (rc == 1)
		snprintf(out, outlen, "%s", dbpg_col_text(st, 0));
	dbpg_finalize(st);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

#endif
