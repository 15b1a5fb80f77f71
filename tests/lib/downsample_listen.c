/* The listening collector's own downsampling, run against a store (downsample_listen.h). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <time.h>

#include <cmocka.h>

#include "downsample_listen.h"
#include "pgserver.h"
#include "query/query.h"
#include "sample_rec.h"
#include "store/store.h"
#include "store/store_writers.h"
#include "testproc.h"

enum { RECORDS = 40 }; /* ending at 1..40 ms: per 10 ms windows of 9, 10, 10, 10 blocks and 1 */

/* A session of an hour ago, RECORDS records of 3 keys (pids 101-103). */
static void fill(const char *db)
{
	struct store *s;
	assert_int_equal(store_open(db, 0, &s), 0);
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = "board-old";
	h.boot_id = 1;
	h.board = "host";
	h.realtime_ns = (uint64_t)(ts.tv_sec - 3600) * 1000000000ull;
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(s, &h, "127.0.0.1:1", &sid, &max_seq, NULL), 0);
	for (uint64_t seq = 1; seq <= RECORDS; seq++) {
		int32_t pid[3] = {101, 102, 103}, tid[3] = {101, 102, 103};
		uint64_t ip[3] = {0x1000, 0x2000, 0x3000}, count[3] = {seq, 2, 3};
		uint32_t stack[3] = {0, 0, 0};
		struct sample_rec_keys k = {3, pid, tid, ip, stack, count};
		Prof__Samples sm;
		Prof__Envelope env;
		sample_rec_init(&sm, &env, seq, &k);
		assert_int_equal(store_put_record(s, sid, &env, 100), 1);
	}
	assert_int_equal(store_commit(s), 0);
	store_close(s);
}

static uint64_t total(const char *db, int32_t pid)
{
	struct store *s;
	assert_int_equal(store_open(db, STORE_READ_ONLY, &s), 0);
	struct query_opts qo;
	query_opts_init(&qo, 0);
	if (pid) {
		qo.f.pids[0] = pid;
		qo.f.npids = 1;
	}
	struct query_result *r;
	assert_int_equal(query_run(s, &qo, &r), 0);
	store_close(s);
	uint64_t n = r->total;
	query_result_free(r);
	return n;
}

static int64_t nblocks(const char *db, bool pg)
{
	return pg ? pg_int(db, "SELECT COUNT(*) FROM sample_blocks")
		  : tp_db_int(db, "SELECT COUNT(*) FROM sample_blocks");
}

void tp_downsample_listen(const char *dir, const char *db, bool pg)
{
	fill(db);
	uint64_t all = total(db, 0), p101 = total(db, 101);
	assert_int_equal(all, RECORDS * (RECORDS + 1) / 2 + RECORDS * 5);
	assert_int_equal(nblocks(db, pg), RECORDS);
	char log[600];
	snprintf(log, sizeof(log), "%s/collector.log", dir);
	/* both tiers: compaction per 2 ms first ({2,3} .. {38,39}: 38 blocks into 19, at 3, 5, .. 39 ms),
	 * then the downsampling per 10 ms of those and blocks 1 and 40 (20 into 4), in the first pass */
	const char *extra[] = {"--compact-after",
			       "1s",
			       "--compact-per",
			       "2ms",
			       "--downsample-after",
			       "1s",
			       "--downsample-per",
			       "10ms",
			       NULL};
	int port = 0;
	pid_t c = tp_start_collector_args(dir, db, 0, &port, log, extra);
	assert_true(c > 0);
	/* the first pass is at start: 5 blocks left, one per window (bounded wait, 100 ms steps) */
	int64_t n = RECORDS;
	for (int i = 0; i < 300 && (n = nblocks(db, pg)) != 5; i++)
		tp_sleep_ms(100);
	if (n != 5)
		tp_dump_file(log);
	assert_int_equal(n, 5);
	assert_int_equal(tp_stop(c, 10000), 0);
	assert_true(tp_file_count(log, "--compact-after: 38 sample blocks merged into 19") == 1);
	assert_true(tp_file_count(log, "--downsample-after: 20 sample blocks merged into 4") == 1);
	assert_int_equal(total(db, 0), all);
	assert_int_equal(total(db, 101), p101);
	if (!pg) { /* the thread's connection left no writer row: closed cleanly */
		struct store *s;
		assert_int_equal(store_open(db, STORE_READ_ONLY, &s), 0);
		char why[256];
		assert_int_equal(store_writers_unclean(s, why, sizeof(why)), 0);
		store_close(s);
	}
}
