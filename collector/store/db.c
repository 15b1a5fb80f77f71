/* Database layer: the engine-independent half of db.h (dispatch, URIs). */
#include "db.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_priv.h"

bool db_is_pg_uri(const char *path)
{
	return path && (strncmp(path, "postgresql://", 13) == 0 || strncmp(path, "postgres://", 11) == 0);
}

void db_redact_uri(const char *uri, char *out, size_t outlen)
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

void db_close(struct db *d)
{
	if (d)
		d->ops->close(d);
}

int db_check(struct db *d, enum db_check how, unsigned budget_ms, char *why, size_t whylen)
{
	if (whylen)
		why[0] = 0;
	return d->ops->check(d, how, budget_ms, why, whylen);
}

bool db_damaged(const struct db *d) { return d->damaged; }
const char *db_last_error(const struct db *d) { return d->last_error; }
enum db_engine db_engine(const struct db *d) { return d->engine; }
const char *db_name(const struct db *d) { return d->name; }
int db_exec(struct db *d, const char *sql, const char *what) { return d->ops->exec(d, sql, what); }
bool db_has_table(struct db *d, const char *table) { return d->ops->has_table(d, table); }
int db_begin(struct db *d) { return d->ops->begin(d); }
int db_commit(struct db *d) { return d->ops->commit(d); }
void db_rollback(struct db *d) { d->ops->rollback(d); }
int db_read_begin(struct db *d) { return d->ops->read_begin ? d->ops->read_begin(d) : 0; }

void db_read_end(struct db *d)
{
	if (d->ops->read_end)
		d->ops->read_end(d);
}
int db_sync(struct db *d) { return d->ops->sync(d); }
int db_send(struct db *d, const char *sql, const char *what)
{
	return d->ops->send ? d->ops->send(d, sql, what) : d->ops->exec(d, sql, what);
}
int64_t db_changes(struct db *d) { return d->ops->changes(d); }

char *db_schema_sql(const struct db *d, const char *sql)
{
	return d->engine == DB_PG ? db_sql_pg_schema(sql) : strdup(sql);
}

int db_prepare(struct db *d, const char *sql, const char *what, struct db_stmt **out)
{
	*out = NULL;
	return d->ops->prepare(d, sql, what, out);
}

void db_finalize(struct db_stmt *st)
{
	if (st)
		st->db->ops->finalize(st);
}

static void bind(struct db_stmt *st, int i, struct db_value v)
{
	st->db->ops->bind(st, i, &v);
}

void db_bind_i64(struct db_stmt *st, int i, int64_t v) { bind(st, i, (struct db_value){.type = DBV_I64, .i = v}); }
void db_bind_u64(struct db_stmt *st, int i, uint64_t v) { db_bind_i64(st, i, (int64_t)v); }
void db_bind_double(struct db_stmt *st, int i, double v)
{
	bind(st, i, (struct db_value){.type = DBV_DOUBLE, .d = v});
}
void db_bind_text(struct db_stmt *st, int i, const char *v)
{
	v = v ? v : "";
	bind(st, i, (struct db_value){.type = DBV_TEXT, .p = v, .len = strlen(v)});
}
void db_bind_blob(struct db_stmt *st, int i, const void *v, size_t len)
{
	bind(st, i, (struct db_value){.type = DBV_BLOB, .p = v, .len = v ? len : 0});
}
void db_bind_null(struct db_stmt *st, int i) { bind(st, i, (struct db_value){.type = DBV_NULL}); }

int db_run(struct db_stmt *st) { return st->db->ops->run(st); }
void db_batch(struct db_stmt *st)
{
	if (st->db->ops->batch)
		st->db->ops->batch(st);
}
int db_step(struct db_stmt *st) { return st->db->ops->step(st); }
void db_reset(struct db_stmt *st) { st->db->ops->reset(st); }
bool db_col_null(struct db_stmt *st, int col) { return st->db->ops->col_null(st, col); }
int64_t db_col_i64(struct db_stmt *st, int col) { return st->db->ops->col_i64(st, col); }
uint64_t db_col_u64(struct db_stmt *st, int col) { return (uint64_t)st->db->ops->col_i64(st, col); }
double db_col_double(struct db_stmt *st, int col) { return st->db->ops->col_double(st, col); }
const char *db_col_text(struct db_stmt *st, int col) { return st->db->ops->col_text(st, col); }
const void *db_col_blob(struct db_stmt *st, int col, size_t *len)
{
	return st->db->ops->col_blob(st, col, len);
}
