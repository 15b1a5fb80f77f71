/* The database layer's SQL rewriting for PostgreSQL (db_sql.c): `?`/`?N`
 * placeholders to `$N`, schema types, quotes left alone. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "store/db_priv.h"

static void check_dollar(const char *in, const char *want, int want_n)
{
	int n = -1;
	char *out = db_sql_dollar(in, &n);
	assert_non_null(out);
	assert_string_equal(out, want);
	assert_int_equal(n, want_n);
	free(out);
}

static void test_db_sql_placeholders_numbered(void **state)
{
	check_dollar("SELECT 1", "SELECT 1", 0);
	check_dollar("VALUES (?, ?, ?)", "VALUES ($1, $2, $3)", 3);
	check_dollar("VALUES (?1, ?2, ?15, ?15)", "VALUES ($1, $2, $15, $15)", 15);
	/* SQLite: a bare ? is one more than the largest number so far */
	check_dollar("?3, ?, ?1, ?", "$3, $4, $1, $5", 5);
	check_dollar("WHERE a = ?1 AND (?2 < 0 OR b = ?2)", "WHERE a = $1 AND ($2 < 0 OR b = $2)", 2);
}

static void test_db_sql_quotes_and_comments_untouched(void **state)
{
	check_dollar("SELECT '?', \"a?b\", ? -- why?\n, ?", "SELECT '?', \"a?b\", $1 -- why?\n, $2", 2);
}

static void test_db_sql_schema_types(void **state)
{
	char *out = db_sql_pg_schema("CREATE TABLE IF NOT EXISTS t (a INTEGER NOT NULL, b REAL, c BLOB,"
				     " d TEXT, INTEGERS INTEGER, \"end\" INTEGER, PRIMARY KEY(a)) WITHOUT ROWID;"
				     "CREATE INDEX IF NOT EXISTS t_b ON t(b);");
	assert_non_null(out);
	assert_string_equal(out, "CREATE TABLE IF NOT EXISTS t (a BIGINT NOT NULL, b DOUBLE PRECISION, c BYTEA,"
				 " d TEXT, INTEGERS BIGINT, \"end\" BIGINT, PRIMARY KEY(a));"
				 "CREATE INDEX IF NOT EXISTS t_b ON t(b);");
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_db_sql_placeholders_numbered),
		cmocka_unit_test(test_db_sql_quotes_and_comments_untouched),
		cmocka_unit_test(test_db_sql_schema_types),
	};
	return cmocka_run_group_tests_name("db_sql", tests, NULL, NULL);
}
