/* agent/trace/import.c: native traces (binary, text) fed in arbitrary chunks
 * are cut into pieces whose TraceWindow records decode back to the same
 * instructions, with the run metadata (trace_pos, share, represented). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "generated/config.h"

#ifdef CONFIG_AGENT_TRACE_IMPORT
#include "edag/edag.h"
#include "trace/encode.h"
#include "trace/import.h"
#include "trace_gen.h"
#include "validate_trace.h"

#define MAXP 64

struct got {
	struct edag_insn *ins; /* decoded back, in order */
	size_t n, cap;
	size_t npieces;
	struct trace_encode_info info[MAXP];
	size_t len[MAXP];
	int32_t tid[MAXP];
};

static int collect(void *ctx, const struct trace_window *w, const struct trace_encode_info *info)
{
	struct got *g = ctx;
	Prof__TraceWindow tw;
	assert_int_equal(trace_encode_window(w, info, &tw), 0);
	char err[200];
	if (validate_trace_window(&tw, err, sizeof(err)) < 0)
		fail_msg("piece %zu does not validate: %s", g->npieces, err);
	assert_int_equal(tw.trace_pos, info->trace_pos);
	struct edag_window_iter it;
	edag_window_iter_init(&it, &tw);
	int rc;
	struct edag_insn in;
	while ((rc = edag_window_next(&it, &in)) > 0) {
		assert_true(g->n < g->cap);
		g->ins[g->n++] = in;
	}
	assert_int_equal(rc, 0);
	trace_encode_free(&tw);
	assert_true(g->npieces < MAXP);
	g->info[g->npieces] = *info;
	g->tid[g->npieces] = w->tid;
	g->len[g->npieces++] = w->n;
	return 0;
}

static void same_insn(const struct edag_insn *a, const struct edag_insn *b, size_t i)
{
	if (a->pc != b->pc || a->cls != b->cls || a->mem != b->mem || a->nread != b->nread || a->nwrite != b->nwrite ||
	    memcmp(a->rd, b->rd, a->nread) || memcmp(a->wr, b->wr, a->nwrite) ||
	    (a->mem && (a->addr != b->addr || a->size != b->size)))
		fail_msg("instruction %zu differs after the round trip", i);
}

static void test_trace_import_binary_chunks_round_trip(void **state)
{
	enum { N = 10000, PIECE = 777 };
	struct edag_insn *ins = calloc(N, sizeof(*ins));
	struct got g = {.ins = calloc(N, sizeof(*ins)), .cap = N};
	assert_non_null(ins);
	assert_non_null(g.ins);
	trace_gen(ins, N, 7);
	/* the binary stream in memory */
	size_t cap = EDAG_BIN_HEADER + (size_t)N * EDAG_BIN_MAX_RECORD, len = EDAG_BIN_HEADER;
	uint8_t *buf = malloc(cap);
	assert_non_null(buf);
	edag_bin_header_encode(buf, EDAG_ARCH_RISCV64);
	for (size_t i = 0; i < N; i++)
		len += edag_bin_encode(&ins[i], buf + len);
	struct trace_import *ti;
	assert_int_equal(trace_import_new(&ti, PIECE, 0, collect, &g), 0);
	char err[256];
	size_t off = 0, step = 1;
	while (off < len) { /* chunks of 1, 2, ... 97 bytes: records and the header split everywhere */
		size_t k = step < len - off ? step : len - off;
		if (trace_import_feed(ti, buf + off, k, err, sizeof(err)) != 0)
			fail_msg("feed at byte %zu: %s", off, err);
		off += k;
		step = step % 97 + 1;
	}
	assert_int_equal(trace_import_finish(ti, err, sizeof(err)), 0);
	assert_string_equal(trace_import_format(ti), "binary");
	assert_int_equal(trace_import_arch(ti), EDAG_ARCH_RISCV64);
	assert_int_equal(trace_import_stats(ti)->insns, N);
	assert_int_equal(g.n, N);
	for (size_t i = 0; i < N; i++)
		same_insn(&ins[i], &g.ins[i], i);
	assert_int_equal(g.npieces, (N + PIECE - 1) / PIECE);
	uint64_t pos = 1;
	for (size_t p = 0; p < g.npieces; p++) {
		assert_int_equal(g.info[p].trace_pos, pos);
		assert_int_equal(g.info[p].represented_insns, g.len[p]); /* a full trace stands for itself */
		assert_true(g.info[p].sampled_share == 1.0);
		assert_int_equal(g.info[p].arch, EDAG_ARCH_RISCV64);
		pos += g.len[p];
	}
	trace_import_free(ti);
	free(buf);
	free(ins);
	free(g.ins);
}

static void test_trace_import_text_window_directives_start_runs(void **state)
{
	static const char text[] = "# from a test\n"
				   "arch riscv64\n"
				   "0x100 load r=a0 w=a1 m=0x2000/8\n"
				   "0x104 int r=a1 w=a2\n"
				   "window index=3 pid=10 tid=12 t_ns=5000 share=0.5 represented=1000\n"
				   "0x200 store r=a2,sp m=0x3000/4\n"
				   "0x204 int+rw r=#7 m=0x20/8\n"
				   "0x208 branch r=a0\n"
				   "0x20c float r=fa0 w=fa1"; /* no newline at the end */
	struct got g = {.ins = calloc(16, sizeof(struct edag_insn)), .cap = 16};
	struct trace_import *ti;
	assert_int_equal(trace_import_new(&ti, 2, 0, collect, &g), 0);
	char err[256];
	for (size_t i = 0; i < sizeof(text) - 1; i += 5) /* 5-byte chunks */
		assert_int_equal(trace_import_feed(ti, (const uint8_t *)text + i,
						   sizeof(text) - 1 - i < 5 ? sizeof(text) - 1 - i : 5, err, sizeof(err)),
				 0);
	assert_int_equal(trace_import_finish(ti, err, sizeof(err)), 0);
	assert_string_equal(trace_import_format(ti), "text");
	assert_int_equal(g.n, 6);
	assert_int_equal(trace_import_stats(ti)->runs, 2);
	assert_int_equal(g.npieces, 3);
	/* run 1: the two instructions before the directive, a full trace */
	assert_int_equal(g.info[0].trace_pos, 1);
	assert_int_equal(g.info[0].represented_insns, 2);
	assert_true(g.info[0].sampled_share == 1.0);
	/* run 2: the directive's metadata; represented on its first piece only */
	assert_int_equal(g.info[1].trace_pos, 1);
	assert_int_equal(g.info[2].trace_pos, 3);
	assert_int_equal(g.info[1].pid, 10);
	assert_int_equal(g.tid[1], 12);
	assert_int_equal(g.tid[2], 12);
	assert_int_equal(g.info[1].t_ns, 5000);
	assert_true(g.info[1].sampled_share == 0.5 && g.info[2].sampled_share == 0.5);
	assert_int_equal(g.info[1].represented_insns, 1000);
	assert_int_equal(g.info[2].represented_insns, 0);
	assert_int_equal(g.ins[3].mem, EDAG_MEM_READ | EDAG_MEM_WRITE);
	assert_int_equal(g.ins[3].addr, 0x20);
	assert_int_equal(g.ins[5].cls, EDAG_FLOAT);
	trace_import_free(ti);
	free(g.ins);
}

static int feed_all(const char *s, unsigned default_arch, char *err, size_t errlen)
{
	struct got g = {.ins = calloc(16, sizeof(struct edag_insn)), .cap = 16};
	struct trace_import *ti;
	assert_int_equal(trace_import_new(&ti, 4, default_arch, collect, &g), 0);
	int rc = trace_import_feed(ti, (const uint8_t *)s, strlen(s), err, errlen);
	if (rc == 0)
		rc = trace_import_finish(ti, err, errlen);
	trace_import_free(ti);
	free(g.ins);
	return rc;
}

static void test_trace_import_rejects_malformed_input(void **state)
{
	char err[256];
	/* an unknown class, with its line number */
	assert_int_equal(feed_all("arch aarch64\n0x10 jump r=x1\n", 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "line 2"));
	/* an instruction before any arch line, without --arch; accepted with it */
	assert_int_equal(feed_all("0x10 int r=a0 w=a1\n", 0, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "--arch"));
	assert_int_equal(feed_all("0x10 int r=a0 w=a1\n", EDAG_ARCH_RISCV64, err, sizeof(err)), 0);
	/* a binary trace cut inside a record */
	uint8_t buf[EDAG_BIN_HEADER + EDAG_BIN_MAX_RECORD];
	edag_bin_header_encode(buf, EDAG_ARCH_AARCH64);
	struct edag_insn in = {.pc = 0x400000, .cls = EDAG_LOAD, .mem = EDAG_MEM_READ, .addr = 8, .size = 8, .nread = 1};
	in.rd[0] = 3;
	size_t n = EDAG_BIN_HEADER + edag_bin_encode(&in, buf + EDAG_BIN_HEADER);
	struct got g = {.ins = calloc(4, sizeof(struct edag_insn)), .cap = 4};
	struct trace_import *ti;
	assert_int_equal(trace_import_new(&ti, 4, 0, collect, &g), 0);
	assert_int_equal(trace_import_feed(ti, buf, n - 3, err, sizeof(err)), 0);
	assert_int_equal(trace_import_finish(ti, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "inside a record"));
	trace_import_free(ti);
	free(g.ins);
	/* a bad binary record (class 7) */
	buf[EDAG_BIN_HEADER + 8] = 7 | 1 << 5;
	g = (struct got){.ins = calloc(4, sizeof(struct edag_insn)), .cap = 4};
	assert_int_equal(trace_import_new(&ti, 4, 0, collect, &g), 0);
	assert_int_equal(trace_import_feed(ti, buf, n, err, sizeof(err)), -EINVAL);
	assert_non_null(strstr(err, "malformed"));
	trace_import_free(ti);
	free(g.ins);
	/* nothing at all */
	assert_int_equal(feed_all("", 0, err, sizeof(err)), -EINVAL);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trace_import_binary_chunks_round_trip),
		cmocka_unit_test(test_trace_import_text_window_directives_start_runs),
		cmocka_unit_test(test_trace_import_rejects_malformed_input),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#else
static void test_trace_import_not_configured(void **state)
{
	skip();
}

int main(void)
{
	const struct CMUnitTest tests[] = {cmocka_unit_test(test_trace_import_not_configured)};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
#endif
