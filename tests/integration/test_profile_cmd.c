/* agent profile end to end on PoCL: `agent calibrate --quick` and then
 * `agent profile -- cl_matmul` against one collector (with --http); the
 * profile session, with no --machine anywhere, gets the board's calibration:
 * `collector report` shows which calibration session it used, the roofline
 * with the kernel's dot (kernel model sent by agent profile) and the CPU dot
 * (when the session has hardware FP and refill counters; this VM has none:
 * then the report must say why), the trace windows' latency sensitivity, and
 * the live /session/N/roofline-gpu.svg draws the kernel's dot. Skipped with
 * a reason when no OpenCL device works here. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"
#include "tp_cl.h"

static const char *no_opencl; /* why the suite is skipped, NULL if it runs */

struct env {
	struct tp_env t;
	int http_port;
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "profile", false) < 0)
		return -1;
	struct env *e = *state;
	if (!no_opencl && tp_env_start_collector_http(&e->t, &e->http_port) < 0)
		return -1;
	return 0;
}

static int group_setup(void **state)
{
	(void)state;
	char mm[512];
	tp_bin("cl-workloads/cl_matmul", mm, sizeof(mm));
	if (access(mm, X_OK) != 0) {
		no_opencl = "cl-workloads not built (CONFIG_AGENT_OPENCL off?)";
		return 0;
	}
	char *argv[] = {mm, "16", "1", NULL};
	pid_t p = tp_spawn(argv, "/dev/null");
	int status = -1;
	if (p < 0 || tp_wait(p, 60000, &status) < 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0)
		no_opencl = "no working OpenCL device (cl_matmul fails without the profiler): install pocl-opencl-icd";
	return 0;
}

/* Run argv to its end (limit ms), output to log; the exit code. */
static int run(char **argv, const char *log, int ms)
{
	pid_t p = tp_spawn(argv, log);
	assert_true(p > 0);
	int status = -1;
	if (tp_wait(p, ms, &status) < 0) {
		tp_stop(p, 2000);
		tp_dump_file(log);
		fail_msg("%s %s did not finish in %d ms", argv[0], argv[1], ms);
	}
	assert_true(WIFEXITED(status));
	return WEXITSTATUS(status);
}

static void must_have(const char *text, const char *what, const char *where)
{
	if (!strstr(text, what))
		fail_msg("%s lacks \"%s\":\n%.6000s", where, what, text);
}

static void test_profile_cmd_calibrate_then_profile_reports_without_machine(void **state)
{
	struct env *e = *state;
	if (no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_opencl);
		skip();
	}
	char agent[512], coll_bin[512], mm[512], kmodel[300], out[300], log[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	tp_bin("cl-workloads/cl_matmul", mm, sizeof(mm));
	tp_env_path(&e->t, "kernels.model", kmodel, sizeof(kmodel));
	tp_env_path(&e->t, "report.txt", out, sizeof(out));
	tp_env_path(&e->t, "calibrate.log", log, sizeof(log));

	/* 1. the board's calibration, in a session of its own */
	char *cal[] = {agent, "calibrate", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", "board-a",
		       "--quick", "--only", "device,peak,cpu_peak,mem_slots", NULL};
	int rc = run(cal, log, 180000);
	if (rc != 0)
		tp_dump_file(log);
	assert_int_equal(rc, 0);
	int64_t cal_sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='board-a'");
	assert_true(cal_sid > 0);

	/* 2. the whole capture of one OpenCL program, one session; the naive matmul of
	 * n = 384 does 2n flops and reads 2n + writes 1 floats per work-item; with "cpu"
	 * the program also runs the whole product on the CPU (matmul_ref: 2 n^3 flops) */
	FILE *f = fopen(kmodel, "w");
	assert_non_null(f);
	fprintf(f, "# per work-item of cl_matmul 384\nmatmul ops=768 bytes=3076\n");
	fclose(f);
	char *prof[] = {agent, "profile", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", "board-a",
			"--kernel-model", kmodel, "--every", "0.3", "--window", "400", "--warmup", "20000", "--max-duty",
			"50", "-F", "999", "--", mm, "384", "12", "cpu", NULL};
	/* The program runs about 0.6 s. Under ASan a replay window (a new emulator translating
	 * the code afresh) with the default 500000-instruction warm-up outlasts the stop time
	 * that 20 % of 50 ms gives it (seen: 0 windows, every one ended by the stop-time limit
	 * in its warm-up): a shorter warm-up, and 40 ms of stop time a window. At load average
	 * 11-14 (2 CPUs) 40 ms was not enough either (issue 36: 0 windows in a 6.8 s run, all 15
	 * cut in the warm-up; a cut window gives no vote and the report then has no row): 50 %
	 * of 0.3 s, 150 ms a window. */
	/* Where the windows land is the machine's business (issue 43: at load, with `make clean;
	 * make -j2` beside make check, one run stored no window with instructions: every one cut in
	 * its warm-up or taken while the thread waited); what is checked is what the agent decided.
	 * Every run's summary count ("trace: N window(s)") is the windows its session stores, and
	 * runs repeat (at most PROFILE_RUNS) until one stored a window with instructions; each run
	 * prints how its windows ended. The rest is checked on that run's session. */
	enum { PROFILE_RUNS = 4 };
	int64_t sid = 0, windows = 0, distinct = 0;
	int runs = 0;
	for (; runs < PROFILE_RUNS && windows < 1; runs++) {
		unlink(e->t.alog); /* tp_spawn appends: one run's log at a time */
		rc = run(prof, e->t.alog, 180000);
		if (rc != 0 || tp_file_count(e->t.alog, "cl_matmul: 384x384 x12") < 1)
			tp_dump_file(e->t.alog);
		assert_int_equal(rc, 0);
		int64_t prev = sid;
		sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='board-a'");
		assert_true(sid > cal_sid && sid > prev);
		assert_true(tp_cl_int(e->t.db, "SELECT COUNT(*) FROM cl_commands WHERE session_id=%lld AND kernel_id>0",
				      (long long)sid) == 12);
		windows = tp_db_int(e->t.db,
				    "SELECT COUNT(*) FROM trace_windows WHERE session_id=%lld AND n_insns > 0",
				    (long long)sid);
		/* one count of windows (issue 42 item 4): the agent's summary, the windows stored (a
		 * long window is several records of one window_index) and the report's sensitivity rows */
		distinct = tp_db_int(e->t.db,
				     "SELECT COUNT(DISTINCT window_index) FROM trace_windows WHERE session_id=%lld",
				     (long long)sid);
		char *sumlog = tp_slurp(e->t.alog);
		assert_non_null(sumlog);
		/* the summary's " trace: N window(s)" line; the agent's log lines before it may hold
		 * " trace: " too (warnings under load, e.g. "agent: warning: trace: ...") */
		const char *tw = strstr(sumlog, " trace: ");
		unsigned agent_windows = 0;
		while (tw && sscanf(tw, " trace: %u window(s)", &agent_windows) != 1)
			tw = strstr(tw + 1, " trace: ");
		if (!tw)
			tp_dump_file(e->t.alog);
		assert_non_null(tw);
		const char *ended = strstr(tw, "windows ended: ");
		const char *how = ended ? ended : agent_windows ? "every one complete" : "none";
		fprintf(stderr, "# profile run %d: the agent took %u window(s), %lld stored with instructions; %.*s\n",
			runs + 1, agent_windows, (long long)windows, (int)strcspn(how, "\n"), how);
		free(sumlog);
		if (windows < 1)
			tp_dump_file(e->t.alog); /* the agent's summary says how its windows ended */
		assert_int_equal(agent_windows, distinct);
	}
	if (windows < 1)
		fail_msg("%d runs of agent profile stored no trace window with instructions (their summaries above)",
			 runs);
	/* one session holds every kind */
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM counter_samples WHERE session_id=%lld", (long long)sid) > 0);
	assert_true(tp_db_int(e->t.db, "SELECT COUNT(*) FROM records WHERE session_id=%lld AND kind='samples'",
			      (long long)sid) > 0);

	/* the session list names the calibration each session gets */
	char slist[300];
	tp_env_path(&e->t, "sessions.json", slist, sizeof(slist));
	char *ses[] = {coll_bin, "sessions", "--store", e->t.db, "--json", NULL};
	assert_int_equal(run(ses, slist, 60000), 0);
	char *sj = tp_slurp(slist);
	assert_non_null(sj);
	char needle[64];
	snprintf(needle, sizeof(needle), "\"calibration_session\":%lld}", (long long)cal_sid);
	int n_with = 0;
	for (const char *p = strstr(sj, needle); p; p = strstr(p + 1, needle))
		n_with++;
	free(sj);
	assert_int_equal(n_with, 1 + runs); /* the calibration session itself and the profile sessions */

	/* 3. the report, no --machine, no --kernel-model */
	char sidarg[32];
	snprintf(sidarg, sizeof(sidarg), "%lld", (long long)sid);
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidarg, NULL};
	assert_int_equal(run(rep, out, 60000), 0);
	char *text = tp_slurp(out);
	assert_non_null(text);
	char want[160];
	snprintf(want, sizeof(want), "ceilings from: session %lld, the latest calibration of this board", (long long)cal_sid);
	must_have(text, want, "the report");
	must_have(text, "  matmul                   GPU ", "the report's roofline");
	{
		char jout[300];
		tp_env_path(&e->t, "report.json", jout, sizeof(jout));
		char *jrep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidarg, "--format", "json", NULL};
		assert_int_equal(run(jrep, jout, 60000), 0);
		char *js = tp_slurp(jout);
		assert_non_null(js);
		const char *p = strstr(js, "\"sensitivity\":");
		assert_non_null(p);
		/* every stored window is in a row (used or discarded there) or among the windows of
		 * threads whose windows were all discarded (issue 36: a cut window gives no vote) */
		long sum = 0, w, norow = -1;
		const char *q = strstr(p, "\"windows_without_row\":");
		assert_non_null(q);
		assert_int_equal(sscanf(q, "\"windows_without_row\":%ld", &norow), 1);
		for (p = strstr(p, "\"windows_taken\":"); p && sscanf(p, "\"windows_taken\":%ld", &w) == 1;
		     p = strstr(p + 1, "\"windows_taken\":"))
			sum += w;
		free(js);
		if (sum + norow != distinct)
			fail_msg("the report's rows take %ld windows and %ld have no row, the store holds %lld", sum, norow,
				 (long long)distinct);
	}
	must_have(text, "kernel model of the session (agent profile --kernel-model)", "the report's roofline");
	if (strstr(text, "no trace windows in this session"))
		fail_msg("the sensitivity section is empty:\n%s", text);
	/* A row needs one window of a thread that was not discarded. Where every window was (too
	 * short: the emulator met an instruction it lacks and the single-stepped window ended early,
	 * or cut by the stop-time limit; seen once in a quiet make check beside the side lane), the
	 * report must say so with the counts, the rest is checked, and the test is a skip naming
	 * them (issue 43: decided on what was decided, not on where the windows landed). */
	char no_row[400] = "";
	if (!strstr(text, "added latency costing 10%")) {
		const char *nr = strstr(text, "no row: all ");
		if (!nr)
			fail_msg("the report's sensitivity section has neither a row nor why not:\n%s",
				 strstr(text, "latency sensitivity") ? strstr(text, "latency sensitivity") : text);
		snprintf(no_row, sizeof(no_row), "%.*s", (int)strcspn(nr, "\n"), nr);
		long all = -1;
		assert_int_equal(sscanf(nr, "no row: all %ld trace windows", &all), 1);
		assert_int_equal(all, distinct);
		fprintf(stderr, "the report: %s\n", no_row);
	}
	int64_t hw = tp_db_int(e->t.db, "SELECT COUNT(*) FROM events WHERE session_id=%lld AND type IN (0, 3, 4)",
			       (long long)sid);
	/* the event the agent sampled (its summary line " samples: N of EVENT at F Hz") is the one the
	 * report names, not one of the session's counting events (task-clock is counted beside it) */
	char *alog = tp_slurp(e->t.alog);
	assert_non_null(alog);
	const char *sl = strstr(alog, " samples: ");
	char sampled[64] = "", want_ev[96];
	unsigned long long nsamp = 0;
	if (!sl || sscanf(sl, " samples: %llu of %63s at", &nsamp, sampled) != 2)
		fail_msg("agent profile printed no \" samples: N of EVENT at\" line:\n%.4000s", alog);
	free(alog);
	if (hw == 0) /* no hardware PMU (this VM): the software sampling event is cpu-clock */
		assert_string_equal(sampled, "cpu-clock");
	snprintf(want_ev, sizeof(want_ev), "samples of %s at 999 Hz", sampled);
	must_have(text, want_ev, "the report's top functions");
	if (strstr(text, "samples of task-clock"))
		fail_msg("the report names the counted task-clock as the sampled event:\n%.4000s", text);
	char *top[] = {coll_bin, "report", "--store", e->t.db, "--session", sidarg, "--top", NULL};
	char tout[300];
	tp_env_path(&e->t, "top.txt", tout, sizeof(tout));
	assert_int_equal(run(top, tout, 60000), 0);
	char *tt = tp_slurp(tout);
	assert_non_null(tt);
	must_have(tt, want_ev, "collector report --top");
	free(tt);
	fprintf(stderr, "agent profile sampled %s (%llu samples); the report says \"%s\"\n", sampled, nsamp, want_ev);
	if (strstr(text, " CPU ") && strstr(text, "counters: W from")) {
		fprintf(stderr, "CPU dot placed from hardware counters\n");
	} else if (hw == 0) {
		must_have(text, "no hardware counters (the session has software events only): no CPU dot from counters",
			  "the report (software-only session)");
		/* no PMU: the CPU dot of the reference function from a work model over its sampled CPU time */
		char cmodel[300], cout[300];
		tp_env_path(&e->t, "cpu.model", cmodel, sizeof(cmodel));
		tp_env_path(&e->t, "report-cpu.txt", cout, sizeof(cout));
		f = fopen(cmodel, "w");
		assert_non_null(f);
		fprintf(f, "cpu:matmul_ref ops=%.0f bytes=%.0f\n", 2.0 * 384 * 384 * 384, 8.0 * 384 * 384 * 384);
		fclose(f);
		char *rep2[] = {coll_bin, "report", "--store", e->t.db, "--session", sidarg, "--kernel-model", cmodel, NULL};
		assert_int_equal(run(rep2, cout, 60000), 0);
		char *ct = tp_slurp(cout);
		assert_non_null(ct);
		must_have(ct, "  matmul_ref (CPU)         CPU ", "the report's roofline (work model)");
		must_have(ct, "CPU samples at 999 Hz (no FP or memory-traffic counters)", "the CPU dot's source");
		/* one statement about the CPU dot (issue 42: it was drawn, then "cannot place CPU dot") */
		must_have(ct, "note: the CPU dot is from the work model (cpu: lines of --kernel-model), not from the counters",
			  "the report's note on the CPU dot");
		if (strstr(ct, "no CPU dot") || strstr(ct, "cannot place"))
			fail_msg("the report draws the CPU dot and says there is none:\n%.4000s", ct);
		free(ct);
		fprintf(stderr, "no hardware PMU: CPU dot of matmul_ref from the work model and its CPU samples\n");
	} else {
		must_have(text, "CPU dot:", "the report (hardware counters without FP/refill events)");
		fprintf(stderr, "CPU dot not placed: the PMU lacks FP or refill events (the report says why)\n");
	}
	free(text);

	/* 4. the live page, which cannot take --machine */
	char path[96], *body = NULL;
	snprintf(path, sizeof(path), "/session/%lld/roofline-gpu.svg", (long long)sid);
	int code = tp_http_get(e->http_port, path, &body);
	assert_non_null(body);
	if (code != 200)
		fail_msg("GET %s: %d\n%.2000s", path, code, body);
	must_have(body, "<svg", path);
	must_have(body, "class=\"dot", path);
	must_have(body, "data-name=\"matmul\"", path);
	free(body);
	assert_true(tp_alive(e->t.collector));
	if (no_row[0]) {
		fprintf(stderr, "SKIP: the sensitivity row: every trace window of this run was discarded (the report: %s); "
				"everything else passed\n",
			no_row);
		skip();
	}
}

/* Measures, in the browser, every text of the report's roofline charts (real
 * font metrics, getBoundingClientRect) and writes "CHARTS n TEXTS a,b OVERLAPS k"
 * and the overlapping pairs into the page, which --dump-dom then returns. */
static const char overlap_script[] =
	"<script>(function(){var out=[],bad=[];"
	"document.querySelectorAll('figure[class*=roofline] svg').forEach(function(svg){"
	"var ts=Array.prototype.slice.call(svg.querySelectorAll('text'));"
	"var bs=ts.map(function(t){return t.getBoundingClientRect();});"
	"for(var i=0;i<bs.length;i++)for(var j=i+1;j<bs.length;j++){var a=bs[i],b=bs[j];"
	"if(!a.width||!b.width)continue;"
	"var ox=Math.min(a.right,b.right)-Math.max(a.left,b.left),oy=Math.min(a.bottom,b.bottom)-Math.max(a.top,b.top);"
	"if(ox>0.5&&oy>0.5)bad.push(ts[i].textContent+' | '+ts[j].textContent);}"
	"out.push(ts.length);});"
	"var d=document.createElement('pre');d.id='overlap-result';"
	"d.textContent='CHARTS '+out.length+' TEXTS '+out.join(',')+' OVERLAPS '+bad.length+' END\\n'+bad.join('\\n');"
	"document.body.appendChild(d);})();</script>";

static int chromium(const char *dir, const char *url, const char *opt, const char *out_path)
{
	char cmd[2048];
	snprintf(cmd, sizeof(cmd),
		 "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
		 "--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage "
		 "--user-data-dir=%s/chrome-profile %s '%s' >%s 2>%s/chromium.err",
		 dir, opt, url, out_path, dir);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The HTML report of a real profile session (PoCL's close bandwidth ceilings, a kernel
 * dot) in headless Chromium: a screenshot, and no two texts of a roofline chart overlap. */
static void test_profile_cmd_report_labels_do_not_overlap_in_chromium(void **state)
{
	struct env *e = *state;
	if (no_opencl) {
		fprintf(stderr, "skipped: %s\n", no_opencl);
		skip();
	}
	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		print_message("chromium not installed (apt-get install chromium): browser test skipped\n");
		skip();
	}
	char agent[512], coll_bin[512], mm[512], kmodel[300], html[300], log[300], dom[300], shot[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("collector", coll_bin, sizeof(coll_bin));
	tp_bin("cl-workloads/cl_matmul", mm, sizeof(mm));
	tp_env_path(&e->t, "kernels.model", kmodel, sizeof(kmodel));
	tp_env_path(&e->t, "report.html", html, sizeof(html));
	tp_env_path(&e->t, "calibrate.log", log, sizeof(log));
	tp_env_path(&e->t, "dom.html", dom, sizeof(dom));
	tp_env_path(&e->t, "report.png", shot, sizeof(shot));
	char *cal[] = {agent, "calibrate", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", "board-b",
		       "--quick", "--only", "device,peak,cpu_peak,mem_slots", NULL};
	assert_int_equal(run(cal, log, 180000), 0);
	FILE *f = fopen(kmodel, "w");
	assert_non_null(f);
	fprintf(f, "matmul ops=512 bytes=2052\n");
	fclose(f);
	char *prof[] = {agent, "profile", "--collector", e->t.coll, "--spool", e->t.spool, "--agent-id", "board-b",
			"--kernel-model", kmodel, "--no-trace", "--", mm, "256", "4", NULL};
	assert_int_equal(run(prof, e->t.alog, 180000), 0);
	int64_t sid = tp_db_int(e->t.db, "SELECT MAX(id) FROM sessions WHERE agent_id='board-b'");
	char sidarg[32];
	snprintf(sidarg, sizeof(sidarg), "%lld", (long long)sid);
	char *rep[] = {coll_bin, "report", "--store", e->t.db, "--session", sidarg, "--format", "html", NULL};
	assert_int_equal(run(rep, html, 60000), 0);
	/* the page as the collector wrote it, plus the measuring script at its end */
	f = fopen(html, "a");
	assert_non_null(f);
	fputs(overlap_script, f);
	fclose(f);
	char url[400];
	snprintf(url, sizeof(url), "file://%s", html);
	assert_int_equal(chromium(e->t.dir, url, "--dump-dom", dom), 0);
	char *text = tp_slurp(dom);
	assert_non_null(text);
	const char *res = strstr(text, "id=\"overlap-result\">");
	if (!res) {
		tp_dump_file(dom);
		free(text);
		fail_msg("the measuring script did not run in chromium");
	}
	res = strchr(res, '>') + 1;
	int charts = 0, overlaps = -1;
	char texts[64] = "";
	assert_int_equal(sscanf(res, "CHARTS %d TEXTS %63s OVERLAPS %d", &charts, texts, &overlaps), 3);
	fprintf(stderr, "chromium: %d roofline chart(s), texts per chart %s, %d overlapping pair(s)\n", charts, texts,
		overlaps);
	assert_int_equal(charts, 2); /* the GPU and the CPU roof */
	if (overlaps != 0)
		fprintf(stderr, "%.3000s\n", res);
	free(text);
	assert_int_equal(overlaps, 0);
	/* and a screenshot of it */
	char opt[400];
	snprintf(opt, sizeof(opt), "--window-size=1200,1800 --screenshot=%s", shot);
	assert_int_equal(chromium(e->t.dir, url, opt, dom), 0);
	assert_int_equal(access(shot, R_OK), 0);
	const char *keep = getenv("PROF_REPORT_SAMPLES");
	if (keep) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cp %s %s/profile-report-screenshot.png", shot, keep);
		assert_int_equal(system(cmd), 0);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_profile_cmd_calibrate_then_profile_reports_without_machine, setup,
						tp_env_free),
		cmocka_unit_test_setup_teardown(test_profile_cmd_report_labels_do_not_overlap_in_chromium, setup,
						tp_env_free),
	};
	return cmocka_run_group_tests(tests, group_setup, NULL);
}
