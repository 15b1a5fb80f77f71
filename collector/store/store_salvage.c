/* Salvage of a damaged SQLite store into a new one (store.h, store_salvage):
 * the new store is made by store_open (schema, WAL, version), the damaged one
 * is attached and every table of the schema copied. A table that reads whole
 * is copied in one statement; one with unreadable pages row by row: its keys
 * (rowid, or the primary key of a WITHOUT ROWID table: integers in this
 * schema) are read forwards until the first error and backwards down to
 * there, so one damaged page loses only the rows on it. Debian 12's sqlite3
 * cannot `.recover` (its libsqlite3 has no sqlite_dbpage table). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "log.h"
#include "store_priv.h"

#define MAX_KEYS 3

struct keys {
	int n;			/* key columns */
	char cols[MAX_KEYS][64]; /* "rowid", or the primary key's columns in order */
	int64_t *v;		/* rows x n */
	size_t rows, cap;
};

static int keys_add(struct keys *k, const int64_t *v)
{
	if (k->rows == k->cap) {
		size_t nc = k->cap ? k->cap * 2 : 1024;
		int64_t *nv = realloc(k->v, nc * (size_t)k->n * sizeof(*nv));
		if (!nv)
			return -ENOMEM;
		k->v = nv;
		k->cap = nc;
	}
	memcpy(k->v + k->rows * (size_t)k->n, v, (size_t)k->n * sizeof(*v));
	k->rows++;
	return 0;
}

/* a < b in key order */
static int key_cmp(const int64_t *a, const int64_t *b, int n)
{
	for (int i = 0; i < n; i++)
		if (a[i] != b[i])
			return a[i] < b[i] ? -1 : 1;
	return 0;
}

/* The key columns of main.table: the rowid, or the primary key of a WITHOUT ROWID table. */
static int table_keys(struct store *s, const char *table, struct keys *k)
{
	k->n = 0;
	struct db_stmt *st = store_query(s, "SELECT sql LIKE '%WITHOUT ROWID%' FROM main.sqlite_schema WHERE name = ?1");
	if (!st)
		return -EIO;
	db_bind_text(st, 1, table);
	bool without_rowid = db_step(st) == 1 && db_col_i64(st, 0);
	db_finalize(st);
	if (!without_rowid) {
		k->n = 1;
		snprintf(k->cols[0], sizeof(k->cols[0]), "rowid");
		return 0;
	}
	if (!(st = store_query(s, "SELECT name FROM pragma_table_info(?1, 'main') WHERE pk > 0 ORDER BY pk")))
		return -EIO;
	db_bind_text(st, 1, table);
	int rc;
	while ((rc = db_step(st)) == 1 && k->n < MAX_KEYS)
		snprintf(k->cols[k->n++], sizeof(k->cols[0]), "%s", db_col_text(st, 0));
	db_finalize(st);
	return rc < 0 ? rc : k->n > 0 ? 0 : -EINVAL;
}

/* "a, b, c" (with " DESC" after each when desc) */
static void key_list(const struct keys *k, bool desc, char *out, size_t len)
{
	size_t n = 0;
	out[0] = 0;
	for (int i = 0; i < k->n && n < len; i++)
		n += (size_t)snprintf(out + n, len - n, "%s\"%s\"%s", i ? ", " : "", k->cols[i], desc ? " DESC" : "");
}

/* Read the keys of old.table forwards until the first error, then backwards
 * down to the last key read forwards. *damaged: an error stopped a scan. */
static int scan_keys(struct store *s, const char *table, struct keys *k, bool *damaged)
{
	char cols[256], order[300], sql[800];
	*damaged = false;
	for (int pass = 0; pass < 2; pass++) {
		size_t forward = k->rows;
		key_list(k, false, cols, sizeof(cols));
		key_list(k, pass == 1, order, sizeof(order));
		snprintf(sql, sizeof(sql), "SELECT %s FROM old.\"%s\" ORDER BY %s", cols, table, order);
		struct db_stmt *st = store_query(s, sql);
		if (!st) { /* the damaged store lacks the table, or its schema is unreadable */
			*damaged = true;
			return 0;
		}
		int rc;
		int64_t v[MAX_KEYS];
		while ((rc = db_step(st)) == 1) {
			for (int i = 0; i < k->n; i++)
				v[i] = db_col_i64(st, i);
			if (pass == 1 && forward && key_cmp(v, k->v + (forward - 1) * (size_t)k->n, k->n) <= 0)
				break; /* met the forward scan */
			if ((rc = keys_add(k, v)) < 0)
				break;
		}
		db_finalize(st);
		if (rc == -ENOMEM)
			return rc;
		if (pass == 0 && rc == 0)
			return 0; /* read whole */
		*damaged = *damaged || rc < 0;
	}
	return 0;
}

/* The damaged store's columns of table, quoted and comma separated, into buf: the new store's table
 * may have more (a version 1 store's sample_blocks has no fmt column, #40 w45a: NULL there, the
 * key format). 0, or -EIO (none read, or too many for buf). */
static int old_cols(struct store *s, const char *table, char *buf, size_t len)
{
	struct db_stmt *st = store_query(s, "SELECT name FROM pragma_table_info(?1, 'old') ORDER BY cid");
	if (!st)
		return -EIO;
	db_bind_text(st, 1, table);
	size_t n = 0;
	int rc;
	buf[0] = 0;
	while ((rc = db_step(st)) == 1) {
		const char *c = db_col_text(st, 0);
		int w = snprintf(buf + n, len - n, "%s\"%s\"", n ? ", " : "", c ? c : "");
		if (w < 0 || (size_t)w >= len - n || strchr(c ? c : "", '"')) {
			rc = -EIO;
			break;
		}
		n += (size_t)w;
	}
	db_finalize(st);
	return rc < 0 || n == 0 ? -EIO : 0;
}

/* Copy the rows of the keys one at a time; rows that cannot be read are skipped. */
static int copy_rows(struct store *s, const char *table, const struct keys *k, uint64_t *copied)
{
	char cols[1200];
	if (old_cols(s, table, cols, sizeof(cols)) < 0)
		return -EIO;
	char where[400], sql[3000];
	size_t n = 0;
	where[0] = 0;
	for (int i = 0; i < k->n; i++)
		n += (size_t)snprintf(where + n, sizeof(where) - n, "%s\"%s\" = ?%d", i ? " AND " : "", k->cols[i], i + 1);
	snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO main.\"%s\" (%s) SELECT %s FROM old.\"%s\" WHERE %s", table,
		 cols, cols, table, where);
	struct db_stmt *st = store_query(s, sql);
	if (!st)
		return -EIO;
	for (size_t r = 0; r < k->rows; r++) {
		for (int i = 0; i < k->n; i++)
			db_bind_i64(st, i + 1, k->v[r * (size_t)k->n + (size_t)i]);
		if (db_run(st) == 0 && db_changes(s->db) > 0)
			(*copied)++;
	}
	db_finalize(st);
	return 0;
}

static int copy_table(struct store *s, const char *table, struct store_salvage_stats *out)
{
	struct keys k = {0};
	int rc = table_keys(s, table, &k);
	bool damaged = false;
	if (rc == 0)
		rc = scan_keys(s, table, &k, &damaged);
	uint64_t copied = 0;
	char cols[1200];
	if (rc == 0 && !damaged && old_cols(s, table, cols, sizeof(cols)) < 0)
		damaged = true;
	if (rc == 0 && !damaged) {
		char sql[2600];
		snprintf(sql, sizeof(sql), "INSERT OR IGNORE INTO main.\"%s\" (%s) SELECT %s FROM old.\"%s\"", table, cols,
			 cols, table);
		if (db_exec(s->db, sql, "copy a table") == 0)
			copied = (uint64_t)db_changes(s->db);
		else
			damaged = true; /* a row's overflow pages: go row by row */
	}
	if (rc == 0 && damaged)
		rc = copy_rows(s, table, &k, &copied);
	free(k.v);
	if (rc < 0)
		return rc;
	out->rows += copied;
	out->tables++;
	if (damaged) {
		out->damaged_tables++;
		log_warn("recover: table %s: %llu rows copied; rows on its unreadable pages are lost", table,
			 (unsigned long long)copied);
	} else {
		log_debug("recover: table %s: %llu rows", table, (unsigned long long)copied);
	}
	return 0;
}

int store_salvage(const char *from, const char *to, struct store_salvage_stats *out)
{
	memset(out, 0, sizeof(*out));
	struct stat sb;
	if (db_is_pg_uri(from) || db_is_pg_uri(to)) {
		log_error("recover works on SQLite stores; a PostgreSQL database is repaired with PostgreSQL's own tools");
		return -ENOTSUP;
	}
	if (stat(from, &sb) < 0) {
		log_error("recover: %s: %s", from, strerror(errno));
		return -errno;
	}
	if (stat(to, &sb) == 0) {
		log_error("recover: %s exists: name a new file for the recovered store", to);
		return -EEXIST;
	}
	if (strchr(from, '\'')) {
		log_error("recover: %s: a path with a quote is not supported; rename or link the file", from);
		return -EINVAL;
	}
	struct store *s;
	int rc = store_open(to, 0, &s);
	if (rc < 0)
		return rc;
	char sql[4200];
	snprintf(sql, sizeof(sql), "ATTACH '%s' AS old", from);
	rc = db_exec(s->db, sql, "attach the damaged store");
	/* the tables both have: an older store lacks the newer ones (sample_key_ids, #40 w45a) */
	struct db_stmt *st = rc == 0 ? store_query(s, "SELECT name FROM main.sqlite_schema WHERE type = 'table'"
						      " AND name NOT LIKE 'sqlite_%' AND name IN (SELECT name FROM"
						      " old.sqlite_schema WHERE type = 'table') ORDER BY rootpage")
				     : NULL;
	char (*tables)[64] = NULL;
	size_t nt = 0;
	while (st && (rc = db_step(st)) == 1) {
		char (*nt2)[64] = realloc(tables, (nt + 1) * sizeof(*tables));
		if (!nt2) {
			rc = -ENOMEM;
			break;
		}
		tables = nt2;
		snprintf(tables[nt++], sizeof(tables[0]), "%s", db_col_text(st, 0));
	}
	db_finalize(st);
	if (rc == 0 && !st)
		rc = -EIO;
	/* No enclosing transaction: SQLite may roll one back by itself after an I/O
	 * error of the damaged file; each statement commits on its own instead. */
	for (size_t i = 0; rc == 0 && i < nt; i++)
		rc = copy_table(s, tables[i], out);
	free(tables);
	/* every id block kept decodes whole, and a collector on the new store continues the ids where
	 * the kept ones end (#40 w46c) */
	if (rc == 0)
		rc = store_salvage_key_ids(s, out);
	store_close(s); /* detaches */
	if (rc < 0) {
		log_error("recover: %s could not be copied (%s): %s is incomplete; delete it", from, strerror(-rc), to);
		return rc;
	}
	log_info("recover: %llu rows of %zu tables copied from %s into %s (%zu with unreadable pages)",
		 (unsigned long long)out->rows, out->tables, from, to, out->damaged_tables);
	if (out->key_chunks_dropped || out->id_blocks_cut || out->id_blocks_dropped || out->id_blocks_damaged)
		log_warn("recover: %llu sample blocks referred to sample keys on unreadable pages: %llu cut to their"
			 " other keys, %llu deleted; %llu key chunks after the lost ones dropped; %llu sample blocks"
			 " whose own data is damaged deleted; %llu samples lost; every block kept decodes whole",
			 (unsigned long long)(out->id_blocks_cut + out->id_blocks_dropped),
			 (unsigned long long)out->id_blocks_cut, (unsigned long long)out->id_blocks_dropped,
			 (unsigned long long)out->key_chunks_dropped, (unsigned long long)out->id_blocks_damaged,
			 (unsigned long long)out->id_samples_dropped);
	return 0;
}
