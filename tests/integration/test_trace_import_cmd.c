/* agent trace-import end to end, against a real collector on 127.0.0.1: a full
 * native trace cut into TraceWindow records and sent through the session
 * (spool, acks, reconnect) gives, with `collector edag --session N`, exactly
 * the metrics of `collector edag --trace FILE` (the collector joins the
 * pieces into one stream). Synthetic traces always run; the QEMU plugin runs
 * (tools/qemu-plugin/qemu-trace, aarch64 and riscv64 sample kernels) skip
 * with the reason where qemu-user, the plugin or a cross compiler is missing.
 * Also: a collector that is away at first (the input pauses on a small spool,
 * the records arrive once after it starts), and no collector at all (the
 * input is never held longer than --max-stall: the rest is discarded). */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "generated/config.h"
#include "testproc.h"
#include "trace_gen.h"

#define EDAG_OPTS "--cache", "8K:2:64:4", "--cache", "64K:4:64:12", "-m", "4", "--json"

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "trace-import", true);
}

/* Run argv (NULL-terminated), its output into out (truncated first); returns the wait status. */
static int run(char *const argv[], const char *out, int timeout_ms)
{
	unlink(out);
	pid_t pid = tp_spawn(argv, out);
	assert_true(pid > 0);
	int status;
	if (tp_wait(pid, timeout_ms, &status) < 0) {
		tp_stop(pid, 1000);
		tp_dump_file(out);
		fail_msg("%s %s: no exit within %d ms", argv[0], argv[1], timeout_ms);
	}
	return status;
}

/* The metrics of the one window `collector edag --json` printed (from "vertices" to the end of the
 * window), malloc'd; fails unless exactly one window is there. */
static char *edag_metrics(const struct tp_env *e, const char *source_flag, const char *source, const char *tag)
{
	char coll[512], out[400];
	tp_bin("collector", coll, sizeof(coll));
	snprintf(out, sizeof(out), "%s/edag-%s.json", e->dir, tag);
	int status;
	if (strcmp(source_flag, "--trace") == 0) {
		char *argv[] = {coll, "edag", "--trace", (char *)source, "--format", "native", EDAG_OPTS, NULL};
		status = run(argv, out, 60000);
	} else {
		char *argv[] = {coll, "edag", "--store", (char *)e->db, "--session", (char *)source, EDAG_OPTS, NULL};
		status = run(argv, out, 60000);
	}
	char *text = tp_slurp(out);
	assert_non_null(text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		fprintf(stderr, "%s\n", text);
		fail_msg("collector edag %s %s: status 0x%x", source_flag, source, status);
	}
	const char *w = strstr(text, "\"windows\":[");
	const char *v = w ? strstr(w, "\"vertices\":") : NULL;
	const char *end = v ? strstr(v, "}]") : NULL;
	if (!end || strstr(v, "\"index\":")) {
		fprintf(stderr, "%s\n", text);
		fail_msg("collector edag %s %s: expected exactly one window", source_flag, source);
	}
	char *m = strndup(v, (size_t)(end - v));
	free(text);
	return m;
}

static void expect_same_metrics(const struct tp_env *e, const char *trace, const char *session, const char *tag)
{
	char t1[64], t2[64];
	snprintf(t1, sizeof(t1), "%s-file", tag);
	snprintf(t2, sizeof(t2), "%s-session", tag);
	char *file = edag_metrics(e, "--trace", trace, t1);
	char *sess = edag_metrics(e, "--session", session, t2);
	if (strcmp(file, sess) != 0)
		fail_msg("%s: the session's eDAG metrics differ from the file's:\n  file:    %s\n  session: %s", tag, file,
			 sess);
	fprintf(stderr, "%s: the same metrics from the session and the file: %.200s...\n", tag, file);
	free(file);
	free(sess);
}

static bool import_configured(void)
{
#ifdef CONFIG_AGENT_TRACE_IMPORT
	return true;
#else
	fprintf(stderr, "skipping: the agent is built without CONFIG_AGENT_TRACE_IMPORT\n");
	return false;
#endif
}

static void write_synthetic(const struct tp_env *e, const char *name, size_t n, uint32_t seed, char *path, size_t len)
{
	struct edag_insn *ins = calloc(n, sizeof(*ins));
	assert_non_null(ins);
	trace_gen(ins, n, seed);
	tp_env_path(e, name, path, len);
	assert_int_equal(trace_gen_write_bin(path, EDAG_ARCH_RISCV64, ins, n), 0);
	free(ins);
}

/* A synthetic full trace cut into 1000-instruction records: the same metrics, the records stored once. */
static void test_trace_import_session_equals_file(void **state)
{
	struct tp_env *e = *state;
	if (!import_configured())
		skip();
	char trace[400], agent[512];
	write_synthetic(e, "syn.bin", 50000, 11, trace, sizeof(trace));
	tp_bin("agent", agent, sizeof(agent));
	char *argv[] = {agent,	    "trace-import", "--collector", e->coll, "--spool", e->spool, "--window",
			"1000",	    "--tracer",	    "test",	   "--what", "synthetic", trace,    NULL};
	int status = run(argv, e->alog, 60000);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		tp_dump_file(e->alog);
		fail_msg("agent trace-import: status 0x%x", status);
	}
	assert_int_equal(tp_db_int(e->db, "SELECT count(*) FROM trace_windows"), 50);
	assert_int_equal(tp_db_int(e->db, "SELECT sum(n_insns) FROM trace_windows"), 50000);
	assert_int_equal(tp_db_int(e->db, "SELECT count(*) FROM sessions WHERE target = 'riscv64 trace by test: "
					  "synthetic'"),
			 1);
	expect_same_metrics(e, trace, "1", "synthetic");
	/* the report's latency sensitivity joins the pieces too: one window of the thread */
	char coll[512], out[400];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "report.json", out, sizeof(out));
	char *rep[] = {coll, "report", "--store", e->db, "--session", "1", "--format", "json", NULL};
	status = run(rep, out, 60000);
	char *text = tp_slurp(out);
	assert_non_null(text);
	/* ...labelled by the traced program, not "pid 0 tid 0" */
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(text, "\"windows\":1,\"insns\":50000,") ||
	    !strstr(text, "\"name\":\"synthetic (whole run)\"")) {
		fprintf(stderr, "%s\n", text);
		fail_msg("collector report: status 0x%x, expected one sensitivity window of 50000 instructions", status);
	}
	free(text);
}

/* The collector is away when the import starts: the input pauses on a 1 MiB spool,
 * goes on once the collector (started later on the same port) acks; every record once. */
static void test_trace_import_waits_for_late_collector(void **state)
{
	struct tp_env *e = *state;
	if (!import_configured())
		skip();
	char trace[400], agent[512], spool_max[] = "1";
	write_synthetic(e, "late.bin", 400000, 5, trace, sizeof(trace));
	tp_stop(e->collector, 2000);
	e->collector = -1;
	tp_bin("agent", agent, sizeof(agent));
	char *argv[] = {agent,	     "trace-import", "-v", "--collector", e->coll,     "--spool", e->spool, "--spool-max",
			spool_max,   "--window",     "4000",		"--max-stall", "60",	"--flush-timeout",
			"30",	     trace,	     NULL};
	unlink(e->alog);
	pid_t pid = tp_spawn(argv, e->alog);
	/* the collector starts once the input paused (-v: agent/cmd_trace_import.c import_prepare's
	 * "spool full, pausing the input"), not after a fixed 1.5 s that a loaded machine can spend
	 * before the spool is full (issue 43) */
	if (!tp_wait_log(e->alog, "pausing the input", 30000)) {
		tp_dump_file(e->alog);
		fail_msg("agent trace-import did not pause its input within 30 s with no collector");
	}
	assert_true(tp_alive(pid)); /* paused, not done, not discarding */
	e->collector = tp_start_collector(e->dir, e->db, e->port, &e->port, e->clog);
	assert_true(e->collector > 0);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char *log = tp_slurp(e->alog);
	assert_non_null(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(log, "nothing discarded") ||
	    strstr(log, "paused 0 time")) {
		fprintf(stderr, "%s", log);
		fail_msg("agent trace-import with a late collector: status 0x%x", status);
	}
	free(log);
	assert_int_equal(tp_db_int(e->db, "SELECT count(*) FROM trace_windows"), 100);
	assert_int_equal(tp_db_int(e->db, "SELECT count(DISTINCT window_index) FROM trace_windows"), 100);
	expect_same_metrics(e, trace, "1", "late-collector");
}

/* No collector at all: the input is held at most --max-stall, then read on and discarded. */
static void test_trace_import_never_stalls_past_max_stall(void **state)
{
	struct tp_env *e = *state;
	if (!import_configured())
		skip();
	char trace[400], agent[512];
	write_synthetic(e, "none.bin", 400000, 9, trace, sizeof(trace));
	tp_stop(e->collector, 2000);
	e->collector = -1;
	tp_bin("agent", agent, sizeof(agent));
	char *argv[] = {agent,		"trace-import", "--collector", e->coll, "--spool",	   e->spool,
			"--spool-max",	"1",		"--window",    "4000",	"--max-stall",	   "0.3",
			"--flush-timeout", "0.5",	trace,	       NULL};
	int status = run(argv, e->alog, 30000);
	char *log = tp_slurp(e->alog);
	assert_non_null(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 1 || !strstr(log, "discarded")) {
		fprintf(stderr, "%s", log);
		fail_msg("agent trace-import without a collector: status 0x%x (expected 1 and a discard report)", status);
	}
	free(log);
}

/* ---------------------------------------------------------------- QEMU */

static void qemu_streams(void **state, const char *arch, const char *kernel, const char *a1, const char *a2)
{
	struct tp_env *e = *state;
	if (!import_configured())
		skip();
	char qemu[64], so[512], bin[512], rel[128], agent[512], script[600], saved[400], out[400];
	snprintf(qemu, sizeof(qemu), "/usr/bin/qemu-%s", arch);
	tp_bin("qemu-plugin/edag_tracer.so", so, sizeof(so));
	snprintf(rel, sizeof(rel), "xkernels/%s/%s", arch, kernel);
	tp_bin(rel, bin, sizeof(bin));
	tp_bin("agent", agent, sizeof(agent));
	const char *src = getenv("PROF_SRC_DIR");
	snprintf(script, sizeof(script), "%s/tools/qemu-plugin/qemu-trace", src ? src : ".");
	const char *miss = access(qemu, X_OK)	? qemu
			   : access(so, R_OK)	? so
			   : access(bin, X_OK)	? bin
			   : access(script, X_OK) ? script
						  : NULL;
	if (miss) {
		fprintf(stderr, "skipping %s/%s: %s is missing (apt-get install qemu-user; make deps for the %s "
				"cross compiler)\n",
			arch, kernel, miss, arch);
		skip();
	}
	snprintf(saved, sizeof(saved), "%s/%s-%s.bin", e->dir, arch, kernel);
	tp_env_path(e, "qemu-trace.log", out, sizeof(out));
	char *argv[] = {script, "--collector", e->coll, "--agent", agent, "--plugin", so, "--save", saved,
			"--spool", e->spool, "--window", "8192", "--", qemu, bin, (char *)a1, (char *)a2, NULL};
	int status = run(argv, out, 120000);
	char *log = tp_slurp(out);
	assert_non_null(log);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0 || !strstr(log, "nothing discarded")) {
		fprintf(stderr, "%s", log);
		fail_msg("qemu-trace %s %s: status 0x%x", arch, kernel, status);
	}
	assert_non_null(strstr(log, "data=0x")); /* the program's own output went through */
	free(log);
	int64_t sid = tp_db_int(e->db, "SELECT max(id) FROM sessions");
	assert_true(sid > 0);
	assert_int_equal(tp_db_int(e->db,
				   "SELECT count(*) FROM sessions WHERE id = %lld AND target LIKE '%s trace by "
				   "qemu-plugin edag_tracer (qemu-%s): %%/%s %s %s'",
				   (long long)sid, arch, arch, kernel, a1, a2),
			 1);
	char sess[32], tag[64];
	snprintf(sess, sizeof(sess), "%lld", (long long)sid);
	snprintf(tag, sizeof(tag), "qemu-%s-%s", arch, kernel);
	expect_same_metrics(e, saved, sess, tag);
}

static void test_trace_import_qemu_aarch64_chase(void **state)
{
	qemu_streams(state, "aarch64", "chase", "4096", "65536");
}

static void test_trace_import_qemu_riscv64_triad(void **state)
{
	qemu_streams(state, "riscv64", "triad", "4096", "8");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_trace_import_session_equals_file, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_import_waits_for_late_collector, setup,
						tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_import_never_stalls_past_max_stall, setup,
						tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_import_qemu_aarch64_chase, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_trace_import_qemu_riscv64_triad, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
