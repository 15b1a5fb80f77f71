/* collector --http end to end: the real collector serves a stored session
 * (report fixture) and headless Chromium (Debian package chromium) loads the
 * session list and the HTML report: the page renders and its charts are
 * there. Skipped, with the reason, when chromium is not installed. Also
 * `collector roofline -o x.png` writes a PNG of the expected size.
 * Issue #25: pages of a large session (a million trace instructions, a live
 * agent adding records so that its analysis is redone) requested in a loop by
 * 6 clients never hold a new agent's Hello ack: the pages are rendered by the
 * collector's workers, not on its agents' loop. /session/+1 and /session/01 are
 * no pages; answers carry nosniff. */
#include <errno.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "attack.h"
#include "net.h"
#include "report/svg_png.h"
#include "report_fixture.h"
#include "store/store.h"
#include "testproc.h"

struct env {
	struct tp_env t;
	int http_port;
};

static int setup_with(void **state, unsigned trace_windows)
{
	if (tp_env_new(state, sizeof(struct env), "rephttp", false) < 0)
		return -1;
	struct env *e = *state;
	struct store *st;
	int64_t sid;
	if (store_open(e->t.db, 0, &st) < 0 || rf_make_session(st, &sid) < 0)
		return -1;
	if (trace_windows && rf_make_trace_session(st, "big", trace_windows, 10000, &sid) < 0)
		return -1;
	store_close(st);
	if (tp_env_start_collector_http(&e->t, &e->http_port) < 0)
		return -1;
	return 0;
}

static int setup(void **state)
{
	return setup_with(state, 0);
}

/* session 2: 100 windows of 10,000 instructions */
static int setup_big(void **state)
{
	return setup_with(state, 100);
}

/* Run chromium headless on url with one output option; stdout to out_path. */
static int chromium(struct env *e, const char *url, const char *opt, const char *out_path)
{
	char profile[300], cmd[2048];
	snprintf(profile, sizeof(profile), "%s/chrome-profile", e->t.dir);
	snprintf(cmd, sizeof(cmd),
		 "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
		 "--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage "
		 "--user-data-dir=%s %s '%s' >%s 2>%s/chromium.err",
		 profile, opt, url, out_path, e->t.dir);
	int st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_report_http_chromium_renders_report(void **state)
{
	struct env *e = *state;
	if (system("command -v chromium >/dev/null 2>&1") != 0) {
		print_message("chromium not installed (apt-get install chromium): headless browser test skipped\n");
		skip();
	}
	char url[128], dom[300];
	snprintf(dom, sizeof(dom), "%s/index.html", e->t.dir);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", e->http_port);
	assert_int_equal(chromium(e, url, "--dump-dom", dom), 0);
	char *html = tp_slurp(dom);
	assert_non_null(html);
	if (!strstr(html, "href=\"/session/1\""))
		fail_msg("the session list has no link to session 1:\n%.2000s", html);
	free(html);

	snprintf(url, sizeof(url), "http://127.0.0.1:%d/session/1", e->http_port);
	assert_int_equal(chromium(e, url, "--dump-dom", dom), 0);
	html = tp_slurp(dom);
	assert_non_null(html);
	static const char *const want[] = {"Session 1", "class=\"plot roofline-gpu\"", "class=\"roof\"",
					   "class=\"plot sensitivity\"", "class=\"curve m4\"", "fixture tid 101"};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		if (!strstr(html, want[i]))
			fail_msg("the rendered report lacks %s:\n%.3000s", want[i], html);
	free(html);

	/* a screenshot of the page: a PNG of the default window size */
	char shot[300], opt[400];
	snprintf(shot, sizeof(shot), "%s/report.png", e->t.dir);
	snprintf(opt, sizeof(opt), "--window-size=1200,1600 --screenshot=%s", shot);
	assert_int_equal(chromium(e, url, opt, dom), 0);
	uint32_t w = 0, h = 0;
	assert_int_equal(png_size(shot, &w, &h), 0);
	assert_int_equal(w, 1200);
	assert_int_equal(h, 1600);
	const char *keep = getenv("PROF_REPORT_SAMPLES");
	if (keep) {
		char cmd[1024];
		snprintf(cmd, sizeof(cmd), "cp %s %s/report-screenshot.png", shot, keep);
		assert_int_equal(system(cmd), 0);
	}
	assert_true(tp_alive(e->t.collector));
}

static void test_report_http_roofline_png(void **state)
{
	struct env *e = *state;
	if (system("command -v rsvg-convert >/dev/null 2>&1") != 0) {
		print_message("rsvg-convert not installed (apt-get install librsvg2-bin): PNG not tested\n");
		skip();
	}
	char bin[512], png[300], log[300];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(png, sizeof(png), "%s/roofline.png", e->t.dir);
	snprintf(log, sizeof(log), "%s/roofline.txt", e->t.dir);
	char *argv[] = {bin, "roofline", "--store", e->t.db, "--session", "1", "--device", "gpu", "-o", png, NULL};
	pid_t pid = tp_spawn(argv, log);
	int st;
	assert_int_equal(tp_wait(pid, 30000, &st), 0);
	assert_true(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	uint32_t w = 0, h = 0;
	assert_int_equal(png_size(png, &w, &h), 0);
	assert_int_equal(w, 760);
	assert_int_equal(h, 520);
	assert_int_equal(tp_file_count(log, "ridge point pi/beta = 10 FLOP/byte"), 1);
}

static void test_report_http_pages_never_hold_acks(void **state)
{
	struct env *e = *state;
	enum { PROBES = 15, CLIENTS = 6 };
	char buf[8192], why[256], id[32];
	/* the real collector's routes and headers */
	assert_int_equal(atk_http_get(e->http_port, "/session/+1", 5000, buf, sizeof(buf)), 404);
	assert_int_equal(atk_http_get(e->http_port, "/session/01", 5000, buf, sizeof(buf)), 404);
	assert_int_equal(atk_http_get(e->http_port, "/session/1.json", 5000, buf, sizeof(buf)), 200);
	assert_non_null(strstr(buf, "X-Content-Type-Options: nosniff"));
	/* one page of the large session alone: the analysis' cost */
	uint64_t t0 = clock_mono_ns();
	assert_int_equal(atk_http_get(e->http_port, "/session/2.txt", 120000, buf, sizeof(buf)), 200);
	double render_ms = (double)(clock_mono_ns() - t0) / 1e6;
	assert_non_null(strstr(buf, "chase tid 201")); /* its sensitivity row: the 100 windows analysed */
	/* the session's agent goes on sending records: every page request analyses it again */
	int live = -1;
	assert_true(atk_hello_ack(NULL, e->t.port, "big", 1, 5000, why, sizeof(why), &live) >= 0);
	struct atk_http_load load;
	assert_int_equal(atk_http_load_start(&load, e->http_port, "/session/2", CLIENTS), 0);
	tp_sleep_ms(300);
	double ms[PROBES];
	int acked = 0;
	uint64_t seq = 101;
	for (int i = 0; i < PROBES; i++) {
		assert_int_equal(atk_send_records(live, seq, seq, 10000), 0);
		seq++;
		snprintf(id, sizeof(id), "new-agent-%d", i);
		double t = atk_hello_ack(NULL, e->t.port, id, 1, 10000, why, sizeof(why), NULL);
		if (t >= 0)
			ms[acked++] = t;
		else
			fprintf(stderr, "Hello %d not acked: %s\n", i, why);
		tp_sleep_ms(150);
	}
	atk_http_load_stop(&load);
	close(live);
	double p50 = atk_quantile(ms, (size_t)acked, 0.5), mx = atk_quantile(ms, (size_t)acked, 1);
	fprintf(stderr,
		"one page of the 1M-instruction session alone: %.0f ms; %d clients requested %llu pages (%llu answered "
		"200, median %.0f ms) while the agent added records; new agents' Hello acks: %d of %d, median %.1f ms, "
		"max %.1f ms\n",
		render_ms, CLIENTS, load.requests, load.ok, atk_quantile(load.ms, load.nms, 0.5), acked, PROBES, p50, mx);
	assert_int_equal(acked, PROBES);
	assert_true(load.ok >= 1);
	/* before the workers, each Hello waited for the page being built on the loop (the
	 * whole render, render_ms); now only for CPU time shared with the workers */
	assert_true(p50 < 300);
	assert_true(mx < 2000);
	atk_http_load_free(&load);
	assert_true(tp_alive(e->t.collector));
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_http_chromium_renders_report, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_report_http_roofline_png, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_report_http_pages_never_hold_acks, setup_big, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
