/* PostgreSQL engine: a write statement's rows batched (db_batch, #40 w40m). db_run of a
 * statement marked with db_batch keeps its parameters; its rows go as one multi-row INSERT
 * ("... VALUES ($1..$n),($n+1..$2n),..." up to PG_BATCH_ROWS rows, prepared once per size) when
 * PG_BATCH_ROWS are kept, or before anything else is sent or read on the connection (another
 * statement, a savepoint, a sync, a commit): so every statement keeps its place relative to the
 * unbatched ones, and only batched rows of different statements may be sent in another order among
 * themselves. The server then starts one executor for up to 64 rows instead of one per row (its
 * CPU per record, bench/RESULTS.md). A rollback or a lost connection drops them with the
 * transaction. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "generated/config.h"

#ifdef CONFIG_STORE_POSTGRESQL

#include "db_pg_priv.h"

/* "INSERT ... VALUES ($1, ..., $n) tail" with $1..$n in order: the head's and tail's offsets. */
static bool split_values(const char *sql, int n, size_t *head_end, size_t *tail_at)
{
	const char *v = strstr(sql, " VALUES (");
	if (!v || strncmp(sql, "INSERT INTO ", 12) != 0)
		return false;
	const char *p = v + 9;
	for (int i = 1; i <= n; i++) {
		char want[16];
		int wl = snprintf(want, sizeof(want), "$%d", i);
		while (*p == ' ')
			p++;
		if (strncmp(p, want, (size_t)wl) != 0)
			return false;
		p += wl;
		while (*p == ' ')
			p++;
		if (*p != (i < n ? ',' : ')'))
			return false;
		p++;
	}
	*head_end = (size_t)(v - sql) + 8; /* up to and with " VALUES " */
	*tail_at = (size_t)(p - sql);
	return true;
}

void dbpg_batch(struct db_stmt *st)
{
	struct pg_stmt *s = pgs(st);
	size_t h, t;
	if (s->nparams < 1 || !split_values(s->sql, s->nparams, &h, &t))
		return; /* not a plain multi-row-able INSERT: run one by one */
	s->bhead = h;
	s->btail = t;
	s->batch = true;
	/* the ledger's rows always go first in a flush (#40 w40q): each record sent ahead takes its
	 * ledger key before its other rows, so two collectors sending the same seqs ahead meet on
	 * the ledger (one waits for the other) and never hold each other's rows in two tables (a
	 * deadlock: 40P01, the victim's whole batch rolled back) */
	s->lead = strncmp(s->sql, "INSERT INTO records ", 20) == 0;
}

/* The statement of 2^k rows (k >= 1), prepared on this connection if not yet. */
static int multi_prepare(struct pg *p, struct pg_stmt *s, int k)
{
	int rows = 1 << k, n = s->nparams;
	if (s->mprepared[k] && s->mgen[k] == p->gen)
		return 0;
	size_t tl = strlen(s->sql + s->btail);
	char *sql = malloc(s->bhead + (size_t)rows * ((size_t)n * 8 + 3) + tl + 1);
	Oid *types = malloc((size_t)rows * (size_t)n * sizeof(*types));
	if (!sql || !types) {
		free(sql);
		free(types);
		return -ENOMEM;
	}
	memcpy(sql, s->sql, s->bhead);
	char *q = sql + s->bhead;
	for (int r = 0; r < rows; r++) {
		*q++ = r ? ',' : '(';
		if (r)
			*q++ = '(';
		for (int c = 0; c < n; c++) {
			q += sprintf(q, c ? ",$%d" : "$%d", r * n + c + 1);
			types[r * n + c] = s->types[c];
		}
		*q++ = ')';
	}
	memcpy(q, s->sql + s->btail, tl + 1);
	snprintf(s->mname[k], sizeof(s->mname[k]), "prof_%u", p->next_name++);
	int rc = PQsendPrepare(p->conn, s->mname[k], sql, rows * n, types) == 1
		     ? dbpg_push(p, P_PREPARE, s->what, NULL)
		     : dbpg_fail(p, NULL, s->what);
	free(sql);
	free(types);
	if (rc == 0) {
		s->mprepared[k] = true;
		s->mgen[k] = p->gen;
	}
	return rc;
}

static void drop_rows(struct pg_stmt *s)
{
	for (size_t i = 0; i < (size_t)s->brows * (size_t)s->nparams; i++)
		free(s->bval[i]);
	s->brows = 0;
}

/* Send s's kept rows: the largest power-of-two statements first. */
static int send_rows(struct pg *p, struct pg_stmt *s)
{
	int rc = 0, n = s->nparams;
	for (int at = 0; rc == 0 && at < s->brows;) {
		int k = PG_BATCH_LOG;
		while ((1 << k) > s->brows - at)
			k--;
		const char *name = s->mname[k];
		if (k == 0) { /* one row: the statement itself */
			if (!s->prepared || s->gen != p->gen) {
				snprintf(s->name, sizeof(s->name), "prof_%u", p->next_name++);
				if (PQsendPrepare(p->conn, s->name, s->sql, n, s->types) != 1)
					return dbpg_fail(p, NULL, s->what);
				if ((rc = dbpg_push(p, P_PREPARE, s->what, NULL)) < 0)
					return rc;
				s->prepared = true;
				s->gen = p->gen;
			}
			name = s->name;
		} else if ((rc = multi_prepare(p, s, k)) < 0) {
			return rc;
		}
		size_t o = (size_t)at * (size_t)n;
		if (PQsendQueryPrepared(p->conn, name, (1 << k) * n, (const char *const *)s->bval + o,
					s->blen + o, s->bfmt + o, 0) != 1)
			return dbpg_fail(p, NULL, s->what);
		rc = dbpg_push(p, P_RUN, s->what, NULL);
		at += 1 << k;
	}
	return rc;
}

int dbpg_batch_flush(struct pg *p)
{
	int rc = 0;
	for (size_t i = 0; i < p->nbatched; i++) {
		struct pg_stmt *s = p->batched[i];
		if (rc == 0 && (!p->conn || p->broken))
			rc = -ECONNRESET;
		if (rc == 0 && PQstatus(p->conn) != CONNECTION_OK)
			rc = dbpg_fail(p, NULL, s->what);
		if (rc == 0)
			rc = send_rows(p, s);
		drop_rows(s);
		s->queued = false;
	}
	p->nbatched = 0;
	p->batch_bytes = 0;
	if (rc < 0) /* rows of the transaction lost: it must not commit (#40 w40q) */
		p->broken = true;
	return rc;
}

void dbpg_batch_drop(struct pg *p)
{
	for (size_t i = 0; i < p->nbatched; i++) {
		drop_rows(p->batched[i]);
		p->batched[i]->queued = false;
	}
	p->nbatched = 0;
	p->batch_bytes = 0;
}

static size_t row_bytes(const struct pg_stmt *s)
{
	size_t b = 0;
	for (int c = 0; c < s->nparams; c++)
		b += s->fmt[c] ? (size_t)s->len[c] : s->val[c] ? strlen(s->val[c]) : 0;
	return b;
}

size_t db_pg_batch_bytes_peak(const struct db *d)
{
	return d->engine == DB_PG ? ((const struct pg *)d)->batch_bytes_peak : 0;
}

int dbpg_batch_run(struct pg_stmt *s)
{
	struct pg *p = pgd(s->base.db);
	int n = s->nparams;
	size_t rb = row_bytes(s);
	if (p->nbatched && p->batch_bytes + rb > PG_BATCH_BYTES) { /* bounded in bytes too */
		int rc = dbpg_batch_flush(p);
		if (rc < 0)
			return rc;
	}
	if (!s->bval) {
		size_t cells = (size_t)PG_BATCH_ROWS * (size_t)n;
		s->bval = calloc(cells, sizeof(*s->bval));
		s->blen = calloc(cells, sizeof(*s->blen));
		s->bfmt = calloc(cells, sizeof(*s->bfmt));
		if (!s->bval || !s->blen || !s->bfmt) {
			free(s->bval);
			free(s->blen);
			free(s->bfmt);
			s->bval = NULL;
			s->blen = NULL;
			s->bfmt = NULL;
			return -ENOMEM;
		}
	}
	if (!s->queued) {
		if (p->nbatched == p->batchedcap) {
			size_t nc = p->batchedcap ? p->batchedcap * 2 : 8;
			struct pg_stmt **nb = realloc(p->batched, nc * sizeof(*nb));
			if (!nb)
				return -ENOMEM;
			p->batched = nb;
			p->batchedcap = nc;
		}
		size_t at = p->nbatched++;
		if (s->lead) { /* at the front (rank 0) */
			memmove(p->batched + 1, p->batched, at * sizeof(*p->batched));
			at = 0;
		}
		p->batched[at] = s;
		s->queued = true;
	}
	size_t o = (size_t)s->brows * (size_t)n;
	for (int c = 0; c < n; c++) {
		const char *v = s->val[c];
		size_t len = s->fmt[c] ? (size_t)s->len[c] : v ? strlen(v) : 0;
		char *copy = NULL;
		if (v && !(copy = malloc(len + 1))) {
			for (int j = 0; j < c; j++) {
				free(s->bval[o + j]);
				s->bval[o + j] = NULL;
			}
			return -ENOMEM;
		}
		if (copy) {
			memcpy(copy, v, len);
			copy[len] = 0;
		}
		s->bval[o + c] = copy;
		s->blen[o + c] = (int)len;
		s->bfmt[o + c] = s->fmt[c];
	}
	p->batch_bytes += rb;
	if (p->batch_bytes > p->batch_bytes_peak)
		p->batch_bytes_peak = p->batch_bytes;
	if (++s->brows == PG_BATCH_ROWS)
		return dbpg_batch_flush(p);
	return 0;
}

void dbpg_batch_free(struct pg_stmt *s)
{
	struct pg *p = pgd(s->base.db);
	if (s->queued) { /* rows kept: sent first where the connection serves, else dropped */
		if (p->conn && !p->broken && PQstatus(p->conn) == CONNECTION_OK)
			dbpg_batch_flush(p);
		else
			dbpg_batch_drop(p);
	}
	drop_rows(s);
	for (int k = 1; k <= PG_BATCH_LOG; k++) {
		if (s->mprepared[k] && s->mgen[k] == p->gen && p->conn && !p->broken &&
		    PQstatus(p->conn) == CONNECTION_OK) {
			char sql[48];
			snprintf(sql, sizeof(sql), "DEALLOCATE %s", s->mname[k]);
			dbpg_send_simple(p, sql, P_IGNORE, "deallocate");
		}
	}
	free(s->bval);
	free(s->blen);
	free(s->bfmt);
}

#else

#include "db.h"

size_t db_pg_batch_bytes_peak(const struct db *d)
{
	(void)d;
	return 0;
}

#endif
