/* The default spool is one directory per agent id and collector; `agent
 * spool ls|drop` lists and removes the session directories in one. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "spool_scope.h"
#include "testproc.h"

static void test_spool_scope_per_agent_and_collector(void **state)
{
	(void)state;
	char a[512], b[512], c[512];
	assert_int_equal(spool_scope_dir(a, sizeof(a), "/base", "board-1", "127.0.0.1:7412"), 0);
	assert_int_equal(spool_scope_dir(b, sizeof(b), "/base", "board-2", "127.0.0.1:7412"), 0);
	assert_int_equal(spool_scope_dir(c, sizeof(c), "/base", "board-1", "[::1]:7413"), 0);
	assert_string_equal(a, "/base/board-1@127.0.0.1_7412");
	assert_string_equal(c, "/base/board-1@___1__7413"); /* no '/', ':' or brackets in the name */
	assert_string_not_equal(a, b);
	assert_string_not_equal(a, c);
	/* an agent id cannot climb out of the base */
	assert_int_equal(spool_scope_dir(b, sizeof(b), "/base", "../../etc", "h:1"), 0);
	assert_null(strstr(b + strlen("/base/"), "/"));
	/* no agent id: the hostname */
	assert_int_equal(spool_scope_dir(b, sizeof(b), "/base", NULL, "h:1"), 0);
	assert_true(strlen(b) > strlen("/base/@h_1"));
	char tiny[16];
	assert_int_equal(spool_scope_dir(tiny, sizeof(tiny), "/base", "a-long-agent-id", "127.0.0.1:7412"),
			 -ENAMETOOLONG);
}

static void test_spool_scope_list_and_drop(void **state)
{
	(void)state;
	char dir[256], p[400];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "spoolscope"), 0);
	for (int i = 0; i < 2; i++) {
		snprintf(p, sizeof(p), "%s/board-%d-00000000000000a%d", dir, i, i);
		assert_int_equal(mkdir(p, 0755), 0);
		snprintf(p, sizeof(p), "%s/board-%d-00000000000000a%d/seg-00000001.spl", dir, i, i);
		FILE *f = fopen(p, "w");
		assert_non_null(f);
		fputs("0123456789", f);
		fclose(f);
	}
	char *out = NULL;
	size_t len = 0;
	FILE *m = open_memstream(&out, &len);
	assert_int_equal(spool_scope_list(dir, m), 2);
	fclose(m);
	assert_non_null(strstr(out, "board-0-00000000000000a0"));
	assert_non_null(strstr(out, "board-1-00000000000000a1"));
	free(out);
	m = open_memstream(&out, &len);
	assert_int_equal(spool_scope_drop(dir, "board-0-00000000000000a0", m), 1);
	assert_int_equal(spool_scope_drop(dir, "no-such", m), -ENOENT);
	assert_int_equal(spool_scope_drop(dir, "../x", m), -EINVAL);
	assert_int_equal(spool_scope_drop(dir, NULL, m), 1);
	fclose(m);
	free(out);
	m = open_memstream(&out, &len);
	assert_int_equal(spool_scope_list(dir, m), 0);
	fclose(m);
	assert_non_null(strstr(out, "no spooled sessions"));
	free(out);
	tp_rm_rf(dir);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spool_scope_per_agent_and_collector),
		cmocka_unit_test(test_spool_scope_list_and_drop),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
