/* The eDAG around the collector: TraceWindow records through the store and
 * back (metrics equal those of the in-memory trace), and `collector edag`
 * on trace files written by the test (native text, native binary, EDAN) and
 * on a store. */
#include <errno.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "edag/edag.h"
#include "log.h"
#include "store/store.h"
#include "store/store_trace.h"
#include "testproc.h"
#include "validate.h"

/* A small loop: sum += a[i] over n elements, with the pointer chase of a
 * linked list on every 4th iteration (memory depth grows). */
static size_t make_trace(struct edag_insn *ins, size_t n_iter)
{
	size_t n = 0;
	for (size_t i = 0; i < n_iter; i++) {
		struct edag_insn *in = &ins[n++];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1000;
		in->cls = EDAG_LOAD;
		in->mem = EDAG_MEM_READ;
		in->addr = 0x100000 + 8 * i;
		in->size = 8;
		in->rd[in->nread++] = 5; /* base */
		in->wr[in->nwrite++] = 6;
		in = &ins[n++];
		memset(in, 0, sizeof(*in));
		in->pc = 0x1004;
		in->cls = EDAG_INT;
		in->rd[in->nread++] = 7;
		in->rd[in->nread++] = 6;
		in->wr[in->nwrite++] = 7; /* sum */
		if (i % 4 == 0) {
			in = &ins[n++];
			memset(in, 0, sizeof(*in));
			in->pc = 0x1008;
			in->cls = EDAG_LOAD;
			in->mem = EDAG_MEM_READ;
			in->addr = 0x200000 + 64 * i;
			in->size = 8;
			in->rd[in->nread++] = 9;
			in->wr[in->nwrite++] = 9; /* p = p->next */
		}
	}
	return n;
}

static void hello_init(Prof__Hello *h)
{
	prof__hello__init(h);
	h->schema_version = 1;
	h->agent_id = "edag-test";
	h->boot_id = 77;
	h->board = "host";
	h->kernel_release = "6.1";
	h->hostname = "h";
	h->machine = "x86_64";
	h->agent_version = "0.1.0";
	h->features = "tracer";
	h->target = "pid 1";
	h->clock_id = 1;
}

/* Store two windows of a session; returns the session id. */
static int64_t store_windows(struct store *st, const struct edag_insn *ins, size_t n)
{
	Prof__Hello h;
	hello_init(&h);
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(st, &h, "test", &sid, &max_seq, NULL), 0);
	for (int w = 0; w < 2; w++) {
		Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
		size_t half = n / 2;
		assert_int_equal(edag_window_encode(ins + w * half, w ? n - half : half, &tw), 0);
		tw.arch = EDAG_ARCH_RISCV64;
		tw.tid = 1234;
		tw.window_index = (uint32_t)w;
		tw.sampled_share = 0.5;
		tw.represented_insns = 10 * (w ? n - half : half);
		tw.t_ns = 1000000u * (unsigned)w;
		Prof__Envelope env = PROF__ENVELOPE__INIT;
		env.seq = (uint64_t)w + 1;
		env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
		env.trace_window = &tw;
		char err[200];
		assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
		assert_int_equal(store_put_record(st, sid, &env, 100), 1);
		assert_int_equal(store_put_record(st, sid, &env, 100), 0); /* exactly once */
		edag_window_encode_free(&tw);
	}
	assert_int_equal(store_commit(st), 0);
	return sid;
}

struct collect {
	struct edag_metrics mt[4];
	uint32_t index[4];
	double share[4];
	size_t n;
};

static int collect_window(const struct store_trace_row *row, void *arg)
{
	struct collect *c = arg;
	struct edag_config cfg;
	edag_config_default(&cfg);
	struct edag_state *st;
	assert_int_equal(edag_new(&cfg, &st), 0);
	struct edag_window_iter it;
	struct edag_insn in;
	edag_window_iter_init(&it, row->tw);
	int rc;
	while ((rc = edag_window_next(&it, &in)) == 1)
		assert_int_equal(edag_step(st, &in, NULL), 0);
	assert_int_equal(rc, 0);
	edag_metrics_get(st, &c->mt[c->n]);
	c->index[c->n] = row->tw->window_index;
	c->share[c->n] = row->tw->sampled_share;
	c->n++;
	edag_free(st);
	return 0;
}

static void test_edag_store_trace_window_roundtrip(void **state)
{
	(void)state;
	struct edag_insn ins[400];
	size_t n = make_trace(ins, 120);
	struct store *st;
	assert_int_equal(store_open(":memory:", 0, &st), 0);
	int64_t sid = store_windows(st, ins, n);
	struct collect c = {0};
	assert_int_equal(store_list_trace_windows(st, sid, -1, collect_window, &c), 0);
	assert_int_equal(c.n, 2);
	struct edag_config cfg;
	edag_config_default(&cfg);
	for (int w = 0; w < 2; w++) {
		struct edag_metrics want;
		size_t half = n / 2;
		assert_int_equal(edag_build_window(&cfg, ins + w * half, w ? n - half : half, &want), 0);
		assert_int_equal(c.index[w], w);
		assert_true(c.share[w] == 0.5);
		assert_int_equal(c.mt[w].vertices, want.vertices);
		assert_int_equal(c.mt[w].W, want.W);
		assert_int_equal(c.mt[w].D, want.D);
		assert_int_equal(c.mt[w].cp_vertices, want.cp_vertices);
		assert_int_equal(c.mt[w].cp_cost, want.cp_cost);
		assert_int_equal(c.mt[w].cp_compute, want.cp_compute);
		assert_int_equal(c.mt[w].edges_reg, want.edges_reg);
		assert_int_equal(c.mt[w].edges_mem, want.edges_mem);
		assert_memory_equal(c.mt[w].by_depth.count, want.by_depth.count, sizeof(want.by_depth.count));
		assert_memory_equal(c.mt[w].by_time.count, want.by_time.count, sizeof(want.by_time.count));
		assert_true(want.W > 0 && want.D > 1);
	}
	/* one window by index */
	struct collect one = {0};
	assert_int_equal(store_list_trace_windows(st, sid, 1, collect_window, &one), 0);
	assert_int_equal(one.n, 1);
	assert_int_equal(one.index[0], 1);
	store_close(st);
}

/* ---------------------------------------------------------------- the CLI */

static char *run_collector(const char *dir, char *const args[], int *status)
{
	char bin[512], out[600];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(out, sizeof(out), "%s/out.txt", dir);
	unlink(out);
	char *argv[32];
	int n = 0;
	argv[n++] = bin;
	argv[n++] = "edag";
	for (int i = 0; args[i]; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	pid_t pid = tp_spawn(argv, out);
	assert_true(pid > 0);
	assert_int_equal(tp_wait(pid, 60000, status), 0);
	return tp_slurp(out);
}

static uint64_t json_u64_field(const char *json, const char *key)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\":", key);
	const char *p = strstr(json, pat);
	assert_non_null(p);
	return strtoull(p + strlen(pat), NULL, 10);
}

static void test_edag_cli_offline_native_and_edan(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edag"), 0);
	struct edag_insn ins[400];
	size_t n = make_trace(ins, 100);
	struct edag_config cfg;
	edag_config_default(&cfg);
	struct edag_metrics want;
	assert_int_equal(edag_build_window(&cfg, ins, n, &want), 0);

	/* native text */
	char path[512], bpath[512], epath[512];
	snprintf(path, sizeof(path), "%s/trace.txt", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "# fixture written by test_edag_store\narch riscv64\n");
	for (size_t i = 0; i < n; i++) {
		const struct edag_insn *in = &ins[i];
		fprintf(f, "0x%llx %s", (unsigned long long)in->pc, edag_class_name(in->cls));
		for (int k = 0; k < in->nread; k++)
			fprintf(f, "%s#%u", k ? "," : " r=", in->rd[k]);
		for (int k = 0; k < in->nwrite; k++)
			fprintf(f, "%s#%u", k ? "," : " w=", in->wr[k]);
		if (in->mem)
			fprintf(f, " m=0x%llx/%u", (unsigned long long)in->addr, in->size);
		fputc('\n', f);
	}
	fclose(f);
	/* native binary */
	snprintf(bpath, sizeof(bpath), "%s/trace.bin", dir);
	f = fopen(bpath, "wb");
	uint8_t hdr[EDAG_BIN_HEADER], rec[EDAG_BIN_MAX_RECORD];
	edag_bin_header_encode(hdr, EDAG_ARCH_RISCV64);
	fwrite(hdr, 1, sizeof(hdr), f);
	for (size_t i = 0; i < n; i++)
		fwrite(rec, 1, edag_bin_encode(&ins[i], rec), f);
	fclose(f);

	int status;
	for (int fmt = 0; fmt < 2; fmt++) {
		char *args[] = {"--trace", fmt ? bpath : path, "--format", "native", "--json", NULL};
		char *out = run_collector(dir, args, &status);
		assert_non_null(out);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(json_u64_field(out, "vertices"), want.vertices);
		assert_int_equal(json_u64_field(out, "W"), want.W);
		assert_int_equal(json_u64_field(out, "D"), want.D);
		assert_int_equal(json_u64_field(out, "cp_vertices"), want.cp_vertices);
		assert_int_equal(json_u64_field(out, "cp_cost"), want.cp_cost);
		free(out);
	}

	/* EDAN execlog: the seed's example plus memory, with --dot and CSVs */
	snprintf(epath, sizeof(epath), "%s/trace.edan", dir);
	f = fopen(epath, "w");
	fprintf(f, "0;0x10000;addi a1,zero,1\n0;0x10004;addi a2,a1,1\n0;0x10008;addi a3,a2,1\n"
		   "0;0x1000c;addi a4,a3,1\n0;0x10010;addi a5,a4,1\n0;0x10014;addi a4,zero,7\n"
		   "0;0x10018;addi a6,zero,2\n0;0x1001c;addi a7,a6,1\n0;0x10020;addi t0,a7,1\n"
		   "0;0x10024;addi t1,t0,1\n1;0x10028;addi t2,t1,1\n");
	fclose(f);
	char dot[512], layers[512], sweep[512];
	snprintf(dot, sizeof(dot), "%s/g.dot", dir);
	snprintf(layers, sizeof(layers), "%s/layers.csv", dir);
	snprintf(sweep, sizeof(sweep), "%s/sweep.csv", dir);
	char *a1[] = {"--trace", epath, "--format", "edan", "--dot", dot, NULL};
	char *out = run_collector(dir, a1, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "critical path 5 vertices"));
	assert_non_null(strstr(out, "parallelism 2"));
	assert_non_null(strstr(out, "of other vCPUs")); /* the vCPU 1 line is not mixed in */
	free(out);
	char *d = tp_slurp(dot);
	assert_non_null(d);
	assert_int_equal(tp_file_count(dot, "->"), 7); /* 4 + 3 true dependencies */
	free(d);
	char *a2[] = {"--trace",      epath,  "--format",    "edan", "--all-deps",
		      "--layers-csv", layers, "--sweep-csv", sweep,  NULL};
	out = run_collector(dir, a2, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "critical path 6 vertices"));
	assert_non_null(strstr(out, "parallelism 1.667"));
	free(out);
	assert_int_equal(tp_file_count(sweep, ","), 1 + 35);
	assert_int_equal(tp_file_count(layers, "window,kind"), 1);

	/* usage errors */
	char *a3[] = {"--trace", epath, NULL};
	out = run_collector(dir, a3, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	assert_non_null(strstr(out, "--format"));
	free(out);
	tp_rm_rf(dir);
}

/* --cache-model on an EDAN trace: the hand-computed example of
 * test_edag.c (test_edag_cache_model_edan_vs_project) moved to 0x1800, whose
 * line 96 is set 0 in both models (96 % 3 == 96 & 1 == 0): project W 4, D 3,
 * lambda (m 2) 3.5; edan W 3, D 2, lambda 2.5; and the output names the model. */
static void test_edag_cli_cache_model(void **state)
{
	(void)state;
	char dir[256], path[512];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edag"), 0);
	snprintf(path, sizeof(path), "%s/cm.edan", dir);
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "0;0x10000;sd a1,0(a2);0x1800\n0;0x10004;ld a3,0(a2);0x1800\n"
		   "0;0x10008;ld a4,192(a2);0x18c0\n0;0x1000c;ld a5,8(a3);0x1808\n"
		   "0;0x10010;ld a6,60(a5);0x183c\n");
	fclose(f);
	static const struct {
		const char *model;
		uint64_t W, D;
		const char *lambda;
	} want[] = {{"project", 4, 3, "lambda 3.5;"}, {"edan", 3, 2, "lambda 2.5;"}};
	int status;
	for (unsigned k = 0; k < 2; k++) {
		char *model = (char *)want[k].model;
		char *a1[] = {"--trace", path, "--format",	"edan", "--cache", "192:1:64:2",
			      "-m",	 "2",  "--cache-model", model,	"--json",  NULL};
		char *out = run_collector(dir, a1, &status);
		assert_non_null(out);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		assert_int_equal(json_u64_field(out, "W"), want[k].W);
		assert_int_equal(json_u64_field(out, "D"), want[k].D);
		char key[64];
		snprintf(key, sizeof(key), "\"cache_model\":\"%s\"", want[k].model);
		assert_non_null(strstr(out, key));
		free(out);
		char *a2[] = {"--trace", path, "--format",	"edan", "--cache", "192:1:64:2",
			      "-m",	 "2",  "--cache-model", model,	NULL};
		out = run_collector(dir, a2, &status);
		assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		snprintf(key, sizeof(key), "cache model: %s (", want[k].model);
		assert_non_null(strstr(out, key));
		assert_non_null(strstr(out, want[k].lambda));
		free(out);
	}
	/* without caches the model is moot, and says so; a bad name is a usage error */
	char *a3[] = {"--trace", path, "--format", "edan", "--cache-model", "edan", NULL};
	char *out = run_collector(dir, a3, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "cache model: none ("));
	free(out);
	char *a4[] = {"--trace", path, "--format", "edan", "--cache-model", "lru", NULL};
	out = run_collector(dir, a4, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	assert_non_null(strstr(out, "--cache-model 'lru': expected project or edan"));
	free(out);
	tp_rm_rf(dir);
}

static void test_edag_cli_store_session(void **state)
{
	(void)state;
	char dir[256], db[512];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edag"), 0);
	snprintf(db, sizeof(db), "%s/p.db", dir);
	struct edag_insn ins[400];
	size_t n = make_trace(ins, 120);
	struct store *st;
	assert_int_equal(store_open(db, 0, &st), 0);
	int64_t sid = store_windows(st, ins, n);
	store_close(st);
	char sess[16];
	snprintf(sess, sizeof(sess), "%lld", (long long)sid);
	int status;
	char *args[] = {"--store", db, "--session", sess, "-m", "4", "--cache", "1K:2:64:4", "--json", NULL};
	char *out = run_collector(dir, args, &status);
	assert_non_null(out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "\"windows\":["));
	assert_non_null(strstr(out, "\"estimate\":{\"windows\":2"));
	assert_non_null(strstr(out, "\"coverage\":0.1"));
	free(out);
	char *a2[] = {"--store", db, "--session", sess, "--window", "1", NULL};
	out = run_collector(dir, a2, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "window 1 "));
	assert_null(strstr(out, "window 0 "));
	free(out);
	char *a3[] = {"--store", db, "--session", "99", NULL};
	out = run_collector(dir, a3, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 1);
	assert_non_null(strstr(out, "no trace windows"));
	free(out);
	tp_rm_rf(dir);
}

/* Windows that give no vote, as agents store them: a replay window the stop-time
 * limit cut in its warm-up (sent as a record of no instructions) and a
 * single-step window of one instruction. collector edag counts them ("discarded"
 * in JSON, a line in text) and estimates from the rest; a session with nothing
 * else says why it has no metrics instead of "no trace windows". */
static void test_edag_cli_store_counts_discarded_windows(void **state)
{
	(void)state;
	char dir[256], db[512];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edag"), 0);
	snprintf(db, sizeof(db), "%s/p.db", dir);
	struct edag_insn ins[400];
	size_t n = make_trace(ins, 120);
	struct store *st;
	assert_int_equal(store_open(db, 0, &st), 0);
	int64_t sid = store_windows(st, ins, n); /* two windows of unknown origin: they vote */
	Prof__Hello h;
	hello_init(&h);
	h.agent_id = "edag-test-2"; /* the same agent and boot would continue its session */
	int64_t sid2;
	uint64_t max_seq;
	assert_int_equal(store_session_open(st, &h, "test2", &sid2, &max_seq, NULL), 0);
	for (int k = 0; k < 2; k++) {
		int64_t s = k ? sid2 : sid;
		for (int w = 0; w < 2; w++) {
			Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
			assert_int_equal(edag_window_encode(ins, w ? 1 : 0, &tw), 0);
			tw.arch = EDAG_ARCH_RISCV64;
			tw.tid = 1234;
			tw.window_index = 5 + (uint32_t)w;
			tw.sampled_share = 1;
			tw.capture = w ? 1 : 2;
			tw.end_reason = w ? 0 : EDAG_END_TIME;
			Prof__Envelope env = PROF__ENVELOPE__INIT;
			env.seq = 10 + 10 * (uint64_t)k + (uint64_t)w; /* seq is per agent */
			env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
			env.trace_window = &tw;
			char err[200];
			assert_int_equal(envelope_validate(&env, err, sizeof(err)), 0);
			assert_int_equal(store_put_record(st, s, &env, 100), 1);
			edag_window_encode_free(&tw);
		}
	}
	assert_int_equal(store_commit(st), 0);
	store_close(st);
	char sess[16];
	snprintf(sess, sizeof(sess), "%lld", (long long)sid);
	int status;
	char *args[] = {"--store", db, "--session", sess, "-m", "4", "--json", NULL};
	char *out = run_collector(dir, args, &status);
	assert_non_null(out);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "\"discarded\":{\"taken\":4,\"short\":1,\"cut\":1,\"min_insns\":256}"));
	assert_non_null(strstr(out, "\"estimate\":{\"windows\":2"));
	free(out);
	char *a2[] = {"--store", db, "--session", sess, NULL};
	out = run_collector(dir, a2, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "2 of 4 windows discarded (no vote): 1 shorter than 256 instructions, 1 cut by the "
				    "agent's stop-time limit"));
	free(out);
	/* the second session: the one-step window alone is a window but gives no estimate */
	snprintf(sess, sizeof(sess), "%lld", (long long)sid2);
	char *a3[] = {"--store", db, "--session", sess, NULL};
	out = run_collector(dir, a3, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	assert_non_null(strstr(out, "no whole-run estimate: no window can vote"));
	assert_non_null(strstr(out, "2 of 2 windows discarded"));
	free(out);
	tp_rm_rf(dir);
}

/* A stored window with an instruction that reads register 300: reported
 * with the store, session, window and position, skipped and counted; over
 * the limit (--max-bad 0) the run fails with status 2. */
static void test_edag_cli_store_bad_instruction(void **state)
{
	(void)state;
	char dir[256], db[512];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "edag"), 0);
	snprintf(db, sizeof(db), "%s/p.db", dir);
	struct edag_insn ins[400];
	size_t n = make_trace(ins, 100);
	struct store *st;
	assert_int_equal(store_open(db, 0, &st), 0);
	Prof__Hello h;
	hello_init(&h);
	int64_t sid;
	uint64_t max_seq;
	assert_int_equal(store_session_open(st, &h, "test", &sid, &max_seq, NULL), 0);
	Prof__TraceWindow tw = PROF__TRACE_WINDOW__INIT;
	assert_int_equal(edag_window_encode(ins, n, &tw), 0);
	tw.arch = EDAG_ARCH_RISCV64;
	tw.sampled_share = 1;
	assert_true(tw.n_regs_read > 5);
	tw.regs_read[5] = 300;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_TRACE_WINDOW;
	env.trace_window = &tw;
	assert_int_equal(store_put_record(st, sid, &env, 100), 1);
	assert_int_equal(store_commit(st), 0);
	edag_window_encode_free(&tw);
	store_close(st);
	char sess[16];
	snprintf(sess, sizeof(sess), "%lld", (long long)sid);
	int status;
	char *args[] = {"--store", db, "--session", sess, NULL};
	char *out = run_collector(dir, args, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	char want[700];
	snprintf(want, sizeof(want), "%s: session %s, trace window 0 (seq 1), instruction ", db, sess);
	assert_non_null(strstr(out, want));
	assert_non_null(strstr(out, "register number over 255 (skipped)"));
	snprintf(want, sizeof(want), "1 of %zu stored instructions bad and skipped", n);
	assert_non_null(strstr(out, want));
	snprintf(want, sizeof(want), "%zu instructions", n - 1);
	assert_non_null(strstr(out, want));
	free(out);
	char *a2[] = {"--store", db, "--session", sess, "--max-bad", "0", NULL};
	out = run_collector(dir, a2, &status);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 2);
	assert_null(strstr(out, "vertices"));
	free(out);
	tp_rm_rf(dir);
}

int main(void)
{
	log_init("test_edag_store", LOG_LEVEL_WARN);
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_edag_store_trace_window_roundtrip),
	    cmocka_unit_test(test_edag_cli_offline_native_and_edan),
	    cmocka_unit_test(test_edag_cli_cache_model),
	    cmocka_unit_test(test_edag_cli_store_session),
	    cmocka_unit_test(test_edag_cli_store_counts_discarded_windows),
	    cmocka_unit_test(test_edag_cli_store_bad_instruction),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
