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
	char dir[256], db[300], clog[300], portfile[300];
	pid_t collector;
	int http_port;
};

/* A free TCP port on 127.0.0.1 (bound then released). */
static int free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	socklen_t sl = sizeof(sa);
	int port = -1;
	if (fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sa, &sl) == 0)
		port = ntohs(sa.sin_port);
	if (fd >= 0)
		close(fd);
	return port;
}

static int setup(void **state)
{
	struct env *e = calloc(1, sizeof(*e));
	if (!e || tp_tmpdir(e->dir, sizeof(e->dir), "rephttp") < 0)
		return -1;
	snprintf(e->db, sizeof(e->db), "%s/profile.db", e->dir);
	snprintf(e->clog, sizeof(e->clog), "%s/collector.log", e->dir);
	snprintf(e->portfile, sizeof(e->portfile), "%s/port", e->dir);
	struct store *st;
	int64_t sid;
	if (store_open(e->db, 0, &st) < 0 || rf_make_session(st, &sid) < 0)
		return -1;
	store_close(st);
	e->http_port = free_port();
	char bin[512], http[64];
	tp_bin("collector", bin, sizeof(bin));
	snprintf(http, sizeof(http), "127.0.0.1:%d", e->http_port);
	char *argv[] = {bin, "--listen", "127.0.0.1:0", "--store", e->db, "--port-file", e->portfile, "--http", http,
			NULL};
	e->collector = tp_spawn(argv, e->clog);
	for (int i = 0; i < 1000 && e->collector > 0; i++) {
		if (access(e->portfile, R_OK) == 0)
			break;
		tp_sleep_ms(10);
	}
	if (e->collector < 0 || access(e->portfile, R_OK) != 0)
		return -1;
	*state = e;
	return 0;
}

static int teardown(void **state)
{
	struct env *e = *state;
	tp_stop(e->collector, 3000);
	tp_rm_rf(e->dir);
	free(e);
	return 0;
}

/* Run chromium headless on url with one output option; stdout to out_path. */
static int chromium(struct env *e, const char *url, const char *opt, const char *out_path)
{
	char profile[300], cmd[2048];
	snprintf(profile, sizeof(profile), "%s/chrome-profile", e->dir);
	snprintf(cmd, sizeof(cmd),
		 "timeout 90 chromium --headless --no-sandbox --disable-gpu --disable-background-networking "
		 "--disable-component-update --disable-sync --no-first-run --disable-dev-shm-usage "
		 "--user-data-dir=%s %s '%s' >%s 2>%s/chromium.err",
		 profile, opt, url, out_path, e->dir);
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
	snprintf(dom, sizeof(dom), "%s/index.html", e->dir);
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
	snprintf(shot, sizeof(shot), "%s/report.png", e->dir);
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
	assert_true(tp_alive(e->collector));
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
	snprintf(png, sizeof(png), "%s/roofline.png", e->dir);
	snprintf(log, sizeof(log), "%s/roofline.txt", e->dir);
	char *argv[] = {bin, "roofline", "--store", e->db, "--session", "1", "--device", "gpu", "-o", png, NULL};
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
		cmocka_unit_test_setup_teardown(test_report_http_chromium_renders_report, setup, teardown),
		cmocka_unit_test_setup_teardown(test_report_http_roofline_png, setup, teardown),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
