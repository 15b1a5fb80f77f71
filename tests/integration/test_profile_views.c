/* The profile views and exports over a store of two agents' CPU samples with
 * call chains through a real C++ program (tests/lib/profile_fixture.h):
 * `collector export --pprof` read by `go tool pprof -top` (Debian golang-go)
 * names the same top functions, in the same order, as `collector report`;
 * `--folded` lines; kernel samples one [kernel] frame, their functions with
 * `--kallsyms`; `collector flame` HTML in headless Chromium (a click zooms,
 * a search highlights and counts, hover and callers/callees answer) and SVG;
 * `collector diff` of two time ranges and of two sessions; unresolved
 * addresses grouped per module; the Perfetto export's CPU sample track. */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <cmocka.h>

#include <stdio.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "elf_buildid.h"
#include "profile_fixture.h"
#include "testproc.h"

struct env {
	struct tp_env t;
	struct pf_fixture f;
	char coll[512];
	const char *skip_reason;
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "views", false) < 0)
		return -1;
	struct env *e = *state;
	tp_bin("collector", e->coll, sizeof(e->coll));
	int rc = pf_build(&e->f, e->t.dir);
	if (rc == -2 /* -ENOENT */)
		e->skip_reason = "g++ not installed (apt-get install g++): no C++ program to profile";
	else if (rc < 0)
		return -1;
	return 0;
}

/* Run a shell command line; its stdout into out_path. Exit status. */
static int sh(const char *out_path, const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	assert_true(n > 0 && (size_t)n < sizeof(cmd) - 400);
	if (out_path)
		snprintf(cmd + n, sizeof(cmd) - (size_t)n, " >%s", out_path);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define SKIP_IF_NEEDED(e)                                                                                  \
	do {                                                                                               \
		if ((e)->skip_reason) {                                                                    \
			print_message("skipped: %s\n", (e)->skip_reason);                                  \
			skip();                                                                            \
		}                                                                                          \
	} while (0)

/* The "name" fields of a report --json's rows, in order, into names (max n). */
static size_t report_names(const char *json, char names[][160], size_t n)
{
	size_t k = 0;
	const char *p = strstr(json, "\"rows\":[");
	while (p && k < n && (p = strstr(p, "{\"name\":\""))) {
		p += 9;
		const char *q = strchr(p, '"');
		if (!q)
			break;
		/* the JSON writer escapes < and > (json.h) */
		char *d = names[k++];
		size_t o = 0;
		for (const char *c = p; c < q && o + 1 < 160; c++) {
			if (strncmp(c, "\\u003c", 6) == 0 || strncmp(c, "\\u003e", 6) == 0) {
				d[o++] = c[5] == 'c' ? '<' : '>';
				c += 5;
			} else {
				d[o++] = *c;
			}
		}
		d[o] = 0;
		p = q;
	}
	return k;
}

static void test_profile_views_pprof_top_matches_report(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	if (system("command -v go >/dev/null 2>&1") != 0) {
		print_message("skipped: go not installed (apt-get install golang-go): no go tool pprof\n");
		skip();
	}
	char rep[400], pb[400], top[400];
	tp_env_path(&e->t, "report.json", rep, sizeof(rep));
	tp_env_path(&e->t, "cpu.pb.gz", pb, sizeof(pb));
	tp_env_path(&e->t, "pprof-top.txt", top, sizeof(top));
	assert_int_equal(sh(rep, "%s report --store %s --since 1h --by function --json --limit 10", e->coll, e->f.db), 0);
	assert_int_equal(sh(NULL, "%s export --store %s --since 1h --pprof %s", e->coll, e->f.db, pb), 0);
	/* HOME and GOCACHE: go wants a writable cache even to run a prebuilt tool */
	assert_int_equal(sh(top, "HOME=%s GOCACHE=%s/gocache go tool pprof -top -sample_index=samples %s 2>%s/pprof.err",
			    e->t.dir, e->t.dir, pb, e->t.dir),
			 0);
	char *rj = tp_slurp(rep), *pt = tp_slurp(top);
	assert_non_null(rj);
	assert_non_null(pt);
	char names[10][160];
	size_t nn = report_names(rj, names, 10);
	assert_true(nn >= 3);
	/* pprof -top rows: "flat flat% sum% cum cum% name", after a header line "flat  flat%  ..." */
	const char *p = strstr(pt, "flat%");
	assert_non_null(p);
	p = strchr(p, '\n');
	char pnames[10][160];
	size_t pn = 0;
	while (p && *p && pn < 10) {
		p++;
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		char line[400];
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		char f1[32], f2[32], f3[32], f4[32], f5[32];
		int off = 0;
		if (sscanf(line, "%31s %31s %31s %31s %31s %n", f1, f2, f3, f4, f5, &off) == 5 && off > 0)
			snprintf(pnames[pn++], 160, "%s", line + off);
		p = eol;
	}
	fprintf(stderr, "report top:");
	for (size_t i = 0; i < nn; i++)
		fprintf(stderr, " [%s]", names[i]);
	fprintf(stderr, "\npprof top:");
	for (size_t i = 0; i < pn; i++)
		fprintf(stderr, " [%s]", pnames[i]);
	fprintf(stderr, "\n");
	/* the three hottest functions (distinct counts in the fixture) agree, in order */
	assert_true(pn >= 3);
	for (int i = 0; i < 3; i++)
		assert_string_equal(pnames[i], names[i]);
	assert_string_equal(names[0], "long demo::hot<long>(long)");
	free(rj);
	free(pt);
	/* -raw reads it too, with the labels */
	char raw[400];
	tp_env_path(&e->t, "pprof-raw.txt", raw, sizeof(raw));
	assert_int_equal(sh(raw, "HOME=%s GOCACHE=%s/gocache go tool pprof -raw %s 2>>%s/pprof.err", e->t.dir, e->t.dir,
			    pb, e->t.dir),
			 0);
	assert_true(tp_file_count(raw, "comm:[demo]") > 0);
	assert_true(tp_file_count(raw, "demo::Worker::run(long)") > 0);
	assert_true(tp_file_count(raw, "samples/count cpu/nanoseconds") > 0);
	/* issue 39: the mappings carry the file's path and build-id (what re-symbolizing needs:
	 * "ID: 0xSTART/0xLIMIT/0xOFFSET PATH BUILDID"), and the duration is the sampled window */
	uint8_t bid[64];
	int bl = elf_build_id(e->f.bin, bid, sizeof(bid));
	assert_true(bl > 0);
	char want[800], hex[130];
	for (int i = 0; i < bl; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	snprintf(want, sizeof(want), " %s %s ", e->f.bin, hex);
	if (tp_file_count(raw, want) != 1) {
		tp_dump_file(raw);
		fail_msg("no mapping '%s' in go tool pprof -raw", want);
	}
	int64_t span = tp_db_int(e->f.db, "SELECT MAX(s.realtime_ns + i.t_ns) - MIN(s.realtime_ns + i.t_ns - i.interval_ns)"
					   " FROM sample_intervals i JOIN sessions s ON s.id = i.session_id");
	char *rt = tp_slurp(raw);
	assert_non_null(rt);
	const char *d = strstr(rt, "Duration: ");
	assert_non_null(d);
	fprintf(stderr, "# pprof -raw %.*s; the store's intervals span %.3f s\n", (int)strcspn(d, "\n"), d, span / 1e9);
	free(rt);
	/* -top says it in seconds ("Duration: 310s, Total samples = ...") */
	rt = tp_slurp(top);
	assert_non_null(rt);
	d = strstr(rt, "Duration: ");
	double secs = 0;
	assert_non_null(d);
	if (sscanf(d, "Duration: %lfs", &secs) == 1)
		assert_true(secs * 1e9 >= span * 0.99 && secs * 1e9 <= span * 1.01 + 1e9);
	else
		fail_msg("unexpected pprof duration: %.40s", d);
	free(rt);
	/* file:line from the -g binary's DWARF (libdw): -lines names each function's source line
	 * ("demo::Worker::run(long) /dir/demo.cpp:5"); the lines are where the fixture's source
	 * (profile_fixture.c) puts each function: run on line 5, cold on 6, hot's body on 2-3 */
	char lines[400], src[600], want_l[800];
	tp_env_path(&e->t, "pprof-lines.txt", lines, sizeof(lines));
	assert_int_equal(sh(lines, "HOME=%s GOCACHE=%s/gocache go tool pprof -lines -top -sample_index=samples %s 2>>%s/pprof.err",
			    e->t.dir, e->t.dir, pb, e->t.dir),
			 0);
	tp_env_path(&e->t, "demo.cpp", src, sizeof(src));
	static const struct {
		const char *fn;
		int lo, hi;
	} want_lines[] = {{"demo::Worker::run(long)", 5, 5}, {"demo::cold(int*)", 6, 6}, {"long demo::hot<long>(long)", 2, 3}};
	for (size_t i = 0; i < sizeof(want_lines) / sizeof(want_lines[0]); i++) {
		int found = 0;
		for (int l = want_lines[i].lo; l <= want_lines[i].hi; l++) {
			snprintf(want_l, sizeof(want_l), "%s %s:%d", want_lines[i].fn, src, l);
			found += tp_file_count(lines, want_l);
		}
		fprintf(stderr, "# pprof -lines: %s\n", want_l);
		if (found != 1) {
			tp_dump_file(lines);
			fail_msg("no '%s %s:%d-%d' in go tool pprof -lines -top", want_lines[i].fn, src, want_lines[i].lo,
				 want_lines[i].hi);
		}
	}
}

static void test_profile_views_folded_lines(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400];
	tp_env_path(&e->t, "a.folded", out, sizeof(out));
	assert_int_equal(sh(NULL, "%s export --store %s --session %lld --folded %s", e->coll, e->f.db,
			    (long long)e->f.sid_a, out),
			 0);
	char *t = tp_slurp(out);
	assert_non_null(t);
	/* hot<long>: 10 x 10 + 10 x 40; cold: 10 x 30 + 10 x 5; python: 15 addresses x 2 in one [module] frame */
	assert_string_equal(t, "demo;main;demo::Worker::run(long);long demo::hot<long>(long) 500\n"
			       "demo;main;demo::cold(int*) 350\n"
			       "python3.11;[python3.11] 30\n");
	free(t);
}

static void test_profile_views_unresolved_grouped_per_module(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400];
	tp_env_path(&e->t, "py.json", out, sizeof(out));
	assert_int_equal(sh(out, "%s report --store %s --since 1h --comm python3.11 --json", e->coll, e->f.db), 0);
	char *t = tp_slurp(out);
	assert_non_null(t);
	char names[10][160];
	/* 15 addresses of python3.11 (no file on this host): one row */
	assert_int_equal(report_names(t, names, 10), 1);
	assert_string_equal(names[0], "[python3.11]");
	assert_non_null(strstr(t, "\"self\":30,"));
	free(t);
}

/* Kernel samples: one [kernel] row without symbols, the function with --kallsyms. */
static void test_profile_views_kernel_functions_from_kallsyms(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char ks[400], out[400];
	tp_env_path(&e->t, "kallsyms", ks, sizeof(ks));
	tp_env_path(&e->t, "kernel.folded", out, sizeof(out));
	FILE *f = fopen(ks, "w");
	assert_non_null(f);
	fputs(PF_KALLSYMS, f);
	fclose(f);
	assert_int_equal(sh(NULL, "%s export --store %s --comm kworker --folded %s", e->coll, e->f.db, out), 0);
	char *t = tp_slurp(out);
	assert_non_null(t);
	assert_string_equal(t, "kworker;[kernel] 70\n");
	free(t);
	assert_int_equal(sh(NULL, "%s export --store %s --comm kworker --kallsyms %s --folded %s", e->coll, e->f.db, ks,
			    out),
			 0);
	t = tp_slurp(out);
	assert_non_null(t);
	assert_string_equal(t, "kworker;do_syscall_64 70\n");
	free(t);
}

static const char browser_script[] =
	"<script>(function(){var out=[],box=document.getElementById('flame'),svg=box.querySelector('svg');"
	"function frames(n){return [].filter.call(box.querySelectorAll('g.pf-frame'),function(g){"
	"return !n||g.getAttribute('data-name')===n;});}"
	"out.push('FRAMES '+frames().length);"
	"var g=frames('demo::cold(int*)')[0];"
	"g.dispatchEvent(new MouseEvent('mouseover',{bubbles:true}));"
	"out.push('STATUS '+box.querySelector('.pf-status').textContent);"
	"g.dispatchEvent(new MouseEvent('click',{bubbles:true}));"
	"out.push('ZOOM '+svg.getAttribute('data-zoom'));"
	"var w=parseFloat(frames('demo::cold(int*)')[0].querySelector('rect').getAttribute('width'));"
	"out.push('ZOOMWIDTH '+(w/svg.getBoundingClientRect().width).toFixed(2));"
	"out.push('HOTSHOWN '+frames('long demo::hot<long>(long)').length);"
	"out.push('CALLERS '+box.querySelector('.pf-callers').textContent);"
	"box.querySelector('.pf-reset').dispatchEvent(new MouseEvent('click',{bubbles:true}));"
	"out.push('UNZOOM '+svg.getAttribute('data-zoom')+' '+frames().length);"
	"var inp=box.querySelector('.pf-search');inp.value='hot<';inp.dispatchEvent(new Event('input'));"
	"out.push('MATCHED '+box.querySelector('.pf-matched').getAttribute('data-samples'));"
	"out.push('MATCHFRAMES '+box.querySelectorAll('g.pf-match').length);"
	"out.push('MATCHTEXT '+box.querySelector('.pf-matched').textContent);"
	"var d=document.createElement('pre');d.id='browser-result';d.textContent=out.join('\\n')+'\\nEND';"
	"document.body.appendChild(d);})();</script>";

/* The value after "KEY " in the result text, into buf. */
static const char *field(const char *res, const char *key, char *buf, size_t len)
{
	char k[64];
	snprintf(k, sizeof(k), "\n%s ", key);
	const char *p = strstr(res, k);
	buf[0] = 0;
	if (!p)
		return buf;
	p += strlen(k);
	const char *q = strchr(p, '\n');
	snprintf(buf, len, "%.*s", (int)(q ? q - p : (long)strlen(p)), p);
	return buf;
}

static void test_profile_views_flame_html_zoom_and_search_in_chromium(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		print_message("skipped: chromium not installed (apt-get install chromium)\n");
		skip();
	}
	char html[400], dom[400], svg[400];
	tp_env_path(&e->t, "flame.html", html, sizeof(html));
	tp_env_path(&e->t, "dom.html", dom, sizeof(dom));
	tp_env_path(&e->t, "flame.svg", svg, sizeof(svg));
	assert_int_equal(sh(NULL, "%s flame --store %s --since 1h --comm demo -o %s", e->coll, e->f.db, html), 0);
	assert_int_equal(tp_file_count(html, "http://") + tp_file_count(html, "https://"),
			 tp_file_count(html, "http://www.w3.org/2000/svg")); /* no network reference */
	FILE *f = fopen(html, "a");
	assert_non_null(f);
	fputs(browser_script, f);
	fclose(f);
	assert_int_equal(sh(dom,
			    "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
			    "--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage "
			    "--user-data-dir=%s/chrome-profile --window-size=1200,800 --dump-dom 'file://%s' 2>%s/chromium.err",
			    e->t.dir, html, e->t.dir),
			 0);
	char *text = tp_slurp(dom);
	assert_non_null(text);
	const char *res = strstr(text, "id=\"browser-result\">");
	if (!res) {
		tp_dump_file(dom);
		free(text);
		fail_msg("the test script did not run in chromium");
	}
	res = strchr(res, '>');
	char r[4096];
	snprintf(r, sizeof(r), "\n%s", res + 1);
	fprintf(stderr, "chromium:%.1500s\n", r);
	char b[1024];
	/* demo (1050 samples of both agents' pid 100/200) > main > run > hot<long>, hot<int>; main > cold */
	assert_true(atoi(field(r, "FRAMES", b, sizeof(b))) >= 7);
	assert_non_null(strstr(field(r, "STATUS", b, sizeof(b)), "demo::cold(int*) (demo): 350 samples, 33.33% of all"));
	assert_string_equal(field(r, "ZOOM", b, sizeof(b)), "demo::cold(int*)");
	assert_string_equal(field(r, "ZOOMWIDTH", b, sizeof(b)), "1.00"); /* the zoomed frame spans the graph */
	assert_string_equal(field(r, "HOTSHOWN", b, sizeof(b)), "0");     /* its siblings are gone */
	assert_non_null(strstr(field(r, "CALLERS", b, sizeof(b)), "350100.00%main"));
	assert_true(strncmp(field(r, "UNZOOM", b, sizeof(b)), "all ", 4) == 0);
	assert_string_equal(field(r, "MATCHED", b, sizeof(b)), "700"); /* hot<long> 500 + hot<int> 200 */
	assert_string_equal(field(r, "MATCHFRAMES", b, sizeof(b)), "2");
	assert_non_null(strstr(field(r, "MATCHTEXT", b, sizeof(b)), "66.67%"));
	free(text);
	/* the static SVG */
	assert_int_equal(sh(NULL, "%s flame --store %s --since 1h -o %s", e->coll, e->f.db, svg), 0);
	assert_true(tp_file_count(svg, "<svg") == 1);
	assert_true(tp_file_count(svg, "demo::cold(int*) (demo): 350 samples") == 1);
}

static void test_profile_views_diff_of_two_ranges_and_sessions(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400], html[400];
	tp_env_path(&e->t, "diff.json", out, sizeof(out));
	tp_env_path(&e->t, "diff.html", html, sizeof(html));
	/* A: intervals 1..10 of session A (cold 300, hot 100), B: 11..20 (cold 50, hot 400) */
	long long t0 = e->f.t0_a_s;
	assert_int_equal(sh(out, "%s diff --store %s --comm demo --since %lld --until %lld.5 --since %lld.5 --until %lld "
				 "--json -o %s",
			    e->coll, e->f.db, t0, t0 + 10, t0 + 10, t0 + 21, html),
			 0);
	char *t = tp_slurp(out);
	assert_non_null(t);
	fprintf(stderr, "%s", t);
	assert_non_null(strstr(t, "\"samples_a\":400,\"samples_b\":450,"));
	assert_non_null(strstr(t, "\"gains\":[{\"function\":\"long demo::hot\\u003clong\\u003e(long)\""));
	assert_non_null(strstr(t, "\"losses\":[{\"function\":\"demo::cold(int*)\""));
	free(t);
	assert_true(tp_file_count(html, "\"diff\":true") == 1);
	/* two sessions: B (board-b) runs hot<int> only; A's functions all lose */
	assert_int_equal(sh(out, "%s diff --store %s --session %lld --session %lld", e->coll, e->f.db,
			    (long long)e->f.sid_a, (long long)e->f.sid_b),
			 0);
	t = tp_slurp(out);
	assert_non_null(t);
	fprintf(stderr, "%s", t);
	const char *gains = strstr(t, "gains:"), *losses = strstr(t, "losses:");
	assert_non_null(gains);
	assert_non_null(losses);
	const char *hi = strstr(gains, "int demo::hot<int>(int)");
	assert_true(hi && hi < losses);
	assert_non_null(strstr(losses, "demo::cold(int*)"));
	free(t);
	/* one side only: a usage error */
	assert_int_equal(sh(NULL, "%s diff --store %s --session 1 2>/dev/null", e->coll, e->f.db), 2);
}

static void test_profile_views_perfetto_has_cpu_track(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400];
	tp_env_path(&e->t, "trace.json", out, sizeof(out));
	assert_int_equal(sh(NULL, "%s export --store %s --session %lld --perfetto %s", e->coll, e->f.db,
			    (long long)e->f.sid_a, out),
			 0);
	/* pid 100: 20 intervals; pid 101 (python3.11): 1 */
	assert_int_equal(tp_file_count(out, "\"name\":\"CPU samples\""), 21);
	assert_int_equal(tp_file_count(out, "\"name\":\"demo (pid 100)\""), 1);
	assert_int_equal(tp_file_count(out, "{\"ph\":\"C\",\"pid\":100,\"name\":\"CPU samples\",\"ts\":1000000.000,"
					    "\"args\":{\"samples\":40}}"),
			 1);
}

/* The HTML report of a session has its flame graph (callers and callees); the
 * live pages: the session list refreshes itself, /profile has the CPU-over-time
 * chart and the flame graph of the last 10 minutes and reloads itself. */
static void test_profile_views_report_and_live_pages(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400];
	tp_env_path(&e->t, "report.html", out, sizeof(out));
	assert_int_equal(sh(out, "%s report --store %s --session %lld --format html", e->coll, e->f.db,
			    (long long)e->f.sid_b),
			 0);
	assert_int_equal(tp_file_count(out, "id=\"flame-graph\""), 1);
	assert_int_equal(tp_file_count(out, "class=\"pf-cc\""), 1);
	assert_true(tp_file_count(out, "int demo::hot\\u003cint\\u003e(int)") >= 1);
	/* the live pages over the same store */
	assert_true(strlen(e->f.db) < sizeof(e->t.db));
	memcpy(e->t.db, e->f.db, strlen(e->f.db) + 1);
	int port = 0;
	assert_int_equal(tp_env_start_collector_http(&e->t, &port), 0);
	char *body = NULL;
	assert_int_equal(tp_http_get(port, "/", &body), 200);
	assert_non_null(strstr(body, "http-equiv=\"refresh\""));
	assert_non_null(strstr(body, "href=\"/profile\""));
	free(body);
	assert_int_equal(tp_http_get(port, "/profile", &body), 200);
	assert_non_null(strstr(body, "class=\"cpu-chart\""));
	/* session B (300 s ago) is in the window; A (600 s ago) partly, depending on the test's pace */
	assert_non_null(strstr(body, ">demo (board-b)</text>"));
	assert_non_null(strstr(body, ">all processes</text>"));
	assert_non_null(strstr(body, "class=\"cpu-line\""));
	assert_non_null(strstr(body, "class=\"pf-flame\" id=\"flame\""));
	assert_non_null(strstr(body, "int demo::hot\\u003cint\\u003e(int)"));
	assert_non_null(strstr(body, "location.reload()"));
	free(body);
	char path[64];
	snprintf(path, sizeof(path), "/session/%lld", (long long)e->f.sid_b);
	assert_int_equal(tp_http_get(port, path, &body), 200);
	assert_non_null(strstr(body, "id=\"flame-graph\""));
	assert_non_null(strstr(body, "location.reload();},30000)"));
	free(body);
}

/* issue 39: the live collector told a debug dir (--debug-dir DIR) names a stripped binary's
 * functions in its pages from DIR/.build-id/xx/rest.debug; without it they are "[demo]".
 * Runs last: it strips the fixture's binary in place (the debug file keeps its symbols). */
static void test_profile_views_live_debug_dir_names_stripped_binary(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	if (system("command -v objcopy >/dev/null 2>&1 && command -v strip >/dev/null 2>&1") != 0) {
		print_message("skipped: binutils not installed (apt-get install binutils): no objcopy/strip\n");
		skip();
	}
	uint8_t bid[64];
	int bl = elf_build_id(e->f.bin, bid, sizeof(bid));
	assert_true(bl > 1);
	char hex[130], dbg[400], dbgfile[700];
	for (int i = 0; i < bl; i++)
		snprintf(hex + 2 * i, 3, "%02x", bid[i]);
	tp_env_path(&e->t, "debug", dbg, sizeof(dbg));
	snprintf(dbgfile, sizeof(dbgfile), "%s/.build-id/%.2s/%s.debug", dbg, hex, hex + 2);
	assert_int_equal(sh(NULL, "mkdir -p %s/.build-id/%.2s && objcopy --only-keep-debug %s %s && strip -s %s", dbg, hex,
			    e->f.bin, dbgfile, e->f.bin),
			 0);
	assert_int_equal(elf_build_id(e->f.bin, bid, sizeof(bid)), bl); /* strip keeps the build-id note */
	assert_true(strlen(e->f.db) < sizeof(e->t.db));
	memcpy(e->t.db, e->f.db, strlen(e->f.db) + 1);
	char path[64];
	snprintf(path, sizeof(path), "/session/%lld", (long long)e->f.sid_b);
	for (int with = 0; with < 2; with++) {
		if (e->t.collector > 0) {
			tp_stop(e->t.collector, 5000);
			e->t.collector = 0;
		}
		int port = tp_free_port();
		char http[64];
		snprintf(http, sizeof(http), "127.0.0.1:%d", port);
		const char *extra[] = {"--http", http, with ? "--debug-dir" : NULL, dbg, NULL};
		if (tp_env_start_collector(&e->t, 0, extra) < 0) {
			tp_dump_file(e->t.clog);
			fail_msg("collector did not start");
		}
		char *body = NULL;
		assert_int_equal(tp_http_get(port, path, &body), 200);
		const char *fn = strstr(body, "int demo::hot\\u003cint\\u003e(int)");
		const char *mod = strstr(body, "[demo]");
		fprintf(stderr, "# live %s %s --debug-dir: hot<int> %s, [demo] %s\n", path, with ? "with" : "without",
			fn ? "named" : "absent", mod ? "present" : "absent");
		if (with) {
			assert_non_null(fn);
			assert_null(mod);
		} else {
			assert_null(fn);
			assert_non_null(mod);
		}
		free(body);
	}
}

/* The page's own brush, driven in Chromium: a drag across board-a's chart
 * from 25 % to 50 % of its plot with "range A" chosen fills a_since/a_until. */
static const char range_script[] =
	"<script>(function(){var out=[];"
	"var charts=document.querySelectorAll('.agent-chart');out.push('CHARTS '+charts.length);"
	"[].forEach.call(charts,function(c){out.push('AGENT '+c.getAttribute('data-agent')+' '"
	"+c.querySelector('.agent-total').textContent+' '+c.querySelectorAll('polyline.cpu-line').length);});"
	"out.push('TOTAL '+document.getElementById('range-totals').getAttribute('data-samples'));"
	"var ct=document.getElementById('compare-totals');"
	"out.push('COMPARE '+ct.getAttribute('data-a')+' '+ct.getAttribute('data-b'));"
	"[].forEach.call(document.querySelectorAll('tr.diff-row'),function(r){out.push('ROW '+"
	"r.querySelector('.fn').textContent+' | '+r.querySelector('.delta').textContent);});"
	"out.push('DIFFFRAMES '+document.getElementById('diff-flame').querySelectorAll('g.pf-frame').length);"
	"var svg=charts[0].querySelector('svg'),b=svg.getBoundingClientRect(),L=+svg.getAttribute('data-plot-x'),"
	"W=+svg.getAttribute('data-plot-w');document.getElementById('brush-target').value='a';"
	"function ev(t,f,el){(el||svg).dispatchEvent(new MouseEvent(t,{bubbles:true,clientX:b.left+L+W*f,"
	"clientY:b.top+60}));}"
	"ev('mousedown',0.25);ev('mousemove',0.4);ev('mousemove',0.5);ev('mouseup',0.5,document.body);"
	"var fm=document.getElementById('range');"
	"out.push('BRUSH '+fm.elements['a_since'].value+' '+fm.elements['a_until'].value+' '"
	"+svg.getAttribute('data-t0')+' '+svg.getAttribute('data-t1'));"
	"out.push('BRUSHRECT '+(svg.querySelector('rect.brush').getAttribute('width')/W).toFixed(2));"
	"var d=document.createElement('pre');d.id='browser-result';d.textContent='\\n'+out.join('\\n')+'\\nEND';"
	"document.body.appendChild(d);})();</script>";

/* /profile?since=&until=: one chart per agent with its own totals; a range
 * chosen by dragging; two ranges compared (the diff rows and differential
 * flame graph collector diff makes); escaped echo of the query. */
static void test_profile_views_live_page_ranges_and_compare_in_chromium(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		print_message("skipped: chromium not installed (apt-get install chromium)\n");
		skip();
	}
	assert_true(strlen(e->f.db) < sizeof(e->t.db));
	memcpy(e->t.db, e->f.db, strlen(e->f.db) + 1);
	int port = 0;
	assert_int_equal(tp_env_start_collector_http(&e->t, &port), 0);
	long long t0 = e->f.t0_a_s, tb = e->f.t0_b_s;
	char path[512];
	char *body = NULL;
	/* a hostile value is echoed escaped, and said to be bad */
	assert_int_equal(tp_http_get(port, "/profile?since=%3Cscript%3Ex", &body), 200);
	assert_null(strstr(body, "<script>x"));
	assert_non_null(strstr(body, "value=\"&lt;script&gt;x\""));
	assert_non_null(strstr(body, "id=\"args-error\""));
	free(body);
	/* both agents in the range; A compared with B within board-a */
	snprintf(path, sizeof(path),
		 "/profile?since=%lld&until=%lld&a_since=%lld&a_until=%lld.5&b_since=%lld.5&b_until=%lld&agent=board-a"
		 "&agent=board-b",
		 t0 - 5, tb + 15, t0, t0 + 10, t0 + 10, t0 + 21);
	assert_int_equal(tp_http_get(port, path, &body), 200);
	assert_null(strstr(body, "location.reload()")); /* a chosen range stays */
	char html[400], dom[400];
	tp_env_path(&e->t, "live.html", html, sizeof(html));
	tp_env_path(&e->t, "live-dom.html", dom, sizeof(dom));
	FILE *f = fopen(html, "w");
	assert_non_null(f);
	fputs(body, f);
	fputs(range_script, f);
	fclose(f);
	free(body);
	assert_int_equal(sh(dom,
			    "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
			    "--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage "
			    "--user-data-dir=%s/chrome-profile --window-size=1200,800 --dump-dom 'file://%s' 2>%s/chromium.err",
			    e->t.dir, html, e->t.dir),
			 0);
	char *text = tp_slurp(dom);
	assert_non_null(text);
	const char *res = strstr(text, "id=\"browser-result\">");
	if (!res) {
		tp_dump_file(dom);
		free(text);
		fail_msg("the test script did not run in chromium");
	}
	char r[4096], b[1024];
	snprintf(r, sizeof(r), "%s", strchr(res, '>') + 1);
	fprintf(stderr, "chromium:%.2000s\n", r);
	/* board-a: demo 400 + 450 and python3.11 30; board-b: demo 200 and kworker 70 */
	assert_string_equal(field(r, "CHARTS", b, sizeof(b)), "2");
	assert_non_null(strstr(r, "\nAGENT board-a 880 "));
	assert_non_null(strstr(r, "\nAGENT board-b 270 "));
	assert_string_equal(field(r, "TOTAL", b, sizeof(b)), "1150");
	/* A: intervals 1..10 of board-a (cold 300, hot<long> 100, python 30), B: 11..20 (cold 50, hot<long> 400) */
	assert_string_equal(field(r, "COMPARE", b, sizeof(b)), "430 450");
	const char *row1 = strstr(r, "\nROW ");
	assert_non_null(row1);
	/* the two biggest changes first (--dump-dom writes the text escaped) */
	assert_true(strncmp(row1, "\nROW long demo::hot&lt;long&gt;(long) | +", 41) == 0 ||
		    strncmp(row1, "\nROW demo::cold(int*) | -", 25) == 0);
	assert_non_null(strstr(r, "\nROW long demo::hot&lt;long&gt;(long) | +"));
	assert_non_null(strstr(r, "\nROW demo::cold(int*) | -"));
	assert_true(atoi(field(r, "DIFFFRAMES", b, sizeof(b))) >= 4);
	double as = 0, au = 0, c0 = 0, c1 = 0;
	assert_int_equal(sscanf(field(r, "BRUSH", b, sizeof(b)), "%lf %lf %lf %lf", &as, &au, &c0, &c1), 4);
	assert_true(c0 == (double)(t0 - 5) && c1 == (double)(tb + 15));
	assert_true(fabs(as - (c0 + 0.25 * (c1 - c0))) < 0.01 * (c1 - c0));
	assert_true(fabs(au - (c0 + 0.50 * (c1 - c0))) < 0.01 * (c1 - c0));
	assert_string_equal(field(r, "BRUSHRECT", b, sizeof(b)), "0.25");
	free(text);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_profile_views_pprof_top_matches_report),
		cmocka_unit_test(test_profile_views_folded_lines),
		cmocka_unit_test(test_profile_views_unresolved_grouped_per_module),
		cmocka_unit_test(test_profile_views_kernel_functions_from_kallsyms),
		cmocka_unit_test(test_profile_views_flame_html_zoom_and_search_in_chromium),
		cmocka_unit_test(test_profile_views_diff_of_two_ranges_and_sessions),
		cmocka_unit_test(test_profile_views_perfetto_has_cpu_track),
		cmocka_unit_test(test_profile_views_report_and_live_pages),
		cmocka_unit_test(test_profile_views_live_page_ranges_and_compare_in_chromium),
		cmocka_unit_test(test_profile_views_live_debug_dir_names_stripped_binary), /* last: strips the binary */
	};
	return cmocka_run_group_tests(tests, setup, tp_env_free);
}
