/* The short variant of the fleet load benchmark (bench/load.c): 200 simulated
 * agents on loopback for 10 s against a real collector; every record sent is
 * in the store exactly once. Rates are kept low enough for the sanitizer build. */
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "loadgen.h"
#include "testproc.h"

static void test_load_200_agents_no_record_lost(void **state)
{
	char dir[256], db[300], clog[300];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "load"), 0);
	snprintf(db, sizeof(db), "%s/load.db", dir);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	loadgen_raise_nofile(1024);
	int port = 0;
	pid_t coll = tp_start_collector(dir, db, 0, &port, clog);
	assert_true(coll > 0);
	struct loadgen_opts o = {.port = port, .agents = 200, .rate = 20, .seconds = 10, .drain_s = 30,
				 .prefix = "t", .quiet = 0};
	struct loadgen_result r;
	assert_int_equal(loadgen_run(&o, &r), 0);
	long rss = tp_peak_rss_kib(coll);
	tp_stop(coll, 10000);
	int64_t stored = tp_db_int(db, "SELECT COUNT(*) FROM records");
	int64_t samples = tp_db_int(db, "SELECT COUNT(*) FROM counter_samples");
	fprintf(stderr,
		"200 agents x 20 records/s x 10 s: %llu sent, %lld stored (%.0f records/s), ack p50 %.1f ms p99 "
		"%.1f ms, collector peak RSS %.1f MiB (sanitizer build)\n",
		(unsigned long long)r.generated, (long long)stored, (double)stored / r.gen_s, r.p50_ms, r.p99_ms,
		rss / 1024.0);
	assert_int_equal(r.agents_connected, 200);
	assert_int_equal(r.acked, r.generated);
	assert_int_equal(stored, (int64_t)r.generated);
	assert_int_equal(samples, (int64_t)r.generated);
	tp_rm_rf(dir);
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_load_200_agents_no_record_lost),
	};
	return cmocka_run_group_tests_name("load", tests, NULL, NULL);
}
