/* Counters/Heartbeat/Hello records: interning, delta encoding, re-declaring. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "events.h"
#include "frame.h"
#include "record.h"
#include "spool.h"

#define MAXF (1024u * 1024u)

static Prof__Envelope *decode_frame(const uint8_t *f, size_t len)
{
	uint32_t body;
	int h = frame_get_varint(f, len, &body);
	assert_true(h > 0);
	assert_int_equal((size_t)h + body, len);
	char err[200];
	Prof__Envelope *env = envelope_decode(f + h, body, err, sizeof(err));
	if (!env)
		fail_msg("decode: %s", err);
	return env;
}

static void init_rb(struct record_builder *rb, uint64_t base)
{
	struct event_desc ev[EVENTS_MAX];
	size_t n;
	char err[512];
	assert_int_equal(events_parse("task-clock,page-faults,r1b", ev, EVENTS_MAX, &n, err, sizeof(err)), 0);
	record_builder_init(rb, base, 4242, ev, n, MAXF);
}

static void test_record_interning_first_use_only(void **state)
{
	(void)state;
	struct record_builder rb;
	init_rb(&rb, 1000);
	uint64_t t = 2000, vals[3] = {1, 2, 3};
	uint8_t *f;
	size_t len;
	assert_int_equal(record_counters_frame(&rb, 1, &t, 1, vals, NULL, &f, &len), 0);
	Prof__Envelope *env = decode_frame(f, len);
	free(f);
	assert_int_equal(env->seq, 1);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_COUNTERS);
	Prof__Counters *c = env->counters;
	assert_int_equal(c->n_new_events, 3);
	assert_int_equal(c->new_events[0]->id, 1);
	assert_string_equal(c->new_events[0]->name, "task-clock");
	assert_string_equal(c->new_events[0]->unit, "ns");
	assert_string_equal(c->new_events[2]->name, "r1b");
	assert_int_equal(c->new_events[2]->config, 0x1b);
	assert_int_equal(c->n_event_ids, 3);
	assert_int_equal(c->event_ids[2], 3);
	assert_int_equal(c->pid, 4242);
	assert_int_equal(c->n_running_pct, 0); /* all 100 % */
	prof__envelope__free_unpacked(env, NULL);
	size_t first_len = len;

	t = 3000;
	assert_int_equal(record_counters_frame(&rb, 2, &t, 1, vals, NULL, &f, &len), 0);
	env = decode_frame(f, len);
	free(f);
	assert_int_equal(env->counters->n_new_events, 0); /* ids only from now on */
	assert_int_equal(env->counters->n_event_ids, 3);
	assert_true(len < first_len);
	prof__envelope__free_unpacked(env, NULL);
}

static void test_record_delta_encoding_decodes_back(void **state)
{
	(void)state;
	struct record_builder rb;
	const uint64_t base = 5000000000ull;
	init_rb(&rb, base);
	uint64_t t[4] = {base + 1000000000ull, base + 2000000123ull, base + 3000000000ull, base + 3500000000ull};
	uint64_t vals[12];
	uint32_t pct[12];
	for (int i = 0; i < 12; i++) {
		vals[i] = (uint64_t)i * 1000 + 7;
		pct[i] = i == 5 ? 50 : 100;
	}
	uint8_t *f;
	size_t len;
	assert_int_equal(record_counters_frame(&rb, 9, t, 4, vals, pct, &f, &len), 0);
	Prof__Envelope *env = decode_frame(f, len);
	free(f);
	Prof__Counters *c = env->counters;
	assert_int_equal(c->n_t_ns, 4);
	assert_int_equal(c->t_ns[0], 1000000000ull); /* relative to base_ns */
	assert_int_equal(c->t_ns[1], 1000000123ull); /* relative to the previous row */
	uint64_t abs = base;
	for (size_t r = 0; r < 4; r++) {
		abs += c->t_ns[r];
		assert_true(abs == t[r]);
	}
	assert_int_equal(c->n_values, 12);
	for (int i = 0; i < 12; i++)
		assert_true(c->values[i] == vals[i]);
	assert_int_equal(c->n_running_pct, 12);
	assert_int_equal(c->running_pct[5], 50);
	prof__envelope__free_unpacked(env, NULL);

	/* Heartbeat: relative to base_ns too. */
	assert_int_equal(record_heartbeat_frame(&rb, 10, base + 42, 3, 4096, &f, &len), 0);
	env = decode_frame(f, len);
	free(f);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_HEARTBEAT);
	assert_int_equal(env->heartbeat->t_ns, 42);
	assert_int_equal(env->heartbeat->spool_dropped, 3);
	assert_int_equal(env->heartbeat->spool_bytes, 4096);
	prof__envelope__free_unpacked(env, NULL);
}

static void test_record_redeclare_after_drop(void **state)
{
	(void)state;
	struct record_builder rb;
	init_rb(&rb, 0);
	char dir[] = "/tmp/test_record_XXXXXX";
	assert_non_null(mkdtemp(dir));
	struct spool *sp;
	char err[256];
	/* A tiny cap and tiny segments: the spool must drop after a few records. */
	assert_int_equal(spool_open(&sp, dir, "rec", 1, 300, 100, err, sizeof(err)), 0);
	uint64_t vals[3] = {1, 2, 3};
	int redeclared_at = -1;
	for (uint64_t seq = 1; seq <= 20; seq++) {
		uint64_t t = seq * 1000;
		uint8_t *f;
		size_t len;
		assert_int_equal(record_counters_frame(&rb, seq, &t, 1, vals, NULL, &f, &len), 0);
		if (spool_would_drop(sp, len)) {
			/* What the agent does: this record re-declares the events. */
			free(f);
			record_builder_redeclare(&rb);
			assert_int_equal(record_counters_frame(&rb, seq, &t, 1, vals, NULL, &f, &len), 0);
			if (redeclared_at < 0)
				redeclared_at = (int)seq;
		}
		uint64_t dropped = spool_dropped(sp);
		assert_int_equal(spool_append(sp, seq, f, len), 0);
		Prof__Envelope *env = decode_frame(f, len);
		free(f);
		if (seq == 1 || (spool_dropped(sp) > dropped))
			assert_int_equal(env->counters->n_new_events, 3);
		else
			assert_int_equal(env->counters->n_new_events, 0);
		prof__envelope__free_unpacked(env, NULL);
	}
	assert_true(redeclared_at > 1);
	assert_true(spool_dropped(sp) > 0);
	/* The oldest record still in the spool declares every event. */
	struct spool_iter it;
	spool_iter_init(&it, sp, 0);
	const uint8_t *f;
	size_t len;
	uint64_t seq;
	assert_int_equal(spool_iter_next(&it, &f, &len, &seq), 1);
	spool_iter_free(&it);
	spool_ack(sp, 100);
	assert_int_equal(spool_close(sp, true), 0);
	assert_int_equal(rmdir(dir), 0);
}

static void test_record_hello_frame(void **state)
{
	(void)state;
	Prof__Hello h;
	prof__hello__init(&h);
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = "a1";
	h.boot_id = 77;
	uint8_t *f;
	size_t len;
	assert_int_equal(record_hello_frame(&h, MAXF, &f, &len), 0);
	Prof__Envelope *env = decode_frame(f, len);
	free(f);
	assert_int_equal(env->seq, 0);
	assert_int_equal(env->body_case, PROF__ENVELOPE__BODY_HELLO);
	assert_string_equal(env->hello->agent_id, "a1");
	assert_int_equal(env->hello->boot_id, 77);
	prof__envelope__free_unpacked(env, NULL);
	/* Over the frame limit: refused before anything is sent. */
	assert_int_equal(record_hello_frame(&h, 4, &f, &len), -EMSGSIZE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_record_interning_first_use_only),
		cmocka_unit_test(test_record_delta_encoding_decodes_back),
		cmocka_unit_test(test_record_redeclare_after_drop),
		cmocka_unit_test(test_record_hello_frame),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
