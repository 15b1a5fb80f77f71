/* The on-disk spool: append/ack/replay order, the size cap, cleanup. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "frame.h"
#include "spool.h"

/* A Heartbeat frame with this seq, padded to about pad bytes. */
static uint8_t *make_frame(uint64_t seq, size_t *len)
{
	Prof__Heartbeat hb;
	prof__heartbeat__init(&hb);
	hb.t_ns = seq * 1000;
	hb.spool_bytes = seq * 77;
	Prof__Envelope env;
	prof__envelope__init(&env);
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_HEARTBEAT;
	env.heartbeat = &hb;
	uint8_t *f;
	assert_int_equal(frame_encode(&env, 1 << 20, &f, len), 0);
	return f;
}

static int count_files(const char *dir)
{
	DIR *d = opendir(dir);
	if (!d)
		return -1;
	int n = 0;
	struct dirent *de;
	while ((de = readdir(d)))
		if (de->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

static void append_range(struct spool *s, uint64_t from, uint64_t to)
{
	for (uint64_t q = from; q <= to; q++) {
		size_t len;
		uint8_t *f = make_frame(q, &len);
		assert_int_equal(spool_append(s, q, f, len), 0);
		free(f);
	}
}

/* Replays from after and checks the seqs come out in order, ending at last. */
static uint64_t replay_check(struct spool *s, uint64_t after, uint64_t first_expected, uint64_t last)
{
	struct spool_iter it;
	spool_iter_init(&it, s, after);
	const uint8_t *f;
	size_t len;
	uint64_t seq, expect = first_expected, n = 0;
	int rc;
	while ((rc = spool_iter_next(&it, &f, &len, &seq)) > 0) {
		assert_int_equal(seq, expect);
		uint64_t again;
		assert_int_equal(spool_frame_seq(f, len, &again), 0);
		assert_int_equal(again, seq);
		expect++;
		n++;
	}
	assert_int_equal(rc, 0);
	assert_int_equal(expect - 1, last);
	spool_iter_free(&it);
	return n;
}

static void test_spool_append_ack_replay_order(void **state)
{
	(void)state;
	char base[] = "/tmp/test_spool_XXXXXX";
	assert_non_null(mkdtemp(base));
	struct spool *s;
	char err[256];
	/* 256-byte segments so a few hundred records span many segments. */
	assert_int_equal(spool_open(&s, base, "host/with:odd chars", 0xabcdef, 1 << 20, 256, err, sizeof(err)), 0);
	assert_non_null(strstr(spool_path(s), "/host_with_odd_chars-0000000000abcdef"));
	append_range(s, 1, 300);
	assert_int_equal(spool_records(s), 300);
	assert_int_equal(spool_last_seq(s), 300);
	size_t nseg = spool_nsegments(s);
	assert_true(nseg > 10);
	assert_int_equal(count_files(spool_path(s)), (int)nseg);
	/* Index: consecutive, ordered, byte counts add up. */
	uint64_t bytes = 0, next = 1;
	for (size_t i = 0; i < nseg; i++) {
		const struct spool_segment *g = spool_segment_at(s, i);
		assert_int_equal(g->first_seq, next);
		assert_int_equal(g->last_seq - g->first_seq + 1, g->records);
		next = g->last_seq + 1;
		bytes += g->bytes;
	}
	assert_int_equal(bytes, spool_bytes(s));

	assert_int_equal(replay_check(s, 0, 1, 300), 300);
	assert_int_equal(replay_check(s, 123, 124, 300), 177);
	assert_int_equal(replay_check(s, 300, 301, 300), 0);

	/* Ack deletes only whole segments covered by the ack. */
	spool_ack(s, 150);
	assert_int_equal(spool_acked(s), 150);
	const struct spool_segment *g0 = spool_segment_at(s, 0);
	assert_true(g0->first_seq <= 151 && g0->last_seq > 150);
	assert_true(spool_records(s) >= 150 && spool_records(s) < 300 - 150 + g0->records + 1);
	assert_int_equal(count_files(spool_path(s)), (int)spool_nsegments(s));
	assert_int_equal(replay_check(s, 150, 151, 300), 150);

	/* An iterator sees records appended while it is in use. */
	struct spool_iter it;
	spool_iter_init(&it, s, 298);
	const uint8_t *f;
	size_t len;
	uint64_t seq;
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 1);
	assert_int_equal(seq, 299);
	append_range(s, 301, 302);
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 1);
	assert_int_equal(seq, 300);
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 1);
	assert_int_equal(seq, 301);
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 1);
	assert_int_equal(seq, 302);
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 0);
	spool_iter_free(&it);

	/* Everything acked: the directory goes away on close. */
	char path[512];
	snprintf(path, sizeof(path), "%s", spool_path(s));
	spool_ack(s, 302);
	assert_int_equal(spool_records(s), 0);
	assert_int_equal(spool_bytes(s), 0);
	assert_int_equal(spool_close(s, true), 0);
	struct stat st;
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(rmdir(base), 0);
}

static void test_spool_cap_drops_oldest_and_counts(void **state)
{
	(void)state;
	char base[] = "/tmp/test_spool_XXXXXX";
	assert_non_null(mkdtemp(base));
	struct spool *s;
	char err[256];
	size_t one;
	free(make_frame(1000, &one));
	/* Cap of ~8 KiB with 1 KiB segments. */
	const uint64_t cap = 8192;
	assert_int_equal(spool_open(&s, base, "cap", 2, cap, 1024, err, sizeof(err)), 0);
	append_range(s, 1, 2000);
	assert_true(spool_bytes(s) <= cap);
	assert_true(spool_dropped(s) > 0);
	/* Every record is either held or counted as dropped. */
	assert_int_equal(spool_dropped(s) + spool_records(s), 2000);
	/* What is left is the newest, contiguous, and replays in order. */
	const struct spool_segment *g0 = spool_segment_at(s, 0);
	assert_int_equal(g0->first_seq, spool_dropped(s) + 1);
	assert_int_equal(replay_check(s, 0, g0->first_seq, 2000), spool_records(s));
	/* Memory: one index entry per segment, bounded by the cap. */
	assert_true(spool_nsegments(s) <= cap / 1024 + 1);
	assert_int_equal(count_files(spool_path(s)), (int)spool_nsegments(s));
	assert_true(spool_would_drop(s, 4096));
	/* A frame bigger than the whole cap is refused. */
	uint8_t big[9000];
	memset(big, 0, sizeof(big));
	assert_int_equal(spool_append(s, 2001, big, sizeof(big)), -EFBIG);
	/* Records left unacked: the directory stays for later inspection. */
	char path[512];
	snprintf(path, sizeof(path), "%s", spool_path(s));
	uint64_t left = spool_records(s);
	assert_int_equal(spool_close(s, true), left);
	struct stat st;
	assert_int_equal(stat(path, &st), 0);
	char cmd[600];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", base);
	assert_int_equal(system(cmd), 0);
}

static void test_spool_frame_seq_parse(void **state)
{
	(void)state;
	size_t len;
	uint8_t *f = make_frame(0x123456789ull, &len);
	uint64_t seq;
	assert_int_equal(spool_frame_seq(f, len, &seq), 0);
	assert_true(seq == 0x123456789ull);
	assert_int_equal(spool_frame_seq(f, len - 1, &seq), -EBADMSG); /* truncated */
	free(f);
}

static void test_spool_open_fails_clearly(void **state)
{
	(void)state;
	struct spool *s;
	char err[512];
	int rc = spool_open(&s, "/proc/no-spool-here", "x", 1, 1 << 20, 0, err, sizeof(err));
	assert_true(rc < 0);
	assert_non_null(strstr(err, "--spool"));
}

/* A run that ends with records unacked leaves an orphan (saved Hello, no
 * lock): another process adopts it with the records, their seqs and a torn
 * last frame left out; while its agent runs it is not adoptable; acking
 * everything removes it (issue 25 item 7). */
static void test_spool_orphan_adopted(void **state)
{
	(void)state;
	char base[] = "/tmp/test_spool_XXXXXX";
	assert_non_null(mkdtemp(base));
	struct spool *s, *a;
	char err[512], dir[600];
	assert_int_equal(spool_open(&s, base, "board", 0x77, 1 << 20, 512, err, sizeof(err)), 0);
	snprintf(dir, sizeof(dir), "%s", spool_path(s));
	const uint8_t hello[] = {3, 'h', 'e', 'y'};
	assert_int_equal(spool_set_meta(s, hello, sizeof(hello), "127.0.0.1:7412"), 0);
	append_range(s, 1, 50);
	spool_ack(s, 20);
	assert_int_equal(spool_probe(dir), SPOOL_LIVE);
	assert_int_equal(spool_adopt(&a, dir, err, sizeof(err)), -EBUSY); /* its agent still runs */
	uint64_t left = spool_records(s), last = spool_last_seq(s), first = spool_segment_at(s, 0)->first_seq;
	assert_true(spool_nsegments(s) > 1);
	assert_int_equal(spool_close(s, true), left); /* the run ends: the directory stays */
	assert_int_equal(spool_probe(dir), SPOOL_ORPHAN);
	assert_int_equal(spool_adopt(&a, dir, err, sizeof(err)), 0);
	assert_int_equal(spool_records(a), left);
	assert_int_equal(spool_last_seq(a), last);
	size_t hlen;
	const uint8_t *h = spool_hello(a, &hlen);
	assert_int_equal(hlen, sizeof(hello));
	assert_memory_equal(h, hello, sizeof(hello));
	assert_string_equal(spool_collector(a), "127.0.0.1:7412");
	assert_int_equal(replay_check(a, 0, first, last), left);
	assert_int_equal(spool_probe(dir), SPOOL_LIVE); /* adopted: locked by this process */
	spool_ack(a, last);
	assert_int_equal(spool_close(a, true), 0);
	struct stat st;
	assert_true(stat(dir, &st) < 0 && errno == ENOENT); /* delivered: gone */
	assert_int_equal(rmdir(base), 0);
}

/* A torn last frame (the agent was killed mid-write) is not adopted. */
static void test_spool_orphan_torn_frame(void **state)
{
	(void)state;
	char base[] = "/tmp/test_spool_XXXXXX";
	assert_non_null(mkdtemp(base));
	struct spool *s, *a;
	char err[512], seg[700];
	assert_int_equal(spool_open(&s, base, "board", 0x78, 1 << 20, 0, err, sizeof(err)), 0);
	const uint8_t hello[] = {1, 0};
	assert_int_equal(spool_set_meta(s, hello, sizeof(hello), "c"), 0);
	append_range(s, 1, 10);
	snprintf(seg, sizeof(seg), "%s/seg-00000000.spl", spool_path(s));
	char dir[600];
	snprintf(dir, sizeof(dir), "%s", spool_path(s));
	assert_int_equal(spool_close(s, true), 10);
	size_t len;
	uint8_t *f = make_frame(11, &len);
	FILE *fp = fopen(seg, "ab");
	assert_non_null(fp);
	assert_int_equal(fwrite(f, 1, len / 2, fp), len / 2);
	fclose(fp);
	free(f);
	assert_int_equal(spool_adopt(&a, dir, err, sizeof(err)), 0);
	assert_int_equal(spool_records(a), 10);
	assert_int_equal(spool_last_seq(a), 10);
	assert_int_equal(replay_check(a, 0, 1, 10), 10);
	spool_ack(a, 10);
	assert_int_equal(spool_close(a, true), 0);
	assert_int_equal(rmdir(base), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_spool_append_ack_replay_order),
		cmocka_unit_test(test_spool_cap_drops_oldest_and_counts),
		cmocka_unit_test(test_spool_frame_seq_parse),
		cmocka_unit_test(test_spool_open_fails_clearly),
		cmocka_unit_test(test_spool_orphan_adopted),
		cmocka_unit_test(test_spool_orphan_torn_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
