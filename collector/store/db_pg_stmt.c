/* PostgreSQL engine: prepared statements (db_pg_priv.h). Each is prepared on
 * the server under a unique name the first time it runs (pipelined);
 * parameters travel as text, blobs as binary; a query's rows are read after a
 * drain. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated/config.h"

#ifdef CONFIG_STORE_POSTGRESQL

#include "db_pg_priv.h"

int dbpg_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out)
{
	struct pg_stmt *s = calloc(1, sizeof(*s));
	if (!s)
		return -ENOMEM;
	s->base.db = d;
	s->what = what;
	s->sql = db_sql_dollar(sql, &s->nparams);
	/* The blob reads (the sample blocks, the call chains; #40, w40h) take their rows in binary format:
	 * bytea in text format is hex, twice the bytes, encoded by the server and decoded here. Their
	 * columns are bytea and integers, which the col_ functions read in either format. */
	s->binary = strncmp(sql, "SELECT data FROM ", 17) == 0 || strncmp(sql, "SELECT data, seq FROM ", 22) == 0 ||
		    strncmp(sql, "SELECT stack_id, ips FROM ", 26) == 0 ||
		    /* the blocks with their format, the sessions' key dictionaries (#40 w45a) */
		    strncmp(sql, "SELECT data, seq, ", 18) == 0 || strncmp(sql, "SELECT first_id, n, data FROM ", 30) == 0;
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

void dbpg_reset(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	if (s->stream_open)
		dbpg_stream_close(pgd(st->db), s); /* rows not taken: read and dropped */
	PQclear(s->res);
	s->res = NULL;
	s->executed = false;
	clear_params(s);
}

void dbpg_finalize(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	struct pg *p = pgd(st->db);
	if (s->val)
		dbpg_reset(st);
	dbpg_batch_free(s);
	if (s->prepared && s->gen == p->gen && p->conn && !p->broken && PQstatus(p->conn) == CONNECTION_OK) {
		char sql[48];
		snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->name);
		dbpg_send_simple(p, sql, P_IGNORE, "deallocate");
	}
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

void dbpg_bind(struct db_stmt *st, int i, const struct db_value *v)
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
	dbpg_settle(p); /* a query still streaming: its rows read ahead */
	int brc = dbpg_batch_flush(p); /* batched rows sent before it: their place kept */
	if (brc < 0)
		return brc;
	if (!p->conn || p->broken)
		return -ECONNRESET;
	if (PQstatus(p->conn) != CONNECTION_OK)
		return dbpg_fail(p, NULL, s->what);
	int mrc = dbpg_read_mend(p); /* a failed read transaction: a new one */
	if (mrc < 0)
		return mrc;
	if (!s->prepared || s->gen != p->gen) {
		snprintf(s->name, sizeof(s->name), "prof_%u", p->next_name++);
		if (PQsendPrepare(p->conn, s->name, s->sql, s->nparams, s->types) != 1)
			return dbpg_fail(p, NULL, s->what);
		int rc = dbpg_push(p, P_PREPARE, s->what, NULL);
		if (rc < 0)
			return rc;
		s->prepared = true;
		s->gen = p->gen;
	}
	if (PQsendQueryPrepared(p->conn, s->name, s->nparams, (const char *const *)s->val, s->len, s->fmt,
				kind == P_QUERY && s->binary) != 1)
		return dbpg_fail(p, NULL, s->what);
	return dbpg_push(p, kind, s->what, kind == P_QUERY ? s : NULL);
}

int dbpg_run(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	struct pg *p = pgd(st->db);
	int rc = s->batch ? dbpg_batch_run(s) : send_stmt(s, P_RUN);
	dbpg_reset(st);
	if (rc == 0 && p->qlen >= PG_MAX_PENDING)
		rc = dbpg_drain(p);
	return rc;
}

int64_t dbpg_changes(struct db *d)
{
	int rc = dbpg_drain(pgd(d));
	return rc < 0 ? rc : pgd(d)->changes;
}

int dbpg_step(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	if (!s->executed) {
		s->executed = true;
		s->row = -1;
		int rc = send_stmt(s, P_QUERY);
		int drc = dbpg_drain(pgd(st->db));
		if (rc < 0 || drc < 0)
			return rc < 0 ? rc : drc;
		if (!s->res)
			return -EIO;
	}
	if (!s->res)
		return 0;
	s->row++;
	if (s->row < PQntuples(s->res))
		return 1;
	return s->stream_open ? dbpg_stream_next(pgd(st->db), s) : 0;
}

bool dbpg_col_null(struct db_stmt *st, int col)
{
	struct pg_stmt *s = pgs(st);
	return !s->res || PQgetisnull(s->res, s->row, col);
}

/* A binary-format integer column (int2, int4, int8: big-endian). */
static int64_t bin_int(const PGresult *res, int row, int col)
{
	const unsigned char *v = (const unsigned char *)PQgetvalue(res, row, col);
	int n = PQgetlength(res, row, col);
	if (n != 2 && n != 4 && n != 8)
		return 0;
	uint64_t u = 0;
	for (int i = 0; i < n; i++)
		u = u << 8 | v[i];
	if (n < 8 && (u >> (8 * n - 1)) & 1) /* sign-extend */
		u |= ~0ull << (8 * n);
	return (int64_t)u;
}

int64_t dbpg_col_i64(struct db_stmt *st, int col)
{
	if (dbpg_col_null(st, col))
		return 0;
	if (PQfformat(pgs(st)->res, col) == 1)
		return bin_int(pgs(st)->res, pgs(st)->row, col);
	const char *v = PQgetvalue(pgs(st)->res, pgs(st)->row, col);
	if (strchr(v, '.') || strchr(v, 'e')) /* numeric or float text */
		return (int64_t)strtod(v, NULL);
	return strtoll(v, NULL, 10);
}

double dbpg_col_double(struct db_stmt *st, int col)
{
	if (dbpg_col_null(st, col))
		return 0;
	return strtod(PQgetvalue(pgs(st)->res, pgs(st)->row, col), NULL);
}

const char *dbpg_col_text(struct db_stmt *st, int col)
{
	if (dbpg_col_null(st, col))
		return "";
	return PQgetvalue(pgs(st)->res, pgs(st)->row, col);
}

static int hexval(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
				      : -1;
}

/* bytea arrives in text format as "\x0a1b...". */
const void *dbpg_col_blob(struct db_stmt *st, int col, size_t *len)
{
	struct pg_stmt *s = pgs(st);
	*len = 0;
	if (dbpg_col_null(st, col))
		return NULL;
	const char *v = PQgetvalue(s->res, s->row, col);
	size_t vl = (size_t)PQgetlength(s->res, s->row, col);
	if (PQfformat(s->res, col) == 1) { /* binary: the bytes themselves, held by the result */
		*len = vl;
		return vl ? v : NULL;
	}
	if (vl < 2 || v[0] != '\\' || v[1] != 'x')
		return NULL;
	((struct pg *)st->db)->text_blobs++;
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

uint64_t db_pg_text_blobs(const struct db *d)
{
	return d->engine == DB_PG ? ((const struct pg *)d)->text_blobs : 0;
}

#else

#include "db.h"

uint64_t db_pg_text_blobs(const struct db *d)
{
	(void)d;
	return 0;
}

#endif
