/* Text outputs never pass the agent's control characters to a terminal
 * (issue 25 item 10). A stored session whose agent-supplied strings carry
 * ESC / OSC sequences, CR, BEL, DEL and a C1 CSI (UTF-8 C2 9B) — agent id,
 * board, host, program, OpenCL kernel and calibration names — goes through
 * every text output of the real collector: report (overview, --opencl, --gpu),
 * roofline, sensitivity, edag, calibrate, sessions, dump, and the live
 * /session/N.txt page. None may hold a control character but newline and tab;
 * each name appears with '?' in place of its controls. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "report_fixture.h"
#include "store/store.h"
#include "testproc.h"

static const struct rf_names evil = {
    .agent_id = "evil\x1b]0;pwned\x07id",
    .board = "brd\x1b[2J",
    .hostname = "host\r\x1b[K",
    .target = "cmd ./prog\x1b[31mred\xc2\x9b" "2J",
    .calib_device = "GPU\x1b[5m",
    .calib_method = "meth\x1b[8m",
    .calib_param = "evil\x1b[1m_param",
    .kernel = "k\x1b[4munder\x7f",
};

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct tp_env), "reptext", false) < 0)
		return -1;
	struct tp_env *e = *state;
	struct store *st;
	int64_t sid;
	if (store_open(e->db, 0, &st) < 0 || rf_make_session_names(st, &evil, &sid) < 0 || sid != 1)
		return -1;
	store_close(st);
	return 0;
}

/* The first control character of s (not newline or tab), or NULL. */
static const char *first_control(const char *s)
{
	for (const unsigned char *p = (const unsigned char *)s; *p; p++)
		if ((*p < 0x20 && *p != '\n' && *p != '\t') || *p == 0x7f || (p[0] == 0xc2 && p[1] >= 0x80 && p[1] <= 0x9f))
			return (const char *)p;
	return NULL;
}

static void check_clean(const char *what, const char *out, const char *const *want)
{
	const char *bad = first_control(out);
	if (bad)
		fail_msg("%s: control byte 0x%02x at offset %ld:\n%.3000s", what, (unsigned char)*bad,
			 (long)(bad - out), out);
	for (size_t i = 0; want && want[i]; i++)
		if (!strstr(out, want[i]))
			fail_msg("%s: \"%s\" not in:\n%.3000s", what, want[i], out);
}

/* Run `collector ARGS --store DB` (stdout only); its output, malloc'd. */
static char *run(struct tp_env *e, const char *args)
{
	char coll[512], out[400], cmd[2048];
	tp_bin("collector", coll, sizeof(coll));
	tp_env_path(e, "out.txt", out, sizeof(out));
	snprintf(cmd, sizeof(cmd), "%s %s --store %s > %s 2>>%s", coll, args, e->db, out, e->clog);
	int st = system(cmd);
	if (st != 0) {
		tp_dump_file(out);
		tp_dump_file(e->clog);
		fail_msg("collector %s: exit status %d", args, st);
	}
	char *s = tp_slurp(out);
	assert_non_null(s);
	return s;
}

static const char *const names_overview[] = {"evil?]0;pwned?id", "brd?[2J", "host??[K", "prog?[31mred?2J",
					      "k?[4munder?", NULL};

static void test_report_text_cli_outputs_replace_controls(void **state)
{
	struct tp_env *e = *state;
	const struct {
		const char *args;
		const char *const *want;
	} cmds[] = {
	    {"report --session 1", names_overview},
	    {"report --session 1 --opencl", (const char *const[]){"k?[4munder?", NULL}},
	    {"report --session 1 --gpu", NULL},
	    {"roofline --session 1", (const char *const[]){"GPU?[5m", NULL}},
	    {"sensitivity --session 1", (const char *const[]){"prog?[31mred?2J", NULL}},
	    {"edag --session 1", (const char *const[]){"prog?[31mred?2J", NULL}},
	    {"calibrate --session 1", (const char *const[]){"GPU?[5m", "evil?[1m_param", "meth?[8m", NULL}},
	    {"sessions", (const char *const[]){"evil?]0;pwned?id", NULL}},
	    {"dump --session 1", (const char *const[]){"evil?]0;pwned?id", "brd?[2J", NULL}},
	};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		char *out = run(e, cmds[i].args);
		check_clean(cmds[i].args, out, cmds[i].want);
		free(out);
	}
}

static void test_report_text_http_page_replaces_controls(void **state)
{
	struct tp_env *e = *state;
	int hp;
	assert_int_equal(tp_env_start_collector_http(e, &hp), 0);
	char *body = NULL;
	int code = tp_http_get(hp, "/session/1.txt", &body);
	assert_non_null(body);
	if (code != 200)
		fail_msg("GET /session/1.txt: %d\n%.2000s", code, body);
	check_clean("/session/1.txt", body, names_overview);
	free(body);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_report_text_cli_outputs_replace_controls, setup, tp_env_free),
	    cmocka_unit_test_setup_teardown(test_report_text_http_page_replaces_controls, setup, tp_env_free),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
