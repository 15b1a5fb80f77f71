/* Multi-row INSERTs (store_rows.h). */
#include "store_rows.h"
#include "store_priv.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

char *store_rows_sql(const char *head, int ncols, int nrows)
{
	size_t hl = strlen(head), rowlen = (size_t)ncols * 2 + 3; /* "(?,?)," */
	char *sql = malloc(hl + (size_t)nrows * rowlen + 1);
	if (!sql)
		return NULL;
	memcpy(sql, head, hl);
	char *p = sql + hl;
	for (int r = 0; r < nrows; r++) {
		*p++ = r ? ',' : '(';
		if (r)
			*p++ = '(';
		for (int c = 0; c < ncols; c++) {
			*p++ = c ? ',' : '?';
			if (c)
				*p++ = '?';
		}
		*p++ = ')';
	}
	*p = 0;
	return sql;
}

int store_insert_rows(struct store *s, const char *head, int ncols, size_t nrows, store_row_bind bind, void *arg)
{
	size_t row = 0;
	while (row < nrows) {
		int n = STORE_ROWS_MAX;
		while ((size_t)n > nrows - row)
			n /= 2;
		struct db_stmt *st = store_stmt_rows(s, head, ncols, n);
		if (!st)
			return -EIO;
		for (int k = 0; k < n; k++)
			bind(st, k * ncols, row + (size_t)k, arg);
		int rc = db_run(st);
		if (rc < 0)
			return rc;
		row += (size_t)n;
	}
	return 0;
}

struct db_stmt *store_stmt_rows(struct store *s, const char *head, int ncols, int nrows)
{
	struct db_stmt *st = store_stmt_find(s, head, nrows);
	if (st)
		return st;
	char *sql = nrows ? store_rows_sql(head, ncols, nrows) : NULL;
	if (nrows && !sql)
		return NULL;
	st = store_stmt_add(s, head, nrows, sql ? sql : head);
	free(sql);
	return st;
}
