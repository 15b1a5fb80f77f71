/* Database layer, PostgreSQL engine (libpq). The connection stays in
 * pipeline mode: db_run() queues a statement and returns; the results are
 * read in order (a "drain": Sync, then every pending result) when a caller
 * needs one (db_changes, a query's rows, commit) or when many are pending.
 * Statements are prepared on the server under unique names the first time
 * they run (pipelined too); parameters travel as text, blobs as binary. */
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

#define OID_INT8 20
#define OID_FLOAT8 701
#define OID_BYTEA 17
#define PG_MAX_PENDING 1024 /* drain after this many queued statements */

enum pend_kind { P_CMD, P_RUN, P_PREPARE, P_QUERY, P_COMMIT, P_IGNORE, P_SYNC };

struct pend {
	enum pend_kind kind;
	const char *what;
	struct pg_stmt *query; /* P_QUERY: where the rows go */
};

struct pg {
	struct db base;
	PGconn *conn;
	unsigned gen; /* bumped when server-side statements may be gone (reconnect, failed pipeline) */
	unsigned next_name;
	struct pend *q;
	size_t qlen, qcap;
	int64_t changes;
	/* Bounded, interruptible I/O (issue 31): the socket is non-blocking; every wait polls it
	 * with a deadline and the interrupt descriptors (a stop request). */
	char *uri;
	unsigned timeout_ms; /* statement_timeout / lock_timeout; client waits end 1 s later */
	int intr_fd[2];	     /* readable: give up waiting (-EINTR), -1 unused */
	bool sync_commit;    /* SET synchronous_commit = on in every session */
	bool read_only;	     /* opened for queries: any session will do */
	bool quiet;	     /* engine errors go to debug (the caller reports outages) */
	bool async_reconnect; /* begin() does not reconnect; the caller drives db_reconnect_poll() */
	/* The connection cannot be used any more (lost, timed out, read-only, shut down):
	 * every call fails fast until a reconnect. */
	bool broken;
	PGconn *next;	      /* reconnect in progress (PQconnectStartParams) */
	bool next_write;      /* it waits for writability (else readability) */
	uint64_t next_deadline_ns;
	char last_error[256];
};

struct pg_stmt {
	struct db_stmt base;
	char *sql;
	const char *what;
	int nparams;
	char name[24];
	unsigned gen;
	bool prepared;
	/* parameters */
	char **val;
	int *len, *fmt;
	Oid *types;
	char (*num)[32];
	bool *owned;
	/* rows of the last execution */
	PGresult *res;
	int row;
	bool executed;
	uint8_t **blob;
	size_t *blobcap;
	int nblob;
};

static struct pg *pgd(struct db *d) { return (struct pg *)d; }
static struct pg_stmt *pgs(struct db_stmt *st) { return (struct pg_stmt *)st; }

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

static int pg_errno(struct pg *p, const PGresult *res)
{
	const char *state = res ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (!p->conn || p->broken || PQstatus(p->conn) == CONNECTION_BAD || curable_by_reconnect(state)) {
		p->broken = true;
		return state_is(state, "25006") ? -EROFS : -ECONNRESET;
	}
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
static int pg_fail(struct pg *p, const PGresult *res, const char *what)
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
	if (p->quiet)
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
static int next_result(struct pg *p, PGresult **out, const char *what)
{
	*out = NULL;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	/* In the loop the wait is bounded; commands (reports, migrate) may run long queries. */
	uint64_t deadline = p->quiet ? now_ns() + ((uint64_t)p->timeout_ms + 1000u) * 1000000u : UINT64_MAX;
	for (;;) {
		int f = PQflush(p->conn);
		if (f < 0)
			return pg_fail(p, NULL, what);
		if (f == 0 && !PQisBusy(p->conn)) {
			*out = PQgetResult(p->conn);
			return 0;
		}
		int rc = wait_sock(p, PQsocket(p->conn), (short)(POLLIN | (f == 1 ? POLLOUT : 0)), deadline);
		if (rc < 0)
			return pg_fail_wait(p, rc, what);
		if (PQconsumeInput(p->conn) != 1)
			return pg_fail(p, NULL, what);
	}
}

static int push(struct pg *p, enum pend_kind kind, const char *what, struct pg_stmt *query)
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
	return 0;
}

/* Read the results of one pending entry; 0 or the (logged) error. */
static int take(struct pg *p, const struct pend *e, bool *conn_lost)
{
	PGresult *res;
	int wrc = next_result(p, &res, e->what);
	if (wrc < 0 || !res) {
		*conn_lost = true;
		return wrc < 0 ? wrc : pg_fail(p, NULL, e->what);
	}
	ExecStatusType st = PQresultStatus(res);
	if (e->kind == P_SYNC) {
		int rc = st == PGRES_PIPELINE_SYNC ? 0 : pg_fail(p, res, "pipeline sync");
		PQclear(res);
		return rc;
	}
	int rc = 0;
	if (st == PGRES_PIPELINE_ABORTED) {
		rc = -ECANCELED; /* an earlier statement failed: that one was reported */
	} else if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		rc = e->kind == P_IGNORE ? 0 : pg_fail(p, res, e->what);
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
		e->query->res = res;
		res = NULL;
	}
	PQclear(res);
	for (;;) { /* the end of this statement's results */
		int nrc = next_result(p, &res, e->what);
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
static int drain(struct pg *p)
{
	if (p->qlen == 0)
		return 0;
	if (!p->conn || p->broken) {
		p->qlen = 0;
		return -ECONNRESET;
	}
	int first = 0;
	bool lost = false;
	if (PQpipelineSync(p->conn) != 1 || push(p, P_SYNC, "sync", NULL) < 0) {
		first = pg_fail(p, NULL, "pipeline sync");
		lost = true;
	}
	for (size_t i = 0; i < p->qlen && !lost; i++) {
		int rc = take(p, &p->q[i], &lost);
		if (rc < 0 && (first == 0 || first == -ECANCELED))
			first = rc;
	}
	p->qlen = 0;
	if (lost)
		p->broken = true; /* results left unread: the connection's state is unknown */
	if (first < 0)
		p->gen++; /* statements prepared in the failed part may not exist */
	return first == -ECANCELED ? -EIO : first;
}

static int send_simple(struct pg *p, const char *sql, enum pend_kind kind, const char *what)
{
	if (!p->conn || p->broken)
		return -ECONNRESET;
	if (PQsendQueryParams(p->conn, sql, 0, NULL, NULL, NULL, NULL, 0) != 1)
		return pg_fail(p, NULL, what);
	return push(p, kind, what, NULL);
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
	free(p);
}

/* Outside pipeline mode: one or more statements (simple query protocol), bounded waits. */
static int pg_exec(struct db *d, const char *sql, const char *what)
{
	struct pg *p = pgd(d);
	int rc = drain(p);
	if (rc < 0)
		return rc;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	PQexitPipelineMode(p->conn);
	if (PQsendQuery(p->conn, sql) != 1)
		rc = pg_fail(p, NULL, what);
	for (PGresult *res; rc == 0 || !p->broken;) {
		int nrc = next_result(p, &res, what);
		if (nrc < 0) {
			rc = rc < 0 ? rc : nrc;
			break;
		}
		if (!res)
			break;
		ExecStatusType st = PQresultStatus(res);
		if (rc == 0 && st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK)
			rc = pg_fail(p, res, what);
		PQclear(res);
	}
	if (!p->broken && PQenterPipelineMode(p->conn) != 1 && rc == 0)
		rc = pg_fail(p, NULL, "enter pipeline mode");
	return rc;
}

static int pg_sync(struct db *d) { return drain(pgd(d)); }

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

/* Session settings of every connection (outside the pipeline): quiet notices,
 * synchronous_commit = on so that a commit (and the ack that follows it) is
 * flushed to the server's WAL whatever the server's default, and in the loop the
 * timeouts. */
static int configure(struct pg *p)
{
	int rc = pg_exec(&p->base, "SET client_min_messages = warning", "session settings");
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
		const char *vals[] = {tmo, "prof-collector", p->read_only ? "any" : "read-write", p->uri, NULL};
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
	p->broken = false;
	p->qlen = 0;
	p->gen++;
	PQsetnonblocking(p->conn, 1);
	int rc = configure(p);
	if (rc == 0 && PQpipelineStatus(p->conn) == PQ_PIPELINE_OFF && PQenterPipelineMode(p->conn) != 1)
		rc = pg_fail(p, NULL, "enter pipeline mode");
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
	return send_simple(p, "BEGIN", P_CMD, "begin");
}

static int pg_commit(struct db *d)
{
	struct pg *p = pgd(d);
	int rc = send_simple(p, "COMMIT", P_COMMIT, "commit");
	int drc = drain(p);
	rc = rc < 0 ? rc : drc;
	if (rc < 0 && !p->broken && PQstatus(p->conn) == CONNECTION_OK &&
	    PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
		send_simple(p, "ROLLBACK", P_IGNORE, "rollback");
		drain(p);
	}
	return rc;
}

static void pg_rollback(struct db *d)
{
	struct pg *p = pgd(d);
	if (!p->conn || p->broken || PQstatus(p->conn) != CONNECTION_OK) {
		p->qlen = 0;
		return;
	}
	drain(p); /* errors of the abandoned statements were logged */
	if (!p->broken && PQtransactionStatus(p->conn) != PQTRANS_IDLE) {
		send_simple(p, "ROLLBACK", P_IGNORE, "rollback");
		drain(p);
	}
}

static int pg_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out)
{
	struct pg_stmt *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.db = d;
	s->what = what;
	s->sql = db_sql_dollar(sql, &s->nparams);
	int n = s->nparams ? s->nparams : 1;
	s->val = calloc((size_t)n, sizeof(*s->val));
	s->len = calloc((size_t)n, sizeof(*s->len));
	s->fmt = calloc((size_t)n, sizeof(*s->fmt));
	s->types = calloc((size_t)n, sizeof(*s->types));
	s->num = calloc((size_t)n, sizeof(*s->num));
	s->owned = calloc((size_t)n, sizeof(*s->owned));
	if (!s->sql || !s->val || !s->len || !s->fmt || !s->types || !s->num || !s->owned) {
		d->ops->finalize(&s->base);
		return -ENOMEM;
	}
	*out = &s->base;
	return 0;
}

static void clear_params(struct pg_stmt *s)
{
	for (int i = 0; i < s->nparams; i++) {
		if (s->owned[i])
			free(s->val[i]);
		s->owned[i] = false;
		s->val[i] = NULL;
		s->len[i] = 0;
		s->fmt[i] = 0;
	}
}

static void pg_reset(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	PQclear(s->res);
	s->res = NULL;
	s->executed = false;
	clear_params(s);
}

static void pg_finalize(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	struct pg *p = pgd(st->db);
	if (s->prepared && s->gen == p->gen && p->conn && !p->broken && PQstatus(p->conn) == CONNECTION_OK) {
		char sql[48];
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->name);
		send_simple(p, sql, P_IGNORE, "deallocate");
	}
	if (s->val)
		pg_reset(st);
	for (int i = 0; i < s->nblob; i++)
		free(s->blob[i]);
	free(s->blob);
	free(s->blobcap);
	free(s->sql);
	free(s->val);
	free(s->len);
	free(s->fmt);
	free(s->types);
	free(s->num);
	free(s->owned);
	free(s);
}

static void pg_bind(struct db_stmt *st, int i, const struct db_value *v)
{
	struct pg_stmt *s = pgs(st);
	if (i < 1 || i > s->nparams)
		return;
	int k = i - 1;
	if (s->owned[k])
		free(s->val[k]);
	s->owned[k] = false;
	s->val[k] = NULL;
	s->fmt[k] = 0;
	s->len[k] = 0;
	switch (v->type) {
	case DBV_NULL:
		break;
	case DBV_I64:
		snprintf(s->num[k], sizeof(s->num[k]), "%" PRId64, v->i);
		s->val[k] = s->num[k];
		s->types[k] = s->prepared ? s->types[k] : OID_INT8;
		break;
	case DBV_DOUBLE:
		snprintf(s->num[k], sizeof(s->num[k]), "%.17g", v->d);
		s->val[k] = s->num[k];
		s->types[k] = s->prepared ? s->types[k] : OID_FLOAT8;
		break;
	case DBV_TEXT:
	case DBV_BLOB:
		s->val[k] = malloc(v->len + 1);
		if (!s->val[k])
			break; /* binds NULL; the insert then fails where NOT NULL, else stores NULL */
		memcpy(s->val[k], v->p, v->len);
		s->val[k][v->len] = 0;
		s->owned[k] = true;
		if (v->type == DBV_BLOB) {
			s->fmt[k] = 1;
			s->len[k] = (int)v->len;
			s->types[k] = s->prepared ? s->types[k] : OID_BYTEA;
		}
		break;
	}
}

/* Queue the statement (and its PREPARE the first time). */
static int send_stmt(struct pg_stmt *s, enum pend_kind kind)
{
	struct pg *p = pgd(s->base.db);
	if (!p->conn || p->broken)
		return -ECONNRESET;
	if (PQstatus(p->conn) != CONNECTION_OK)
		return pg_fail(p, NULL, s->what);
	if (!s->prepared || s->gen != p->gen) {
		snprintf(s->name, sizeof(s->name), "prof_%u", p->next_name++);
		if (PQsendPrepare(p->conn, s->name, s->sql, s->nparams, s->types) != 1)
			return pg_fail(p, NULL, s->what);
		int rc = push(p, P_PREPARE, s->what, NULL);
		if (rc < 0)
			return rc;
		s->prepared = true;
		s->gen = p->gen;
	}
	if (PQsendQueryPrepared(p->conn, s->name, s->nparams, (const char *const *)s->val, s->len, s->fmt, 0) != 1)
		return pg_fail(p, NULL, s->what);
	return push(p, kind, s->what, kind == P_QUERY ? s : NULL);
}

static int pg_run(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	struct pg *p = pgd(st->db);
	int rc = send_stmt(s, P_RUN);
	pg_reset(st);
	if (rc == 0 && p->qlen >= PG_MAX_PENDING)
		rc = drain(p);
	return rc;
}

static int64_t pg_changes(struct db *d)
{
	int rc = drain(pgd(d));
	return rc < 0 ? rc : pgd(d)->changes;
}

static int pg_step(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	if (!s->executed) {
		s->executed = true;
		s->row = -1;
		int rc = send_stmt(s, P_QUERY);
		int drc = drain(pgd(st->db));
		if (rc < 0 || drc < 0)
			return rc < 0 ? rc : drc;
		if (!s->res)
			return -EIO;
	}
	if (!s->res)
		return 0;
	s->row++;
	return s->row < PQntuples(s->res) ? 1 : 0;
}

static bool pg_col_null(struct db_stmt *st, int col)
{
	struct pg_stmt *s = pgs(st);
	return !s->res || PQgetisnull(s->res, s->row, col);
}

static int64_t pg_col_i64(struct db_stmt *st, int col)
{
	if (pg_col_null(st, col))
		return 0;
	const char *v = PQgetvalue(pgs(st)->res, pgs(st)->row, col);
	if (strchr(v, '.') || strchr(v, 'e')) /* numeric or float text */
		return (int64_t)strtod(v, NULL);
	return strtoll(v, NULL, 10);
}

static double pg_col_double(struct db_stmt *st, int col)
{
	if (pg_col_null(st, col))
		return 0;
	return strtod(PQgetvalue(pgs(st)->res, pgs(st)->row, col), NULL);
}

static const char *pg_col_text(struct db_stmt *st, int col)
{
	if (pg_col_null(st, col))
		return "";
	return PQgetvalue(pgs(st)->res, pgs(st)->row, col);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

/* bytea arrives in text format as "\x0a1b...". */
static const void *pg_col_blob(struct db_stmt *st, int col, size_t *len)
{
	struct pg_stmt *s = pgs(st);
	*len = 0;
	if (pg_col_null(st, col))
		return NULL;
	const char *v = PQgetvalue(s->res, s->row, col);
	size_t vl = (size_t)PQgetlength(s->res, s->row, col);
	if (vl < 2 || v[0] != '\\' || v[1] != 'x')
		return NULL;
	if (col >= s->nblob) {
		int n = PQnfields(s->res);
		uint8_t **nb = realloc(s->blob, (size_t)n * sizeof(*nb));
		if (!nb)
			return NULL;
		s->blob = nb;
		size_t *nc = realloc(s->blobcap, (size_t)n * sizeof(*nc));
		if (!nc)
			return NULL;
		s->blobcap = nc;
		for (int i = s->nblob; i < n; i++) {
			s->blob[i] = NULL;
			s->blobcap[i] = 0;
		}
		s->nblob = n;
	}
	size_t n = (vl - 2) / 2;
	if (n + 1 > s->blobcap[col]) {
		uint8_t *b = realloc(s->blob[col], n + 1);
		if (!b)
			return NULL;
		s->blob[col] = b;
		s->blobcap[col] = n + 1;
	}
	for (size_t i = 0; i < n; i++) {
		int hi = hexval(v[2 + 2 * i]), lo = hexval(v[3 + 2 * i]);
		if (hi < 0 || lo < 0)
			return NULL;
		s->blob[col][i] = (uint8_t)(hi << 4 | lo);
	}
	*len = n;
	return n ? s->blob[col] : NULL;
}

static bool pg_has_table(struct db *d, const char *table)
{
	struct db_stmt *st;
	if (pg_prepare(d, "SELECT 1 FROM information_schema.tables WHERE table_schema = current_schema()"
			  " AND table_name = ?1",
		       "look up a table", &st) < 0)
		return false;
	db_bind_text(st, 1, table);
	bool ok = pg_step(st) == 1;
	pg_finalize(st);
	return ok;
}

/* PostgreSQL checks its own pages as it reads them (with data checksums, a
 * damaged page is an error, SQLSTATE XX001, which db_damaged() reports):
 * there is no whole-database check to run from a client. Say what the server
 * does, once. */
static int pg_check(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen)
{
	(void)how, (void)budget_ms, (void)why, (void)whylen;
	struct db_stmt *st;
	int rc = pg_prepare(d, "SHOW data_checksums", "show data_checksums", &st);
	if (rc < 0)
		return rc;
	rc = pg_step(st);
	if (rc == 1)
		log_info("store %s: PostgreSQL checks its pages itself (data_checksums = %s%s); --check has nothing "
			 "more to run here",
			 d->name, pg_col_text(st, 0),
			 strcmp(pg_col_text(st, 0), "on") == 0 ? "" : ": a damaged page may go unnoticed; initdb "
								      "--data-checksums or pg_checksums --enable");
	pg_finalize(st);
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
    .sync = pg_sync,
    .prepare = pg_prepare,
    .finalize = pg_finalize,
    .bind = pg_bind,
    .run = pg_run,
    .changes = pg_changes,
    .step = pg_step,
    .reset = pg_reset,
    .col_null = pg_col_null,
    .col_i64 = pg_col_i64,
    .col_double = pg_col_double,
    .col_text = pg_col_text,
    .col_blob = pg_col_blob,
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
	int rc = pg_prepare(d, "SELECT current_setting(?1)", "read a setting", &st);
	if (rc < 0)
		return rc;
	db_bind_text(st, 1, name);
	rc = pg_step(st);
	if (rc == 1)
		snprintf(out, outlen, "%s", pg_col_text(st, 0));
	pg_finalize(st);
	return rc == 1 ? 0 : rc < 0 ? rc : -EIO;
}

#endif
