/* The query model's parsers (collector/query/query_opts.c) and the packed
 * sample keys (collector/store/store_blocks.c): durations, times in each
 * accepted form, lists, groupings, and what is refused. */
#include <errno.h>
#include <getopt.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include <cmocka.h>

#include "query/query.h"
#include "store/store_blocks.h"

#define S 1000000000LL

static void test_query_durations(void **state)
{
	(void)state;
	int64_t ns;
	assert_int_equal(query_parse_duration("10m", &ns), 0);
	assert_int_equal(ns, 600 * S);
	assert_int_equal(query_parse_duration("2h", &ns), 0);
	assert_int_equal(ns, 7200 * S);
	assert_int_equal(query_parse_duration("7d", &ns), 0);
	assert_int_equal(ns, 7 * 86400 * S);
	assert_int_equal(query_parse_duration("1w", &ns), 0);
	assert_int_equal(ns, 604800 * S);
	assert_int_equal(query_parse_duration("1h30m", &ns), 0);
	assert_int_equal(ns, 5400 * S);
	assert_int_equal(query_parse_duration("250ms", &ns), 0);
	assert_int_equal(ns, 250000000);
	const char *bad[] = {"", "10", "m", "10x", "-5m", "0s", "1.5h", "99999999999999999999d"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(query_parse_duration(bad[i], &ns) < 0);
}

static void test_query_times(void **state)
{
	(void)state;
	int64_t now = 1764783000 * S, t; /* 2025-12-03T17:30:00Z */
	assert_int_equal(query_parse_time("now", now, &t), 0); /* --until now (issue 39) */
	assert_true(t == now);
	assert_int_equal(query_parse_time("10m", now, &t), 0);
	assert_int_equal(t, now - 600 * S);
	assert_int_equal(query_parse_time("1764783000", now, &t), 0);
	assert_int_equal(t, now);
	assert_int_equal(query_parse_time("1764783000.5", now, &t), 0);
	assert_int_equal(t, now + S / 2);
	assert_int_equal(query_parse_time("2025-12-03T17:30:00Z", now, &t), 0);
	assert_int_equal(t, now);
	assert_int_equal(query_parse_time("2025-12-03T17:30:00.250Z", now, &t), 0);
	assert_int_equal(t, now + 250000000);
	assert_int_equal(query_parse_time("2025-12-03T19:30:00+02:00", now, &t), 0);
	assert_int_equal(t, now);
	assert_int_equal(query_parse_time("2025-12-03 12:30-0500", now, &t), 0);
	assert_int_equal(t, now);
	assert_int_equal(query_parse_time("2025-12-03", now, &t), 0);
	assert_int_equal(t, now - (17 * 3600 + 1800) * S);
	/* unix seconds are decimal digits with an optional fraction: strtod alone took hex and exponents */
	const char *bad[] = {"",
			     "yesterday",
			     "2025-13-01",
			     "2025-12-03T25:00",
			     "2025-12-03T17:30:00Q",
			     "-5",
			     "12abc",
			     "0x10",
			     "1e9",
			     "1764783000e0",
			     " 5",
			     "+5",
			     "5.",
			     ".5",
			     "1.5.2",
			     "inf",
			     "nan"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		assert_true(query_parse_time(bad[i], now, &t) < 0);
}

static void test_query_options(void **state)
{
	(void)state;
	struct query_opts o;
	char err[256];
	query_opts_init(&o, 1000 * S);
	assert_int_equal(query_opt(&o, QUERY_OPT_AGENT, "a1,a2", err, sizeof(err)), 1);
	assert_int_equal(query_opt(&o, QUERY_OPT_AGENT, "a3", err, sizeof(err)), 1);
	assert_int_equal(o.f.nagents, 3);
	assert_string_equal(o.f.agents[1], "a2");
	assert_int_equal(query_opt(&o, QUERY_OPT_PID, "12,34", err, sizeof(err)), 1);
	assert_int_equal(o.f.npids, 2);
	assert_int_equal(o.f.pids[1], 34);
	assert_int_equal(query_opt(&o, QUERY_OPT_SESSION, "3", err, sizeof(err)), 1);
	assert_int_equal(o.f.sessions[0], 3);
	assert_int_equal(query_opt(&o, QUERY_OPT_BY, "thread", err, sizeof(err)), 1);
	assert_int_equal(o.by, QUERY_BY_THREAD);
	assert_int_equal(query_opt(&o, QUERY_OPT_SINCE, "100s", err, sizeof(err)), 1);
	assert_int_equal(o.f.since_ns, 900 * S);
	assert_int_equal(query_opt(&o, 'x', "whatever", err, sizeof(err)), 0); /* not ours */
	assert_int_equal(query_opt(&o, QUERY_OPT_PID, "0", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--pid"));
	/* 2^63 was clamped to 2^63-1 without a word; signs and spaces are not ids */
	assert_int_equal(query_opt(&o, QUERY_OPT_SESSION, "9223372036854775808", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--session"));
	assert_int_equal(query_opt(&o, QUERY_OPT_SESSION, "+4", err, sizeof(err)), -EINVAL);
	assert_int_equal(query_opt(&o, QUERY_OPT_SESSION, "9223372036854775807", err, sizeof(err)), 1);
	assert_int_equal(query_opt(&o, QUERY_OPT_PID, "2147483648", err, sizeof(err)), -EINVAL);
	assert_int_equal(query_opt(&o, QUERY_OPT_SINCE, "0x10", err, sizeof(err)), -EINVAL);
	assert_int_equal(query_opt(&o, QUERY_OPT_BY, "color", err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--by wants"));
	assert_int_equal(query_opt(&o, QUERY_OPT_COMM, ",", err, sizeof(err)), -EINVAL);
	assert_int_equal(query_opt(&o, QUERY_OPT_UNTIL, "200s", err, sizeof(err)), 1);
	assert_int_equal(query_opts_check(&o, err, sizeof(err)), -EINVAL); /* until before since */
	assert_true(query_filter_any(&o.f));
	query_opts_free(&o);
	for (int g = QUERY_BY_FUNCTION; g <= QUERY_BY_STACK; g++) {
		enum query_group back;
		assert_int_equal(query_parse_group(query_group_name((enum query_group)g), &back), 0);
		assert_int_equal(back, g);
	}
}

static void test_query_blocks_roundtrip(void **state)
{
	(void)state;
	struct store_block_key in[] = {{.pid = 1, .tid = 1, .ip = 0x400123, .stack_id = 7, .count = 3},
				       {.pid = 2147483647, .tid = 5, .kip = 0xffffffff81000000ull, .count = 1},
				       {.pid = 0, .tid = 0, .ip = UINT64_MAX, .kip = 0, .stack_id = UINT32_MAX,
					.count = UINT64_MAX}};
	uint8_t buf[3 * STORE_BLOCK_MAX_KEY_BYTES];
	size_t len = 0;
	for (size_t i = 0; i < 3; i++)
		len += store_block_put(buf + len, &in[i]);
	size_t off = 0;
	for (size_t i = 0; i < 3; i++) {
		struct store_block_key k;
		size_t n = store_block_get(buf + off, len - off, &k);
		assert_true(n > 0);
		off += n;
		assert_int_equal(k.pid, in[i].pid);
		assert_int_equal(k.tid, in[i].tid);
		assert_true(k.ip == in[i].ip && k.kip == in[i].kip && k.stack_id == in[i].stack_id &&
			    k.count == in[i].count);
	}
	assert_int_equal(off, len);
	struct store_block_key k;
	assert_int_equal(store_block_get(buf, 3, &k), 0); /* cut */
	uint8_t endless[12];
	memset(endless, 0xff, sizeof(endless));
	assert_int_equal(store_block_get(endless, sizeof(endless), &k), 0); /* varint over 10 bytes */
}

/* Stored blocks (#40): a record's keys compress into one zstd frame that reads back to the same varints;
 * a block of an older store (raw varints) and a few keys that zstd would not shrink are read as they are;
 * a frame claiming more than STORE_BLOCK_MAX_RAW, or a damaged one, is not decompressed. */
static void test_query_blocks_packed(void **state)
{
	(void)state;
	enum { NK = 1000 };
	uint8_t *raw = malloc(NK * STORE_BLOCK_MAX_KEY_BYTES);
	assert_non_null(raw);
	size_t len = 0;
	for (int i = 0; i < NK; i++) { /* the shape of a record: few tasks, nearby ips, small counts */
		struct store_block_key k = {.pid = 100 + i % 3,
					    .tid = 100 + i % 7,
					    .ip = 0x400000u + 16u * (unsigned)(i % 50),
					    .stack_id = (uint32_t)(i % 40),
					    .count = 1 + (uint64_t)(i % 4)};
		len += store_block_put(raw + len, &k);
	}
	uint8_t *z, *owned;
	size_t zlen, got;
	assert_int_equal(store_block_pack(raw, len, &z, &zlen), 0);
	assert_non_null(z);
	assert_true(zlen * 3 < len); /* at least 3x smaller on this shape */
	const uint8_t *p = store_block_unpack(z, zlen, &got, &owned);
	assert_non_null(owned);
	assert_ptr_equal(p, owned);
	assert_int_equal(got, len);
	assert_memory_equal(p, raw, len);
	free(owned);

	/* an older store's block: the varints themselves */
	p = store_block_unpack(raw, len, &got, &owned);
	assert_ptr_equal(p, raw);
	assert_null(owned);
	assert_int_equal(got, len);

	/* one key: not worth a frame, stored raw */
	uint8_t *z1;
	size_t z1len;
	assert_int_equal(store_block_pack(raw, 7, &z1, &z1len), 0);
	assert_null(z1);

	/* damaged frame (a byte of its payload changed, then cut): read as varints, not decompressed */
	z[zlen - 1] ^= 0xff;
	p = store_block_unpack(z, zlen - 1, &got, &owned);
	assert_ptr_equal(p, z);
	assert_null(owned);
	assert_int_equal(got, zlen - 1);

	/* a frame that claims more than STORE_BLOCK_MAX_RAW: not decompressed */
	size_t big = (size_t)STORE_BLOCK_MAX_RAW + 1;
	uint8_t *zeros = calloc(1, big), *zb = malloc(ZSTD_compressBound(big));
	assert_true(zeros && zb);
	size_t zblen = ZSTD_compress(zb, ZSTD_compressBound(big), zeros, big, 1);
	assert_false(ZSTD_isError(zblen));
	p = store_block_unpack(zb, zblen, &got, &owned);
	assert_ptr_equal(p, zb);
	assert_null(owned);
	free(zeros);
	free(zb);
	free(z);
	free(raw);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_query_durations),	cmocka_unit_test(test_query_times),
	    cmocka_unit_test(test_query_options),	cmocka_unit_test(test_query_blocks_roundtrip),
	    cmocka_unit_test(test_query_blocks_packed),
	};
	return cmocka_run_group_tests_name("query", tests, NULL, NULL);
}
