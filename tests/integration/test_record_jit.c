/* JIT code named from /tmp/perf-PID.map (issue 39): tests/workloads/jit_loop
 * runs machine code it copied into anonymous memory and names it in its perf
 * map as a JIT does (node --perf-basic-prof), appending a second symbol half
 * way (the map grows). `agent record` ships the map's lines (PerfMap records,
 * agent/perf_map.c) and the collector names those samples in report --top,
 * flame and the pprof export. perf is the oracle: `perf record -e cpu-clock`
 * of the same program, `perf report --sort sym` names the same two functions;
 * jit_cold's share of the JIT samples (1/7 of the work) agrees within 8 points.
 * A JIT frame that is never the leaf (a trampoline into C) is read from a new call chain and
 * named in the chains (report --by stack) as in perf script's.
 * And a JIT nobody here wrote: node --perf-basic-prof (Debian's nodejs) runs a hot JS function;
 * ours names V8's optimized hot() from node's own map with perf report's share within 8 points.
 * Work is bounded (rounds of a loop), not time: shares do not depend on load. */
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

#include "testproc.h"

#define ROUNDS "400"

/* perf report --stdio --sort sym -q: "  84.30%  [.] jit_hot"; the share of fn, -1 if none. */
static double perf_share(const char *out, const char *fn)
{
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		double share;
		char f[256];
		if (sscanf(p, " %lf%% [.] %255s", &share, f) == 2 && strcmp(f, fn) == 0)
			return share;
	}
	return -1;
}

static void put_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

static int run(char **argv, const char *log, int timeout_ms)
{
	int status;
	pid_t pid = tp_spawn(argv, log);
	if (tp_wait(pid, timeout_ms, &status) != 0 || !WIFEXITED(status)) {
		tp_dump_file(log);
		return -1;
	}
	return WEXITSTATUS(status);
}

static void unlink_map(int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	if (pid > 0)
		unlink(path);
}

/* The map file the program named in its output (in log, after marker) is removed (JITs leave theirs). */
static void unlink_map_in_log(const char *log, const char *marker)
{
	char *lg = tp_slurp(log);
	const char *m = lg ? strstr(lg, marker) : NULL;
	unlink_map(m ? atoi(m + strlen(marker)) : 0);
	free(lg);
}

/* The oracle's cold share of the JIT samples, -1 when perf cannot run here. */
static double perf_cold_share(struct tp_env *e, const char *prog)
{
	if (access("/usr/bin/perf", X_OK) != 0)
		return -1; /* linux-perf (scripts/deps.sh) */
	char data[300], plog[300], rep[300];
	tp_env_path(e, "perf.data", data, sizeof(data));
	tp_env_path(e, "perf.log", plog, sizeof(plog));
	tp_env_path(e, "perf-report.txt", rep, sizeof(rep));
	char *rec[] = {"/usr/bin/perf", "record", "-q", "-e", "cpu-clock", "-F", "999", "-o", data, "--",
		       (char *)prog,	ROUNDS,	  NULL};
	int rc = run(rec, plog, 60000);
	char *repv[] = {"/usr/bin/perf", "report", "-i", data, "--stdio", "--sort", "sym", "-q", NULL};
	int rrc = rc == 0 ? run(repv, rep, 60000) : -1;
	unlink_map_in_log(plog, "map /tmp/perf-"); /* perf reads it at report time */
	if (rc != 0 || rrc != 0)
		return -1;
	char *out = tp_slurp(rep);
	double hot = out ? perf_share(out, "jit_hot") : -1, cold = out ? perf_share(out, "jit_cold") : -1;
	fprintf(stderr, "# perf: jit_hot %.2f %%, jit_cold %.2f %% of all samples\n", hot, cold);
	free(out);
	return hot > 0 && cold > 0 ? 100.0 * cold / (hot + cold) : -2;
}

static void test_record_jit_perf_map_named(void **state)
{
	struct tp_env *e = *state;
	char agent[512], prog[512], coll[512], rlog[300], alog2[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/jit_loop", prog, sizeof(prog));
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "top.txt", rlog, sizeof(rlog));
	tp_env_path(e, "view.log", alog2, sizeof(alog2));
	char *argv[] = {agent, "record", "--collector", e->coll, "--spool", e->spool, "--agent-id",
			"jit", "-F",	 "999",		"--",	 prog,	    ROUNDS,   NULL};
	int rc = run(argv, e->alog, 60000);
	unlink_map_in_log(e->alog, "map /tmp/perf-");
	if (rc == 77) {
		print_message("skipped: jit_loop has no machine code for this architecture\n");
		skip();
	}
	if (rc != 0) {
		tp_dump_file(e->alog);
		fail_msg("agent record failed (%d)", rc);
	}
	int64_t sid = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id='jit'");
	assert_true(sid > 0);
	int64_t pid = tp_db_int(e->db, "SELECT MIN(pid) FROM perf_map_syms");
	/* both lines: the first read, and the one appended later read when the map grew */
	assert_int_equal(tp_db_int(e->db, "SELECT COUNT(*) FROM perf_map_syms"), 2);
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll, "report", "--store", e->db, "--session", sidbuf, "--top", "--limit", "50", NULL};
	assert_int_equal(run(rep, rlog, 30000), 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	char module[64];
	snprintf(module, sizeof(module), "perf-%d.map", (int)pid);
	long all = tp_top_samples(out, NULL, NULL), hot = tp_top_samples(out, module, "jit_hot"),
	     cold = tp_top_samples(out, module, "jit_cold"), unknown = tp_top_samples(out, "[unknown]", NULL);
	fprintf(stderr, "# jit_loop: %ld samples: jit_hot %ld, jit_cold %ld, [unknown] %ld\n", all, hot, cold,
		unknown);
	if (hot == 0 || cold == 0) {
		fprintf(stderr, "%s", out);
		free(out);
		fail_msg("jit_hot / jit_cold not named in the report");
	}
	assert_true((hot + cold) * 4 >= all * 3); /* the program is its JIT loops (86 % here) */
	assert_true(unknown * 20 <= all);
	double ours = 100.0 * (double)cold / (double)(hot + cold);
	/* the work says 1/7 = 14.3 % */
	assert_true(ours > 7.0 && ours < 22.0);
	double theirs = perf_cold_share(e, prog);
	if (theirs >= 0) {
		fprintf(stderr, "# jit_cold share of the JIT samples: ours %.1f %%, perf %.1f %%\n", ours,
			theirs);
		assert_true(ours - theirs < 8.0 && theirs - ours < 8.0); /* 450 samples: 3.5 sigma */
	} else {
		fprintf(stderr, "# perf not run here (%s): the work's share alone is checked\n",
			theirs == -1 ? "no perf or it failed" : "perf named no jit_cold");
	}
	free(out);
	/* flame graph and pprof export name them too */
	char svg[300], pb[300];
	tp_env_path(e, "flame.svg", svg, sizeof(svg));
	tp_env_path(e, "jit.pb.gz", pb, sizeof(pb));
	char *flame[] = {coll, "flame", "--store", e->db, "--session", sidbuf, "-o", svg, NULL};
	assert_int_equal(run(flame, alog2, 30000), 0);
	char *s = tp_slurp(svg);
	assert_non_null(s);
	assert_non_null(strstr(s, "jit_cold"));
	free(s);
	char *exp[] = {coll, "export", "--store", e->db, "--session", sidbuf, "--pprof", pb, NULL};
	assert_int_equal(run(exp, alog2, 30000), 0);
	char cmd[700];
	snprintf(cmd, sizeof(cmd), "(gzip -dc %s 2>/dev/null || cat %s) | grep -a -q jit_cold", pb, pb);
	assert_int_equal(system(cmd), 0);
}

/* Samples in anonymous memory (JIT code) of the report --top text: rows of a perf map's module, and
 * those left unnamed there ("[anon]" of module "anon", "[unknown]"); *hot: those named V8's hot()
 * ("JS:*hot" in node 20, "LazyCompile:*hot" in node 18; ^ and ~ for its earlier tiers). */
static long node_jit_rows(const char *out, long *hot)
{
	long sum = 0;
	*hot = 0;
	struct tp_top_row r;
	for (const char *c = out; tp_top_next(&c, &r);) {
		bool map = strncmp(r.mod, "perf-", 5) == 0;
		if (map || strcmp(r.mod, "anon") == 0 || strcmp(r.mod, "[unknown]") == 0)
			sum += r.n;
		if (map && strstr(r.fn, "hot"))
			*hot += r.n;
	}
	return sum;
}

/* perf report --sort dso,sym -q: the summed share of rows of its JIT dso ("[JIT] tid N", the perf map
 * read), and in *hot those whose symbol holds "hot". */
static double perf_node_jit(const char *out, double *hot)
{
	double sum = 0;
	*hot = 0;
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		double share;
		const char *eol = strchr(p, '\n'), *jit = strstr(p, "[JIT] tid "), *sym = strstr(p, "[.] ");
		if (sscanf(p, " %lf%%", &share) != 1 || !jit || (eol && jit > eol))
			continue;
		sum += share;
		if (sym && (!eol || sym < eol) && strstr(sym, "hot") && (!eol || strstr(sym, "hot") < eol))
			*hot += share;
	}
	return sum;
}

/* A program nobody here wrote: node --perf-basic-prof (Debian's nodejs) writes its own perf map for
 * the code V8 compiles; our report names the samples in its JIT code as perf report does: the share
 * of them named hot() at least 90 % in both, within 5 points of each other. */
static void test_record_jit_node_perf_basic_prof(void **state)
{
	struct tp_env *e = *state;
	if (access("/usr/bin/node", X_OK) != 0) {
		print_message(
		    "skipped: no /usr/bin/node (apt-get install nodejs; scripts/deps.sh installs it)\n");
		skip();
	}
	char agent[512], coll[512], js[300], rlog[300], plog[300], data[300], prep[300], v8log[320];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "hot.js", js, sizeof(js));
	tp_env_path(e, "top.txt", rlog, sizeof(rlog));
	tp_env_path(e, "perf.log", plog, sizeof(plog));
	tp_env_path(e, "perf.data", data, sizeof(data));
	tp_env_path(e, "perf-report.txt", prep, sizeof(prep));
	/* --perf-basic-prof also writes V8's code log: into the env dir, not the current one */
	snprintf(v8log, sizeof(v8log), "--logfile=%s/v8.log", e->dir);
	/* bounded work: 40 calls of a 200,000-step loop (about 0.3 s of CPU with startup) */
	put_text(js, "function hot(n) { let s = 0; for (let i = 0; i < n; i++) s = (s + i * i) % 1000003; "
		     "return s; }\n"
		     "let t = 0; for (let r = 0; r < 40; r++) t += hot(200000);\n"
		     "console.log('node hot', t, 'jit map pid=' + process.pid);\n");
	char *argv[] = {agent,
			"record",
			"--collector",
			e->coll,
			"--spool",
			e->spool,
			"--agent-id",
			"node",
			"-F",
			"999",
			"--",
			"/usr/bin/node",
			"--perf-basic-prof",
			v8log,
			"--no-logfile-per-isolate",
			js,
			NULL};
	int rc = run(argv, e->alog, 120000);
	unlink_map_in_log(e->alog, "jit map pid=");
	assert_int_equal(rc, 0);
	int64_t sid = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id='node'");
	assert_true(sid > 0);
	if (tp_db_int(e->db, "SELECT COUNT(*) FROM perf_map_syms") <= 0) {
		tp_dump_file(e->alog);
		tp_dump_file(e->clog);
		fail_msg("no JIT symbols stored from node's perf map");
	}
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll, "report", "--store", e->db, "--session", sidbuf, "--top", "--limit", "50", NULL};
	assert_int_equal(run(rep, rlog, 30000), 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	long hot, all = tp_top_samples(out, NULL, NULL), jit = node_jit_rows(out, &hot);
	double ours = jit ? 100.0 * (double)hot / (double)jit : 0;
	fprintf(stderr,
		"# node: %ld samples, %ld in JIT code, %ld of them named hot() from the perf map (%.1f %%)\n",
		all, jit, hot, ours);
	if (hot == 0 || ours < 90.0) {
		fprintf(stderr, "%s", out);
		free(out);
		fail_msg("node's hot() not named");
	}
	free(out);
	if (access("/usr/bin/perf", X_OK) != 0)
		return; /* the oracle: linux-perf (scripts/deps.sh) */
	char *rec[] = {"/usr/bin/perf",
		       "record",
		       "-q",
		       "-e",
		       "cpu-clock",
		       "-F",
		       "999",
		       "-o",
		       data,
		       "--",
		       "/usr/bin/node",
		       "--perf-basic-prof",
		       v8log,
		       "--no-logfile-per-isolate",
		       js,
		       NULL};
	rc = run(rec, plog, 120000);
	char *repv[] = {"/usr/bin/perf", "report", "-i", data, "--stdio", "--sort", "dso,sym", "-q", NULL};
	int rrc = rc == 0 ? run(repv, prep, 60000) : -1;
	unlink_map_in_log(plog, "jit map pid="); /* perf reads it at report time */
	assert_int_equal(rc, 0);
	assert_int_equal(rrc, 0);
	char *pout = tp_slurp(prep);
	double phot, pjit = pout ? perf_node_jit(pout, &phot) : 0;
	double theirs = pjit > 0 ? 100.0 * phot / pjit : 0;
	fprintf(stderr,
		"# node: of the samples in JIT code, hot(): ours %.1f %%, perf %.1f %% (perf: %.1f %% of all "
		"in JIT code)\n",
		ours, theirs, pjit);
	free(pout);
	assert_true(theirs >= 90.0);
	assert_true(ours - theirs < 5.0 && theirs - ours < 5.0);
}

/* report --by stack rows "self% self total% total process pid agent stack": samples of stacks
 * holding "main;" and ending in work, and in *named those with main;jit_tramp;work. */
static long tramp_rows(const char *out, long *named)
{
	long sum = 0;
	*named = 0;
	for (const char *p = out; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
		double a, b;
		long n, t, pid;
		char proc[64], ag[64], stack[2048];
		if (sscanf(p, "%lf%% %ld %lf%% %ld %63s %ld %63s %2047s", &a, &n, &b, &t, proc, &pid, ag,
			   stack) != 8 ||
		    !strstr(stack, "main;") || !strstr(stack, ";work"))
			continue;
		sum += n;
		if (strstr(stack, "main;jit_tramp;work"))
			*named += n;
	}
	return sum;
}

/* perf script -F ip,sym: samples (blank-line separated blocks) whose chain holds main and work, and
 * in *named those that also hold jit_tramp. */
static long perf_tramp(const char *out, long *named)
{
	long sum = 0;
	*named = 0;
	const char *p = out;
	while (p && *p) {
		const char *end = strstr(p, "\n\n");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		char *blk = strndup(p, len);
		if (blk && strstr(blk, " main\n") && strstr(blk, " work\n")) {
			sum++;
			*named += strstr(blk, " jit_tramp\n") != NULL;
		}
		free(blk);
		p = end ? end + 2 : NULL;
	}
	return sum;
}

/* The JIT code only a frame of the call chains (a trampoline into C, jit_loop N calls): its map is read
 * for a new chain that passes through anonymous memory, and the chains name it, as perf's do. */
static void test_record_jit_frame_in_call_chain(void **state)
{
	struct tp_env *e = *state;
	char agent[512], prog[512], coll[512], rlog[300];
	tp_bin("agent", agent, sizeof(agent));
	tp_bin("workloads/jit_loop", prog, sizeof(prog));
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "stacks.txt", rlog, sizeof(rlog));
	char *argv[] = {agent, "record", "--collector", e->coll, "--spool", e->spool, "--agent-id", "jitg",
			"-g",  "-F",	 "999",		"--",	 prog,	    "800",    "calls",	    NULL};
	int rc = run(argv, e->alog, 60000);
	unlink_map_in_log(e->alog, "map /tmp/perf-");
	if (rc == 77) {
		print_message("skipped: jit_loop's trampoline is x86_64 code\n");
		skip();
	}
	assert_int_equal(rc, 0);
	int64_t sid = tp_db_int(e->db, "SELECT MAX(id) FROM sessions WHERE agent_id='jitg'");
	char sidbuf[32];
	snprintf(sidbuf, sizeof(sidbuf), "%lld", (long long)sid);
	char *rep[] = {coll,   "report", "--store", e->db, "--session", sidbuf,
		       "--by", "stack",	 "--limit", "50",  NULL};
	assert_int_equal(run(rep, rlog, 30000), 0);
	char *out = tp_slurp(rlog);
	assert_non_null(out);
	long named, through = tramp_rows(out, &named);
	fprintf(stderr, "# chains through main to work: %ld samples, main;jit_tramp;work in %ld\n", through,
		named);
	if (through == 0 || named * 100 < through * 95) {
		fprintf(stderr, "%s", out);
		free(out);
		fail_msg("jit_tramp not named in the call chains");
	}
	free(out);
	if (access("/usr/bin/perf", X_OK) != 0)
		return;
	char data[300], plog[300], pscript[300];
	tp_env_path(e, "perf-g.data", data, sizeof(data));
	tp_env_path(e, "perf-g.log", plog, sizeof(plog));
	tp_env_path(e, "perf-script.txt", pscript, sizeof(pscript));
	char *rec[] = {
	    "/usr/bin/perf", "record", "-q", "-g", "-e", "cpu-clock", "-F", "999", "-o", data, "--", prog,
	    "800",	     "calls",  NULL};
	rc = run(rec, plog, 60000);
	char *scr[] = {"/usr/bin/perf", "script", "-i", data, "-F", "ip,sym", NULL};
	int src = rc == 0 ? run(scr, pscript, 60000) : -1;
	unlink_map_in_log(plog, "map /tmp/perf-"); /* perf reads it at script time */
	assert_int_equal(rc, 0);
	assert_int_equal(src, 0);
	char *pout = tp_slurp(pscript);
	long pnamed = 0, pthrough = pout ? perf_tramp(pout, &pnamed) : 0;
	fprintf(stderr, "# perf: chains through main to work: %ld samples, jit_tramp in %ld\n", pthrough,
		pnamed);
	free(pout);
	assert_true(pthrough > 0 && pnamed * 100 >= pthrough * 95);
}

static int setup(void **state)
{
	return tp_env_new(state, sizeof(struct tp_env), "jit", true);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_record_jit_perf_map_named, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_record_jit_frame_in_call_chain, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_record_jit_node_perf_basic_prof, setup, tp_env_free),
	};
	return cmocka_run_group_tests_name("record_jit", tests, NULL, NULL);
}
