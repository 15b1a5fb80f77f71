/* SQL rewriting for the PostgreSQL engine: placeholders and schema types. */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_priv.h"

char *db_sql_dollar(const char *sql, int *nparams)
{
	size_t n = strlen(sql);
	char *out = malloc(n * 7 + 1); /* "?" -> "$NNNNNN" at most */
	if (!out)
		return NULL;
	size_t o = 0;
	int hi = 0;
	char quote = 0;
	for (size_t i = 0; i < n; i++) {
		char c = sql[i];
		if (quote) {
			out[o++] = c;
			if (c == quote)
				quote = 0;
			continue;
		}
		if (c == '\'' || c == '"') {
			quote = c;
			out[o++] = c;
			continue;
		}
		if (c == '-' && sql[i + 1] == '-') { /* comment to the end of the line */
			while (i < n && sql[i] != '\n')
				out[o++] = sql[i++];
			if (i < n)
				out[o++] = '\n';
			continue;
		}
		if (c != '?') {
			out[o++] = c;
			continue;
		}
		int num;
		if (isdigit((unsigned char)sql[i + 1])) {
			num = 0;
			while (isdigit((unsigned char)sql[i + 1]) && num < 100000)
				num = num * 10 + (sql[++i] - '0');
		} else {
			num = hi + 1; /* SQLite: one more than the largest so far */
		}
		if (num > hi)
			hi = num;
		o += (size_t)sprintf(out + o, "$%d", num);
	}
	out[o] = 0;
	*nparams = hi;
	return out;
}

static bool word_at(const char *s, size_t i, const char *w, size_t wl)
{
	if (strncmp(s + i, w, wl) != 0)
		return false;
	bool before = i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_');
	char a = s[i + wl];
	return before && !(isalnum((unsigned char)a) || a == '_');
}

char *db_sql_pg_schema(const char *sql)
{
	static const struct {
		const char *from, *to;
	} subst[] = {
	    {"INTEGER", "BIGINT"},
	    {"REAL", "DOUBLE PRECISION"},
	    {"BLOB", "BYTEA"},
	    {" WITHOUT ROWID", ""},
	};
	size_t n = strlen(sql);
	char *out = malloc(n * 4 + 1); /* REAL -> DOUBLE PRECISION: 4 times longer */
	if (!out)
		return NULL;
	size_t o = 0;
	for (size_t i = 0; i < n;) {
		size_t k;
		for (k = 0; k < sizeof(subst) / sizeof(subst[0]); k++) {
			size_t wl = strlen(subst[k].from);
			const char *w = subst[k].from[0] == ' ' ? subst[k].from + 1 : subst[k].from;
			size_t at = subst[k].from[0] == ' ' ? i + 1 : i;
			if (subst[k].from[0] == ' ' && sql[i] != ' ')
				continue;
			if (word_at(sql, at, w, strlen(w))) {
				o += (size_t)sprintf(out + o, "%s", subst[k].to);
				i += wl;
				break;
			}
		}
		if (k == sizeof(subst) / sizeof(subst[0]))
			out[o++] = sql[i++];
	}
	out[o] = 0;
	return out;
}
