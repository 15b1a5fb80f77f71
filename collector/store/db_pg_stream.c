/* PostgreSQL engine: a query's rows one at a time (#40). Every query runs in libpq's
 * single-row mode (db_pg.c take() turns it on before its first result), so the collector
 * holds one row of a result at a time, not the whole of it: the blocks of a 10^8-sample
 * store are read in the memory of one block. A caller may run other statements between
 * two rows of a query (SQLite allows it); the connection is then needed for them, so the
 * query's remaining rows are read ahead into its spill first (dbpg_settle) and its
 * db_step takes them from there: correct, but held whole, as before. */
#include <errno.h>
#include <stdlib.h>

#include "generated/config.h"

#ifdef CONFIG_STORE_POSTGRESQL

#include "db_pg_priv.h"

/* The end of the streaming statement's results and, if the drain left it, the sync. */
static int stream_finish(struct pg *p, struct pg_stmt *s, int rc)
{
	for (PGresult *r;;) {
		int nrc = dbpg_next_result(p, &r, s->what);
		if (nrc < 0) {
			p->broken = true;
			rc = rc < 0 ? rc : nrc;
			break;
		}
		if (!r)
			break;
		PQclear(r);
	}
	if (p->sync_after && !p->broken) {
		PGresult *r;
		int nrc = dbpg_next_result(p, &r, "pipeline sync");
		if (nrc == 0 && (!r || PQresultStatus(r) != PGRES_PIPELINE_SYNC))
			nrc = dbpg_fail(p, r, "pipeline sync");
		PQclear(r);
		if (nrc < 0)
			p->broken = true;
		rc = rc < 0 ? rc : nrc;
	}
	p->streaming = NULL;
	p->sync_after = false;
	if (rc == 0 && p->broken)
		rc = -ECONNRESET;
	return rc;
}

/* The streaming s's next result: 1 with *out (one row), 0 at its end, or its error. */
static int stream_read(struct pg *p, struct pg_stmt *s, PGresult **out)
{
	PGresult *r;
	*out = NULL;
	int rc = dbpg_next_result(p, &r, s->what);
	if (rc < 0 || !r) {
		p->broken = true;
		return stream_finish(p, s, rc < 0 ? rc : dbpg_fail(p, NULL, s->what));
	}
	ExecStatusType st = PQresultStatus(r);
	if (st == PGRES_SINGLE_TUPLE) {
		*out = r;
		return 1;
	}
	rc = 0;
	if (st != PGRES_TUPLES_OK) { /* e.g. statement_timeout or an error past the first rows */
		rc = dbpg_fail(p, r, s->what);
		p->gen++;
	}
	PQclear(r);
	return stream_finish(p, s, rc);
}

void dbpg_settle(struct pg *p)
{
	struct pg_stmt *s = p->streaming;
	if (!s)
		return;
	for (PGresult *r;;) {
		int rc = stream_read(p, s, &r);
		if (rc <= 0) {
			if (s->spill_rc == 0)
				s->spill_rc = rc;
			break;
		}
		if (s->nspill == s->spillcap && s->spill_rc == 0) {
			size_t nc = s->spillcap ? s->spillcap * 2 : 64;
			PGresult **n = realloc(s->spill, nc * sizeof(*n));
			if (n) {
				s->spill = n;
				s->spillcap = nc;
			} else {
				s->spill_rc = -ENOMEM; /* the rest read and dropped; db_step says so after the
							  held rows */
			}
		}
		if (s->spill_rc == 0)
			s->spill[s->nspill++] = r;
		else
			PQclear(r);
	}
	size_t held = s->nspill - s->spill_at + 1;
	if (held > p->rows_peak)
		p->rows_peak = held;
}

static void free_spill(struct pg_stmt *s)
{
	for (size_t i = s->spill_at; i < s->nspill; i++)
		PQclear(s->spill[i]);
	free(s->spill);
	s->spill = NULL;
	s->nspill = s->spill_at = s->spillcap = 0;
	s->spill_rc = 0;
	s->stream_open = false;
}

int dbpg_stream_next(struct pg *p, struct pg_stmt *s)
{
	PQclear(s->res);
	s->res = NULL;
	s->row = 0;
	if (s->spill_at < s->nspill) {
		s->res = s->spill[s->spill_at++];
		return 1;
	}
	if (p->streaming == s) {
		int rc = stream_read(p, s, &s->res);
		if (rc != 1)
			s->stream_open = false;
		return rc;
	}
	int rc = s->spill_rc;
	free_spill(s);
	return rc;
}

void dbpg_stream_close(struct pg *p, struct pg_stmt *s)
{
	if (p->streaming == s)
		for (PGresult *r; stream_read(p, s, &r) == 1;)
			PQclear(r);
	free_spill(s);
}

void dbpg_stream_lost(struct pg *p)
{
	if (p->streaming && p->streaming->spill_rc == 0)
		p->streaming->spill_rc = -ECONNRESET;
	p->streaming = NULL;
	p->sync_after = false;
}

#endif
