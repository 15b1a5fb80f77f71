/* Mali GPU counters end to end on the fake kbase device (LD_PRELOAD
 * build/<board>/lib/libfake_kbase.so, tests/lib/fake_kbase.c): the real
 * collector, `agent run --gpu` on an OpenCL workload (PoCL) and `agent stat
 * --gpu`, then `collector report --gpu --json`. The fake's counters run at
 * scripted constant rates, so each kernel's counter-derived roofline dot is
 * known exactly: words/byte = arith rate / ((read + write beat rates) x bus
 * width), whatever share of the time the attribution gives the kernel. */
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

#include "testproc.h"

static const char *no_opencl, *no_fake;

struct env {
	struct tp_env t;
	char script[400], dev[400], fake[512];
};

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_env_setup(&e->t, "gpu", true) < 0) {
		free(e);
		return -1;
	}
	tp_env_path(&e->t, "fake.script", e->script, sizeof(e->script));
	tp_env_path(&e->t, "mali0", e->dev, sizeof(e->dev));
	tp_bin("lib/libfake_kbase.so", e->fake, sizeof(e->fake));
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	unsetenv("LD_PRELOAD");
	unsetenv("PROF_FAKE_KBASE_SCRIPT");
	tp_env_teardown(&e->t);
	free(e);
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	char p[512];
	tp_bin("lib/libfake_kbase.so", p, sizeof(p));
	if (access(p, R_OK) != 0)
		no_fake = "libfake_kbase.so not built (CONFIG_AGENT_MALI off?)";
	tp_bin("cl-workloads/cl_matmul", p, sizeof(p));
	char *argv[] = {p, NULL};
	pid_t pid = access(p, X_OK) == 0 ? tp_spawn(argv, "/dev/null") : -1;
	int status = -1;
	if (pid < 0 || tp_wait(pid, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		no_opencl = "no working OpenCL device (cl_matmul fails without the profiler): install "
			    "pocl-opencl-icd";
	return 0;
}

static void write_script(struct env *e, const char *body)
{
	FILE *f = fopen(e->script, "w");
	assert_non_null(f);
	fprintf(f, "path %s\n%s", e->dev, body);
	fclose(f);
}

/* Run the agent with the fake device preloaded; returns its exit status. */
static int run_agent(struct env *e, char **args)
{
	char agent[512];
	tp_bin("agent", agent, sizeof(agent));
	char *argv[40] = {agent};
	size_t n = 1;
	for (size_t i = 0; args[i] && n < 38; i++)
		argv[n++] = args[i];
	argv[n] = NULL;
	setenv("PROF_FAKE_KBASE_SCRIPT", e->script, 1);
	setenv("LD_PRELOAD", e->fake, 1);
	/* the sanitizer runtime cannot come first when the fake is preloaded */
	const char *old = getenv("ASAN_OPTIONS");
	char *saved = old ? strdup(old) : NULL;
	char asan[512];
	snprintf(asan, sizeof(asan), "%s%sverify_asan_link_order=0", old ? old : "", old && *old ? ":" : "");
	setenv("ASAN_OPTIONS", asan, 1);
	pid_t p = tp_spawn(argv, e->t.alog);
	unsetenv("LD_PRELOAD");
	unsetenv("PROF_FAKE_KBASE_SCRIPT");
	if (saved)
		setenv("ASAN_OPTIONS", saved, 1), free(saved);
	else
		unsetenv("ASAN_OPTIONS");
	assert_true(p > 0);
	int status = -1;
	assert_int_equal(tp_wait(p, 120000, &status), 0);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		tp_dump_file(e->t.alog);
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static int64_t session_of(struct env *e, const char *id)
{
	tp_sleep_ms(200);
	return tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='%s'", id);
}

/* collector report --gpu --json into a malloc'd string. */
static char *report_json(struct env *e, int64_t sid)
{
	char coll[512], out[400], cmd[1600];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(&e->t, "gpu.json", out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --gpu --json > %s 2>&1", coll,
		 e->t.db, (long long)sid, out);
	assert_int_equal(system(cmd), 0);
	char *s = tp_slurp(out);
	assert_non_null(s);
	return s;
}

/* The number after "key": at or after from. */
static double num(const char *from, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\":", key);
	const char *p = strstr(from, k);
	if (!p)
		fail_msg("no %s in %s", key, from);
	return strtod(p + strlen(k), NULL);
}

static void check_dot(const char *json, const char *kernel, double want_wpb, double bus)
{
	char k[160];
	snprintf(k, sizeof(k), "\"name\":\"%s\"", kernel);
	const char *p = strstr(json, k);
	if (!p)
		fail_msg("kernel %s not in %s", kernel, json);
	double rb = num(p, "ext_read_beats"), wb = num(p, "ext_write_beats"), bytes = num(p, "dram_bytes");
	double arith = num(p, "arith"), wpb = num(p, "words_per_byte");
	fprintf(stderr, "%s: arith %.0f, beats %.0f + %.0f, %.0f bytes, %.6f words/B (want %.6f)\n", kernel,
		arith, rb, wb, bytes, wpb, want_wpb);
	assert_true(arith > 0 && rb > 0);
	assert_true(fabs(bytes - (rb + wb) * bus) <= 1e-6 * bytes); /* bytes = beats x bus width */
	assert_true(fabs(wpb - arith / bytes) <= 1e-9 * wpb);	    /* the dot the report prints */
	assert_true(fabs(wpb - want_wpb) <=
		    1e-4 * want_wpb); /* = the scripted rates' ratio (the fake floors
					 each counter per dump: about a count per kernel edge) */
}

/* The Arndale Octa's GPU: T628 MP6 on the UK dump buffer. 6 cores x 2e9
 * arith words/s; L2 beats 100e6 read + 25e6 write /s, 16-byte bus:
 * 12e9 / (125e6 x 16) = 6 words/B. */
static void test_gpu_run_t628_uk_dump_roofline(void **state)
{
	struct env *e = *state;
	if (no_fake || no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_fake ? no_fake : no_opencl);
		skip();
	}
	write_script(e, "gpu t628mp6\niface uk-dump\nrate sc * 27 2000000000\nrate sc * 31 500000000\n"
			"rate l2 0 31 100000000\nrate l2 0 30 25000000\nrate jm 0 6 600000000\n");
	char wl[512];
	tp_bin("cl-workloads/cl_matmul", wl, sizeof(wl));
	char *args[] = {"run",	 "--collector",	 e->t.coll, "--spool", e->t.spool, "--agent-id", "gpu-t628",
			"--gpu", "--gpu-device", e->dev,    "--",      wl,	   NULL};
	assert_int_equal(run_agent(e, args), 0);
	assert_true(tp_file_count(e->t.alog, "Mali-T62x (Midgard)") >= 1);
	int64_t sid = session_of(e, "gpu-t628");
	assert_true(sid > 0);
	assert_true(
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM gpu_samples WHERE session_id=%lld", (long long)sid) > 0);
	assert_int_equal(
	    tp_db_int(e->t.db, "SELECT bus_bytes FROM gpu_info WHERE session_id=%lld", (long long)sid), 16);
	char *json = report_json(e, sid);
	assert_non_null(strstr(json, "\"family\":\"T62x\""));
	assert_non_null(strstr(json, "\"interface\":\"uk-dump\""));
	check_dot(json, "matmul", 6.0, 16);
	free(json);
	/* the same session's Perfetto export has the GPU counter tracks */
	char coll[512], trace[400], cmd[1600];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(&e->t, "trace.json", trace, sizeof(trace));
	snprintf(cmd, sizeof(cmd), "%s export --store %s --session %lld --perfetto %s >/dev/null 2>&1", coll,
		 e->t.db, (long long)sid, trace);
	assert_int_equal(system(cmd), 0);
	char *tr = tp_slurp(trace);
	assert_non_null(tr);
	assert_non_null(strstr(tr, "\"name\":\"GPU L2_EXT_READ_BEATS /ms\""));
	assert_non_null(strstr(tr, "\"name\":\"GPU ARITH_WORDS /ms\""));
	free(tr);
	/* and the overview (json, html) carries the GPU section */
	char ov[400];
	tp_env_path(&e->t, "overview.html", ov, sizeof(ov));
	snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --format html > %s 2>&1", coll,
		 e->t.db, (long long)sid, ov);
	assert_int_equal(system(cmd), 0);
	assert_int_equal(tp_file_count(ov, "<h2 id=\"gpu-counters\">"), 1);
	assert_int_equal(tp_file_count(ov, "data-name=\"kernel\" data-i=\"6\""),
			 1); /* the dot on the chart */
	assert_true(tp_file_count(ov, "matmul") >= 1);
	tp_env_path(&e->t, "overview.json", ov, sizeof(ov));
	snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --format json > %s 2>&1", coll,
		 e->t.db, (long long)sid, ov);
	assert_int_equal(system(cmd), 0);
	char *oj = tp_slurp(ov);
	assert_non_null(oj);
	const char *g = strstr(oj, "\"gpu_counters\":{");
	assert_non_null(g);
	check_dot(g, "matmul", 6.0, 16);
	free(oj);
}

/* A G-series phone GPU: G71 MP8 on the ioctl interface, the driver's reader
 * dumping every 500 us on its own timer. 8 x 1e9 instr/s; 2 L2 slices x
 * 40e6 read + 10e6 write beats/s: 8e9 / (100e6 x 16) = 5 instr/B. */
static void test_gpu_run_g71_reader_roofline(void **state)
{
	struct env *e = *state;
	if (no_fake || no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_fake ? no_fake : no_opencl);
		skip();
	}
	write_script(e, "gpu g71mp8\niface ioctl\nrate sc * 28 1000000000\nrate l2 * 32 40000000\n"
			"rate l2 * 47 10000000\nrate jm 0 6 500000000\n");
	char wl[512];
	tp_bin("cl-workloads/cl_matmul", wl, sizeof(wl));
	char *args[] = {
	    "run",   "--collector",    e->t.coll, "--spool",	  e->t.spool, "--agent-id", "gpu-g71",
	    "--gpu", "--gpu-interval", "500",	  "--gpu-device", e->dev,     "--",	    wl,
	    NULL};
	assert_int_equal(run_agent(e, args), 0);
	int64_t sid = session_of(e, "gpu-g71");
	assert_true(sid > 0);
	char *json = report_json(e, sid);
	assert_non_null(strstr(json, "\"family\":\"G71\""));
	assert_non_null(strstr(json, "\"interface\":\"ioctl+reader\""));
	assert_true(num(json, "dumps") >= 10);
	check_dot(json, "matmul", 5.0, 16);
	free(json);
	/* The interval the agent states is the one the driver reads (by value:
	 * kbasep_vinstr_hwcnt_reader_ioctl_set_interval(cli, (u32)arg)), and the
	 * stored dump intervals are that long (the most common length: a dump the
	 * fake drops when the agent leaves its 16 buffers full makes one row of
	 * two intervals) */
	assert_true(tp_file_count(e->t.alog, "gpu counters: Mali-G71") >= 1);
	assert_true(tp_file_count(e->t.alog, ", every 500 us") >= 1);
	assert_true(tp_file_count(e->t.alog,
				  "fake_kbase: SET_INTERVAL argument 500000 ns, reader dumps every "
				  "500000 ns") >= 1);
	assert_int_equal(
	    tp_db_int(e->t.db,
		      "SELECT (t1_ns - t0_ns + 500) / 1000 AS us FROM gpu_samples WHERE session_id=%lld "
		      "GROUP BY us ORDER BY COUNT(DISTINCT t0_ns) DESC LIMIT 1",
		      (long long)sid),
	    500);
}

/* No device, or a driver that refuses: one line saying which and why, and
 * the session goes on (agent stat needs no OpenCL). */
static void test_gpu_missing_or_refused_goes_on(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	write_script(e, "gpu g71mp8\nmissing\n");
	char *args[] = {"stat",	       "--collector", e->t.coll,    "--spool", e->t.spool,     "--agent-id",
			"gpu-missing", "-e",	      "task-clock", "--gpu",   "--gpu-device", e->dev,
			"--",	       "/bin/sleep",  "0.2",	    NULL};
	assert_int_equal(run_agent(e, args), 0);
	assert_int_equal(tp_file_count(e->t.alog, "does not exist (no kbase driver); the session goes on"),
			 1);
	write_script(e, "gpu g71mp8\nrefuse 1\n");
	char *args2[] = {"stat",	"--collector", e->t.coll,    "--spool", e->t.spool,	"--agent-id",
			 "gpu-refused", "-e",	       "task-clock", "--gpu",	"--gpu-device", e->dev,
			 "--",		"/bin/sleep",  "0.2",	     NULL};
	assert_int_equal(run_agent(e, args2), 0);
	assert_int_equal(
	    tp_file_count(e->t.alog, "refused counter setup (HWCNT_READER_SETUP: Operation not permitted)"),
	    1);
	int64_t sid = session_of(e, "gpu-refused");
	assert_true(sid > 0);
	assert_int_equal(
	    tp_db_int(e->t.db, "SELECT COUNT(*) FROM gpu_samples WHERE session_id=%lld", (long long)sid), 0);
	assert_true(tp_db_int(e->t.db,
			      "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='counters'",
			      (long long)sid) > 0);
}

/* agent stat --gpu stores the counters of a run without OpenCL too. */
static void test_gpu_stat_stores_counters(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	write_script(e, "gpu t628mp6\niface uk-reader\nrate l2 0 31 1000000\n");
	char *args[] = {"stat",	    "--collector", e->t.coll,	 "--spool", e->t.spool,	    "--agent-id",
			"gpu-stat", "-e",	   "task-clock", "--gpu",   "--gpu-device", e->dev,
			"--",	    "/bin/sleep",  "0.3",	 NULL};
	assert_int_equal(run_agent(e, args), 0);
	int64_t sid = session_of(e, "gpu-stat");
	assert_true(sid > 0);
	/* about 0.3 s x 1e6 beats/s, all in the L2 column */
	int64_t beats = tp_db_int(
	    e->t.db,
	    "SELECT SUM(s.value) FROM gpu_samples s JOIN gpu_counters c ON c.session_id=s.session_id"
	    " AND c.counter_id=s.counter_id WHERE s.session_id=%lld AND c.name='L2_EXT_READ_BEATS'",
	    (long long)sid);
	fprintf(stderr, "stat: %lld read beats\n", (long long)beats);
	assert_true(beats > 200000 && beats < 2000000);
	assert_true(tp_db_int(e->t.db,
			      "SELECT COUNT(*) FROM gpu_info WHERE session_id=%lld AND iface='uk+reader'",
			      (long long)sid) == 1);
	/* A GPU session without OpenCL kernels: every count is unattributed. The reports
	 * attribute over zero kernels (issue 25 item 9: the sanitizer collector aborted
	 * on qsort(NULL, 0) in common/gpu_attrib.c, on GET /session/N and in report). */
	char coll[512], out[400], cmd[1600];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(&e->t, "gpu.txt", out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "%s report --store %s --session %lld --gpu > %s 2>&1", coll, e->t.db,
		 (long long)sid, out);
	int st = system(cmd);
	if (st != 0)
		tp_dump_file(out);
	assert_int_equal(st, 0);
	tp_stop(e->t.collector, 5000);
	int hp;
	assert_int_equal(tp_env_start_collector_http(&e->t, &hp), 0);
	char path[64], *body = NULL;
	snprintf(path, sizeof(path), "/session/%lld", (long long)sid);
	int code = tp_http_get(hp, path, &body);
	if (code != 200)
		tp_dump_file(e->t.clog);
	assert_int_equal(code, 200);
	assert_non_null(strstr(body, "Mali GPU counters"));
	free(body);
	assert_true(tp_alive(e->t.collector));
}

/* agent record --gpu (the boards' service, issue 35): CPU samples and the Mali counters in
 * one session. */
static void test_gpu_record_stores_samples_and_counters(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	write_script(e, "gpu t628mp6\niface uk-reader\nrate l2 0 31 1000000\n");
	char *args[] = {"record",     "--collector", e->t.coll, "--spool",	    e->t.spool, "--agent-id",
			"gpu-record", "-F",	     "499",	"--gpu",	    "--gpu-device", e->dev,
			"--",	      "/bin/sh",     "-c",	"i=0; while [ $i -lt 20000 ]; do i=$((i+1)); done",
			NULL};
	assert_int_equal(run_agent(e, args), 0);
	int64_t sid = session_of(e, "gpu-record");
	assert_true(sid > 0);
	int64_t beats = tp_db_int(
	    e->t.db,
	    "SELECT SUM(s.value) FROM gpu_samples s JOIN gpu_counters c ON c.session_id=s.session_id"
	    " AND c.counter_id=s.counter_id WHERE s.session_id=%lld AND c.name='L2_EXT_READ_BEATS'",
	    (long long)sid);
	int64_t samples = tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='samples'",
				    (long long)sid);
	fprintf(stderr, "record --gpu: %lld read beats, %lld samples records\n", (long long)beats, (long long)samples);
	assert_true(beats > 0);
	assert_true(samples > 0);
}

/* agent stat --gpu on the UK dump-buffer generations (tests/lib/fake_kbase_t6xx.c,
 * fake_kbase_midgard_uk.c: SAME_VA for this 64-bit process): every dump holds the
 * interval's counts under a steady rate (none 0, none near 2^32), their sum is the
 * rate x the run. */
static void test_gpu_stat_uk_generations(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	const char *scripts[] = {"gpu t628mp6\niface t6xx\nrate l2 0 31 100000000\n",
				 "gpu t628mp6\niface uk-dump\nrate l2 0 31 100000000\n"};
	const char *ids[] = {"gpu-t6xx", "gpu-r5p0-64"};
	for (int k = 0; k < 2; k++) {
		write_script(e, scripts[k]);
		char *args[] = {"stat",	 "--collector", e->t.coll, "--spool",	    e->t.spool,
				"--agent-id", (char *)ids[k], "-e",	      "task-clock", "--gpu",
				"--gpu-device", e->dev,		"--",	      "/bin/sleep", "0.3",
				NULL};
		assert_int_equal(run_agent(e, args), 0);
		assert_int_equal(tp_file_count(e->t.alog, "no Mali GPU counters"), 0);
		assert_int_equal(tp_file_count(e->t.alog, "dump failed"), 0);
		int64_t sid = session_of(e, ids[k]);
		assert_true(sid > 0);
		const char *q = "FROM gpu_samples s JOIN gpu_counters c ON c.session_id=s.session_id"
				" AND c.counter_id=s.counter_id WHERE s.session_id=%lld AND "
				"c.name='L2_EXT_READ_BEATS'";
		char sql[512];
		snprintf(sql, sizeof(sql), "SELECT SUM(s.value) %s", q);
		int64_t beats = tp_db_int(e->t.db, sql, (long long)sid);
		snprintf(sql, sizeof(sql), "SELECT MIN(s.value) %s", q);
		int64_t lo = tp_db_int(e->t.db, sql, (long long)sid);
		snprintf(sql, sizeof(sql), "SELECT MAX(s.value) %s", q);
		int64_t hi = tp_db_int(e->t.db, sql, (long long)sid);
		fprintf(stderr, "%s: %lld read beats, per dump %lld..%lld\n", ids[k], (long long)beats,
			(long long)lo, (long long)hi);
		/* 0.3 s of sleep plus the agent's start and end: 3e7 .. 2e8 */
		assert_true(beats > 25000000 && beats < 200000000);
		assert_true(lo > 0);		/* steady load is never 0 */
		assert_true(hi < 1000000000);	/* and never a 2^32 - x value */
		assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM gpu_info WHERE session_id=%lld AND iface='uk-dump'",
				      (long long)sid) == 1);
	}
}

/* agent --features says what it found: the GPU, or why there is none. */
/* agent --gpu-selftest: what the driver reports and a few dumps' sanity, on
 * the ioctl reader (G71) and the t6xx r3p0 UK dump buffer (T628: the two core
 * groups of L2_PRESENT 0x11); a missing device fails in one line. */
static void test_gpu_selftest_reports_driver(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	write_script(e, "gpu g71mp8\niface ioctl\nrate jm 0 6 500000000\n");
	char *args[] = {"--gpu-selftest", "--gpu-device", e->dev, "--gpu-interval",
			"2000",		  "--dumps",	  "5",	  NULL};
	assert_int_equal(run_agent(e, args), 0);
	assert_int_equal(tp_file_count(e->t.alog, "interface:       ioctl+reader, driver ioctl 11.0"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "SHADER_PRESENT:  0xff (8 cores)"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "L2_PRESENT:      0x1; L2 slices 2"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "core groups:     1: 0xff"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "the driver's reader every 2000 us"), 1);
	/* a poll may find two dumps ready: at least the 5 asked for */
	assert_int_equal(tp_file_count(e->t.alog, " dumps (asked 5)"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "dumps missing"), 0);
	assert_int_equal(tp_file_count(e->t.alog, "block headers with their enable mask, 0 without"), 1);
	assert_int_equal(tp_file_count(e->t.alog,
				       "fake_kbase: SET_INTERVAL argument 2000000 ns, reader dumps every "
				       "2000000 ns"),
			 1);
	assert_int_equal(tp_file_count(e->t.alog, "selftest: ok"), 1);
	write_script(e, "gpu t628mp6\niface t6xx\nrate jm 0 6 500000000\n");
	assert_int_equal(run_agent(e, args), 0);
	assert_int_equal(tp_file_count(e->t.alog, "driver UK 3.0, t6xx r3p0"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "L2_PRESENT:      0x11; L2 slices 1"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "core groups:     2: 0xf 0x30"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "dump layout:     v4, 10 blocks, 4096 bytes"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "the agent's HWCNT_DUMP every 2000 us"), 1);
	assert_int_equal(tp_file_count(e->t.alog, " dumps (asked 5)"), 2);
	assert_true(tp_file_count(e->t.alog, "sanity:     5 dumps (asked 5)") >= 1); /* one per HWCNT_DUMP */
	assert_int_equal(tp_file_count(e->t.alog, "50 block headers with their enable mask, 0 without"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "selftest: ok"), 2);
	write_script(e, "gpu g71mp8\nmissing\n");
	assert_int_equal(run_agent(e, args), 1);
	assert_int_equal(tp_file_count(e->t.alog, "does not exist (no kbase driver)"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "selftest: FAILED (the device did not open)"), 1);
}

static void test_gpu_features_report_device(void **state)
{
	struct env *e = *state;
	if (no_fake) {
		fprintf(stderr, "skipped: %s\n", no_fake);
		skip();
	}
	write_script(e, "gpu g71mp8\niface ioctl\n");
	setenv("PROF_MALI_DEVICE", e->dev, 1);
	char *args[] = {"--features", NULL};
	int rc = run_agent(e, args);
	unsetenv("PROF_MALI_DEVICE");
	assert_int_equal(rc, 0);
	assert_int_equal(tp_file_count(e->t.alog, "mali counters:  yes"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "Mali-G71 (Bifrost) gpu_id 0x60000010, 8 cores, 2 L2"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "ioctl+reader, 16-byte bus, dump layout v5"), 1);
	write_script(e, "gpu t628mp6\niface uk-dump\n");
	setenv("PROF_MALI_DEVICE", e->dev, 1);
	rc = run_agent(e, args);
	unsetenv("PROF_MALI_DEVICE");
	assert_int_equal(rc, 0);
	assert_int_equal(tp_file_count(e->t.alog, "Mali-T62x (Midgard) gpu_id 0x06201000, 6 cores"), 1);
	assert_int_equal(tp_file_count(e->t.alog, "uk-dump, 16-byte bus, dump layout v4"), 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_gpu_run_t628_uk_dump_roofline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_run_g71_reader_roofline, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_missing_or_refused_goes_on, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_stat_stores_counters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_record_stores_samples_and_counters, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_stat_uk_generations, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_features_report_device, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_gpu_selftest_reports_driver, setup, teardown),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
