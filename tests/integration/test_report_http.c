/* collector --http end to end: the real collector serves a stored session
 * (report fixture) and headless Chromium (Debian package chromium) loads the
 * session list and the HTML report: the page renders and its charts are
 * there. Skipped, with the reason, when chromium is not installed. Also
 * `collector roofline -o x.png` writes a PNG of the expected size. */
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

#include "report/svg_png.h"
#include "report_fixture.h"
#include "store/store.h"
#include "testproc.h"

struct env {
	struct tp_env t;
	int http_port;
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "rephttp", false) < 0)
		return -1;
	struct env *e = *state;
	struct store *st;
	int64_t sid;
	if (store_open(e->t.db, 0, &st) < 0 || rf_make_session(st, &sid) < 0)
		return -1;
	store_close(st);
	if (tp_env_start_collector_http(&e->t, &e->http_port) < 0)
		return -1;
	return 0;
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

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_report_http_chromium_renders_report, setup, tp_env_free),
		cmocka_unit_test_setup_teardown(test_report_http_roofline_png, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
