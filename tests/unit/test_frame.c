/* Frame codec and envelope decoding: round trips and every error path. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "frame.h"
#include "validate.h"
#include "validate_samples.h"

#define MAXF (256 * 1024)

static uint8_t *encode_counters(uint64_t seq, size_t rows, size_t *len)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Counters c = PROF__COUNTERS__INIT;
	uint32_t ids[2] = {1, 2};
	uint64_t *t = calloc(rows, sizeof(*t));
	uint64_t *v = calloc(rows * 2, sizeof(*v));
	for (size_t i = 0; i < rows; i++) {
		t[i] = 1000000 + i;
		v[2 * i] = i * 7;
		v[2 * i + 1] = i * 13;
	}
	c.n_event_ids = 2;
	c.event_ids = ids;
	c.n_t_ns = rows;
	c.t_ns = t;
	c.n_values = rows * 2;
	c.values = v;
	c.pid = 42;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	uint8_t *out = NULL;
	int rc = frame_encode(&env, MAXF, &out, len);
	free(t);
	free(v);
	return rc == 0 ? out : NULL;
}

static void test_frame_varint_roundtrip(void **state)
{
	uint32_t vals[] = {0, 1, 127, 128, 300, 16383, 16384, 1u << 21, 1u << 28, UINT32_MAX};
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		uint8_t b[8];
		size_t n = frame_put_varint(b, vals[i]);
		uint32_t v = 0;
		assert_int_equal(frame_get_varint(b, n, &v), (int)n);
		assert_int_equal(v, vals[i]);
		/* one byte short means "need more" */
		assert_int_equal(frame_get_varint(b, n - 1, &v), 0);
	}
}

static void test_frame_varint_rejects_overlong(void **state)
{
	uint8_t six[6] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
	uint32_t v;
	assert_int_equal(frame_get_varint(six, sizeof(six), &v), -EPROTO);
	uint8_t big[5] = {0xff, 0xff, 0xff, 0xff, 0x7f}; /* 2^35 - 1 */
	assert_int_equal(frame_get_varint(big, sizeof(big), &v), -EPROTO);
}

static void test_frame_roundtrip_byte_by_byte(void **state)
{
	size_t len;
	uint8_t *f = encode_counters(9, 3, &len);
	assert_non_null(f);
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	const uint8_t *p;
	size_t plen;
	for (size_t i = 0; i < len; i++) {
		assert_int_equal(frame_decoder_next(&d, &p, &plen), 0);
		assert_int_equal(frame_decoder_feed(&d, f + i, 1), 0);
	}
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 1);
	char err[128];
	Prof__Envelope *env = envelope_decode(p, plen, err, sizeof(err));
	assert_non_null(env);
	assert_int_equal(env->seq, 9);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_COUNTERS);
	assert_int_equal(env->counters->n_values, 6);
	assert_int_equal(env->counters->values[5], 26);
	assert_int_equal(env->counters->pid, 42);
	prof__envelope__free_unpacked(env, NULL);
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 0);
	assert_int_equal(frame_decoder_finish(&d), 0);
	frame_decoder_free(&d);
	free(f);
}

static void test_frame_many_frames_one_buffer(void **state)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	size_t total = 0;
	uint8_t *all = NULL;
	for (uint64_t s = 1; s <= 50; s++) {
		size_t len;
		uint8_t *f = encode_counters(s, 1 + s % 7, &len);
		all = realloc(all, total + len);
		memcpy(all + total, f, len);
		total += len;
		free(f);
	}
	/* feed in odd-sized chunks */
	for (size_t off = 0; off < total; off += 37)
		assert_int_equal(frame_decoder_feed(&d, all + off, total - off < 37 ? total - off : 37), 0);
	const uint8_t *p;
	size_t plen;
	uint64_t want = 1;
	int rc;
	while ((rc = frame_decoder_next(&d, &p, &plen)) == 1) {
		char err[128];
		Prof__Envelope *env = envelope_decode(p, plen, err, sizeof(err));
		assert_non_null(env);
		assert_int_equal(env->seq, want++);
		prof__envelope__free_unpacked(env, NULL);
	}
	assert_int_equal(rc, 0);
	assert_int_equal(want, 51);
	assert_int_equal(d.frames, 50);
	frame_decoder_free(&d);
	free(all);
}

/* Found by `make fuzz` (600 s): a frame larger than the initial buffer that is
 * complete while the same feed() still has bytes left used to leave no space
 * (frame_decoder_space returned 0 bytes forever). */
static void test_frame_feed_past_a_whole_frame(void **state)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	size_t total = 0;
	uint8_t *all = NULL;
	for (uint64_t s = 1; s <= 3; s++) {
		size_t len;
		uint8_t *f = encode_counters(s, s == 1 ? 700 : 3, &len);
		assert_non_null(f);
		all = realloc(all, total + len);
		memcpy(all + total, f, len);
		total += len;
		free(f);
	}
	assert_true(total > 4096 + 64);
	for (size_t off = 0; off < total; off += 64)
		assert_int_equal(frame_decoder_feed(&d, all + off, total - off < 64 ? total - off : 64), 0);
	const uint8_t *p;
	size_t plen;
	int n = 0;
	while (frame_decoder_next(&d, &p, &plen) == 1)
		n++;
	assert_int_equal(n, 3);
	assert_int_equal(frame_decoder_pending(&d), 0);
	frame_decoder_free(&d);
	free(all);
}

static void test_frame_oversized_rejected_before_allocation(void **state)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, 1024), 0);
	uint8_t hdr[5];
	size_t n = frame_put_varint(hdr, 1u << 30); /* 1 GiB announced */
	assert_int_equal(frame_decoder_feed(&d, hdr, n), 0);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), -EMSGSIZE);
	assert_non_null(strstr(d.err, "exceeds the maximum"));
	/* asking for space must not try to allocate the announced size */
	size_t avail;
	assert_non_null(frame_decoder_space(&d, &avail));
	assert_true(d.cap < 64 * 1024);
	frame_decoder_free(&d);
}

static void test_frame_encode_refuses_oversized(void **state)
{
	size_t len;
	uint8_t *f = encode_counters(1, 1000, &len);
	assert_non_null(f); /* fits MAXF */
	free(f);
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Error e = PROF__ERROR__INIT;
	char msg[600];
	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = 0;
	e.message = msg;
	env.body_case = PROF__ENVELOPE__BODY_ERROR;
	env.error = &e;
	uint8_t *out = NULL;
	assert_int_equal(frame_encode(&env, 100, &out, &len), -EMSGSIZE);
	assert_null(out);
}

static void test_frame_malformed_prefix(void **state)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	uint8_t junk[8] = {0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff};
	assert_int_equal(frame_decoder_feed(&d, junk, sizeof(junk)), 0);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), -EPROTO);
	assert_non_null(strstr(d.err, "malformed length prefix"));
	frame_decoder_free(&d);
}

static void test_frame_zero_length(void **state)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	uint8_t z = 0;
	assert_int_equal(frame_decoder_feed(&d, &z, 1), 0);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), -EBADMSG);
	frame_decoder_free(&d);
}

static void test_frame_truncated_at_eof(void **state)
{
	size_t len;
	uint8_t *f = encode_counters(3, 4, &len);
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	assert_int_equal(frame_decoder_feed(&d, f, len - 3), 0);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 0);
	assert_int_equal(frame_decoder_finish(&d), -EPIPE);
	assert_non_null(strstr(d.err, "truncated frame"));
	frame_decoder_free(&d);
	/* ending inside the prefix is reported too */
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	uint8_t half = 0x80;
	assert_int_equal(frame_decoder_feed(&d, &half, 1), 0);
	assert_int_equal(frame_decoder_finish(&d), -EPIPE);
	assert_non_null(strstr(d.err, "length prefix"));
	frame_decoder_free(&d);
	free(f);
}

static void test_frame_garbage_payload(void **state)
{
	uint8_t junk[] = {0x0a, 0xff, 0xff, 0x01, 0x02}; /* field 1 LEN with absurd length */
	char err[128];
	assert_null(envelope_decode(junk, sizeof(junk), err, sizeof(err)));
	assert_non_null(strstr(err, "not a valid protobuf"));
}

static void test_frame_validate_counters_shape(void **state)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Counters c = PROF__COUNTERS__INIT;
	uint32_t ids[2] = {1, 2};
	uint64_t t[2] = {1, 2};
	uint64_t v[3] = {1, 2, 3};
	c.n_event_ids = 2;
	c.event_ids = ids;
	c.n_t_ns = 2;
	c.t_ns = t;
	c.n_values = 3; /* should be 4 */
	c.values = v;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	char err[128];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "3 values for 2 rows x 2 columns"));
	env.seq = 0;
	c.n_values = 4;
	uint64_t v4[4] = {1, 2, 3, 4};
	c.values = v4;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "seq 0"));
	env.seq = 5;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	uint32_t pct[4] = {100, 100, 101, 50};
	c.n_running_pct = 4;
	c.running_pct = pct;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
}

/* The values the collector sums are bounded per record (validate_samples.h), each limit named
 * in the error: counts, lost, the interval; a stack's error gives both frame counts. */
static void test_frame_validate_samples_limits(void **state)
{
	(void)state;
	Prof__Samples sm = PROF__SAMPLES__INIT;
	int32_t pid[2] = {1, 1}, tid[2] = {1, 2};
	uint64_t ip[2] = {0x400000, 0x400010}, count[2] = {3, VALIDATE_MAX_SAMPLE_COUNT};
	uint32_t stack[2] = {0, 0};
	sm.backend = 2;
	sm.event_id = 1;
	sm.interval_ns = VALIDATE_MAX_INTERVAL_NS;
	sm.lost = VALIDATE_MAX_SAMPLE_LOST;
	sm.n_pid = sm.n_tid = sm.n_ip = sm.n_stack_id = sm.n_count = 2;
	sm.pid = pid;
	sm.tid = tid;
	sm.ip = ip;
	sm.stack_id = stack;
	sm.count = count;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &sm;
	char err[200];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0); /* every value at its limit */
	count[1] = 1ull << 63;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "VALIDATE_MAX_SAMPLE_COUNT"));
	count[1] = 1;
	sm.lost = INT64_MAX; /* two of these made SQLite's SUM(lost) fail every query of the store */
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "VALIDATE_MAX_SAMPLE_LOST"));
	sm.lost = 0;
	sm.interval_ns = UINT64_MAX;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "VALIDATE_MAX_INTERVAL_NS"));
	sm.interval_ns = 1000000000;
	uint64_t uips[1] = {0x400000}, kips[VALIDATE_MAX_STACK_DEPTH + 1] = {0};
	Prof__Stack st = PROF__STACK__INIT, *stp[1] = {&st};
	st.id = 1;
	st.n_ips = 1;
	st.ips = uips;
	st.n_kernel_ips = VALIDATE_MAX_STACK_DEPTH + 1;
	st.kernel_ips = kips;
	sm.n_new_stacks = 1;
	sm.new_stacks = stp;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	fprintf(stderr, "# %s\n", err);
	assert_non_null(strstr(err, "1 user and 128 kernel frames"));
}

static void test_frame_validate_hello(void **state)
{
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	Prof__Hello h = PROF__HELLO__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	char err[128];
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL); /* empty agent id */
	h.agent_id = "board-1";
	h.schema_version = PROF_SCHEMA_VERSION;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
	env.seq = 3;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
	env.seq = 0;
	char longs[VALIDATE_MAX_STRING + 2];
	memset(longs, 'a', sizeof(longs) - 1);
	longs[sizeof(longs) - 1] = 0;
	h.board = longs;
	assert_int_equal(envelope_validate(&env, err, sizeof(err)), -EINVAL);
}

static void test_frame_empty_envelope_rejected(void **state)
{
	/* A valid protobuf with no body (e.g. a newer record type we do not know). */
	uint8_t only_seq[] = {0x08, 0x05};
	char err[128];
	assert_null(envelope_decode(only_seq, sizeof(only_seq), err, sizeof(err)));
	assert_non_null(strstr(err, "without a body"));
}

static void test_frame_buffer_shrinks_to_need(void **state)
{
	/* A decoder grows for a big frame only as far as that frame needs. */
	size_t len;
	uint8_t *f = encode_counters(1, 8000, &len);
	assert_non_null(f);
	assert_true(len > 16 * 4096);
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	assert_int_equal(frame_decoder_feed(&d, f, len), 0);
	assert_true(d.cap <= len + 4096);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 1);
	/* once idle again, the large buffer is given back */
	size_t avail;
	assert_non_null(frame_decoder_space(&d, &avail));
	if (len > 16 * 4096)
		assert_int_equal(d.cap, 4096);
	frame_decoder_free(&d);
	free(f);
}

static void test_frame_decoder_want_before_growth(void **state)
{
	/* A caller learns how large the buffer must become before any allocation, and a
	 * decoder that grew for a frame of a few KiB gives the memory back once idle. */
	(void)state;
	size_t len;
	uint8_t *f = encode_counters(1, 600, &len);
	assert_non_null(f);
	assert_true(len > FRAME_INITIAL_CAP && len < 16 * FRAME_INITIAL_CAP);
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, MAXF), 0);
	assert_int_equal(frame_decoder_want(&d), FRAME_INITIAL_CAP);
	assert_int_equal(frame_decoder_feed(&d, f, 3), 0); /* the length prefix */
	assert_int_equal(frame_decoder_want(&d), len);
	assert_int_equal(d.cap, FRAME_INITIAL_CAP); /* nothing allocated yet */
	assert_int_equal(frame_decoder_feed(&d, f + 3, len - 3), 0);
	assert_int_equal(d.cap, len);
	const uint8_t *p;
	size_t plen;
	assert_int_equal(frame_decoder_next(&d, &p, &plen), 1);
	size_t avail;
	assert_non_null(frame_decoder_space(&d, &avail));
	assert_int_equal(d.cap, FRAME_INITIAL_CAP);
	frame_decoder_free(&d);
	free(f);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_frame_varint_roundtrip),
	    cmocka_unit_test(test_frame_varint_rejects_overlong),
	    cmocka_unit_test(test_frame_roundtrip_byte_by_byte),
	    cmocka_unit_test(test_frame_many_frames_one_buffer),
	    cmocka_unit_test(test_frame_feed_past_a_whole_frame),
	    cmocka_unit_test(test_frame_oversized_rejected_before_allocation),
	    cmocka_unit_test(test_frame_encode_refuses_oversized),
	    cmocka_unit_test(test_frame_malformed_prefix),
	    cmocka_unit_test(test_frame_zero_length),
	    cmocka_unit_test(test_frame_truncated_at_eof),
	    cmocka_unit_test(test_frame_garbage_payload),
	    cmocka_unit_test(test_frame_validate_counters_shape),
	    cmocka_unit_test(test_frame_validate_samples_limits),
	    cmocka_unit_test(test_frame_validate_hello),
	    cmocka_unit_test(test_frame_empty_envelope_rejected),
	    cmocka_unit_test(test_frame_buffer_shrinks_to_need),
	    cmocka_unit_test(test_frame_decoder_want_before_growth),
	};
	return cmocka_run_group_tests_name("frame", tests, NULL, NULL);
}
