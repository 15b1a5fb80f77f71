/* The listening collector downsamples by itself on an SQLite store (#40;
 * tests/lib/downsample_listen.h says what is checked; the PostgreSQL case is
 * in test_pg_collectors, beside its server). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "downsample_listen.h"
#include "log.h"
#include "testproc.h"

static void test_downsample_listen_sqlite(void **state)
{
	(void)state;
	char dir[256], db[300];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "dsl"), 0);
	snprintf(db, sizeof(db), "%s/store.db", dir);
	tp_downsample_listen(dir, db, false);
	tp_rm_rf(dir);
}

int main(void)
{
	log_init("test_downsample_listen", LOG_LEVEL_ERROR);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_downsample_listen_sqlite),
	};
	return cmocka_run_group_tests_name("downsample_listen", tests, NULL, NULL);
}
