/* What a new user types wrong (issue 42): the built agent and collector
 * ($PROF_BIN_DIR) refuse it with one clear line and a usage exit status, and
 * never echo a file's raw bytes; the usage texts say what the options do.
 * Nothing here reaches a collector: every case stops at argument checking. */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "kernel_model.h"
#include "testproc.h"

/* Output (stdout + stderr, up to 64 KiB, its length in *len) of the shell line cmd, and its exit status. */
static char *run_sh(const char *cmd, int *status, size_t *len)
{
	char line[4096];
	snprintf(line, sizeof(line), "timeout 60 %s 2>&1 </dev/null", cmd);
	FILE *p = popen(line, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, n = 0, got;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	while (n < cap && (got = fread(buf + n, 1, cap - n, p)) > 0)
		n += got;
	buf[n] = '\0';
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	if (len)
		*len = n;
	return buf;
}

/* `PROG ARGS` run from the build; output and status as run_sh. */
static char *run_bin(const char *prog, const char *args, int *status, size_t *len)
{
	char bin[512], cmd[3072];
	tp_bin(prog, bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "%s %s", bin, args);
	return run_sh(cmd, status, len);
}

/* out holds want, and nothing but printable text (no byte a terminal acts on). */
static void expect_text(const char *what, const char *out, size_t len, const char *want)
{
	for (size_t i = 0; i < len; i++) {
		unsigned char c = (unsigned char)out[i];
		if ((c < 0x20 && c != '\n' && c != '\t') || c == 0x7f)
			fail_msg("%s: byte 0x%02x at %zu of the output:\n%s", what, c, i, out);
	}
	if (!strstr(out, want))
		fail_msg("%s: want '%s' in:\n%s", what, want, out);
}

static void write_file(const char *path, const void *data, size_t len)
{
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(fd >= 0);
	assert_int_equal(write(fd, data, len), (ssize_t)len);
	close(fd);
}

/* Item 1: a duration beyond what CLOCK_MONOTONIC nanoseconds hold was accepted and ended the run
 * at once with status 0; every seconds option now has a range. */
static void test_cli_input_seconds_out_of_range_refused(void **state)
{
	(void)state;
	static const char *const bad[] = {"99999999999999999999", "1e30", "315360001", "1e-30", "inf", "nan", "-1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char args[256];
		int st;
		size_t n;
		snprintf(args, sizeof(args), "record --collector 127.0.0.1:1 --duration %s -- /bin/true", bad[i]);
		char *out = run_bin("agent", args, &st, &n);
		if (st != 2)
			fail_msg("agent %s: exit %d, want 2:\n%s", args, st, out);
		expect_text(args, out, n, "--duration: expected seconds from 0.001 to 315360000");
		free(out);
	}
	static const char *const other[][2] = {
	    {"record --collector 127.0.0.1:1 --flush-timeout 1e30 -- /bin/true", "--flush-timeout: expected seconds"},
	    {"spool send --collector 127.0.0.1:1 --timeout 1e30", "--timeout wants seconds from 0.001"},
	};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++) {
		int st;
		size_t n;
		char *out = run_bin("agent", other[i][0], &st, &n);
		if (st != 2)
			fail_msg("agent %s: exit %d, want 2:\n%s", other[i][0], st, out);
		expect_text(other[i][0], out, n, other[i][1]);
		free(out);
	}
}

/* Item 2: a directory, an empty file, a file of comments only and a binary file given as the
 * kernel model: the loader refuses each with its reason, quoting no raw byte. */
static void test_cli_input_kernel_model_not_a_model(void **state)
{
	(void)state;
	char dir[256], p[320];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "cli-input"), 0);
	struct kernel_model_entry *e = (struct kernel_model_entry *)1;
	size_t n = 7;
	char err[1024];
	assert_int_equal(kernel_model_load(dir, &e, &n, err, sizeof(err)), -EISDIR);
	assert_null(e);
	assert_int_equal(n, 0);
	assert_non_null(strstr(err, "is a directory"));

	snprintf(p, sizeof(p), "%s/empty", dir);
	write_file(p, "", 0);
	assert_int_equal(kernel_model_load(p, &e, &n, err, sizeof(err)), -ENODATA);
	assert_non_null(strstr(err, "holds no kernel"));
	assert_non_null(strstr(err, "(the file is empty)"));

	snprintf(p, sizeof(p), "%s/comments", dir);
	write_file(p, "# nothing yet\n\n", 15);
	assert_int_equal(kernel_model_load(p, &e, &n, err, sizeof(err)), -ENODATA);
	assert_null(strstr(err, "(the file is empty)"));

	/* an ELF-like head: NUL bytes and an escape sequence that would recolour the terminal */
	static const char bin[] = "\x7f" "ELF\x02\x01\x01\x00\x1b[31mred\n";
	snprintf(p, sizeof(p), "%s/binary", dir);
	write_file(p, bin, sizeof(bin) - 1);
	assert_int_equal(kernel_model_load(p, &e, &n, err, sizeof(err)), -EINVAL);
	expect_text("kernel_model_load(binary)", err, strlen(err), ":1: not a text file (byte 0x7f at column 1)");

	/* bytes outside ASCII in a token are quoted as \xNN in the reason */
	snprintf(p, sizeof(p), "%s/utf8", dir);
	write_file(p, "k ops=1 bytes=\xc3\xa9\n", 17);
	assert_int_equal(kernel_model_load(p, &e, &n, err, sizeof(err)), -EINVAL);
	expect_text("kernel_model_load(utf8)", err, strlen(err), "bytes=\\xc3\\xa9");

	/* and a good one still loads */
	snprintf(p, sizeof(p), "%s/good", dir);
	write_file(p, "# m\nmatmul ops=1024 bytes=4100\n", 31);
	assert_int_equal(kernel_model_load(p, &e, &n, err, sizeof(err)), 0);
	assert_int_equal(n, 1);
	assert_true(e[0].ops == 1024 && e[0].bytes == 4100);
	free(e);

	/* the same through agent profile: exit 2 before anything starts */
	static const char *const files[][2] = {
	    {"", "is a directory"}, {"/empty", "holds no kernel"}, {"/binary", "not a text file"}};
	for (size_t i = 0; i < 3; i++) {
		char args[1024];
		int st;
		size_t len;
		snprintf(args, sizeof(args), "profile --collector 127.0.0.1:1 --kernel-model %s%s -- /bin/true", dir,
			 files[i][0]);
		char *out = run_bin("agent", args, &st, &len);
		if (st != 2)
			fail_msg("agent %s: exit %d, want 2:\n%s", args, st, out);
		expect_text(args, out, len, files[i][1]);
		free(out);
	}
	tp_rm_rf(dir);
}

/* Item 2: a directory given as --store is named as such (SQLite said "disk I/O error"). */
static void test_cli_input_store_is_a_directory(void **state)
{
	(void)state;
	char dir[256];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "cli-store"), 0);
	static const char *const fmts[] = {"report --store %s --session 1", "sessions --store %s",
					   "--listen 127.0.0.1:0 --store %s"};
	for (size_t i = 0; i < sizeof(fmts) / sizeof(fmts[0]); i++) {
		char args[512];
		int st;
		size_t n;
		snprintf(args, sizeof(args), fmts[i], dir);
		char *out = run_bin("collector", args, &st, &n);
		if (st == 0 || !strstr(out, "is a directory: --store takes the database file") ||
		    strstr(out, "disk I/O error"))
			fail_msg("collector %s: exit %d:\n%s", args, st, out);
		free(out);
	}
	tp_rm_rf(dir);
}

/* Item 6: the usage texts say --machine overrides the calibration (as the code does:
 * collector/report/overview_load.c load_calibration), not that it is a fallback. */
static void test_cli_input_machine_help_says_override(void **state)
{
	(void)state;
	static const char *const cmds[] = {"report --help", "roofline --help", "sensitivity --help"};
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++) {
		int st;
		char *out = run_bin("collector", cmds[i], &st, NULL);
		assert_int_equal(st, 0);
		if (!strstr(out, "overrides") || strstr(out, "when the session has none") ||
		    strstr(out, "records, else --machine"))
			fail_msg("collector %s:\n%s", cmds[i], out);
		free(out);
	}
}

/* Item 6: an output file whose name says another format than the one written gets one warning
 * (collector roofline -o, flame/diff -o, export --perfetto/--pprof call this check). */
static void test_cli_input_output_extension_warned(void **state)
{
	(void)state;
	char dir[256], errf[320];
	assert_int_equal(tp_tmpdir(dir, sizeof(dir), "cli-ext"), 0);
	snprintf(errf, sizeof(errf), "%s/stderr", dir);
	fflush(stderr);
	int saved = dup(2), fd = open(errf, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	const char *const chart[] = {".svg", ".png", NULL};
	bool ok_svg = cli_out_ext_check("-o", "roof.svg", "SVG", chart);
	bool ok_stdout = cli_out_ext_check("-o", "-", "SVG", chart);
	bool ok_txt = cli_out_ext_check("-o", "roof.txt", "SVG", chart);
	bool ok_upper = cli_out_ext_check("-o", "roof.SVG", "an HTML page", (const char *const[]){".html", ".svg", NULL});
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	assert_true(ok_svg && ok_stdout);
	assert_false(ok_txt);
	assert_false(ok_upper); /* the writers pick the format by the exact suffix: .SVG is written as HTML */
	char *err = tp_slurp(errf);
	assert_non_null(err);
	if (!strstr(err, "-o: roof.txt is written as SVG, but its name does not end in .svg or .png") ||
	    !strstr(err, "roof.SVG is written as an HTML page, but its name does not end in .html or .svg") ||
	    strstr(err, "roof.svg "))
		fail_msg("warnings:\n%s", err);
	free(err);
	tp_rm_rf(dir);
}

/* Item 6: agent calibrate -o writes JSON: another name is warned about (before anything runs). */
static void test_cli_input_calibrate_output_extension(void **state)
{
	(void)state;
	int st;
	size_t n;
	char *out = run_bin("agent", "calibrate --collector 127.0.0.1:1 -o /nonexistent/model.txt --only none", &st, &n);
	assert_int_equal(st, 2); /* --only none: stops before any benchmark */
	expect_text("calibrate -o", out, n, "-o: /nonexistent/model.txt is written as JSON (the machine model)");
	free(out);
	out = run_bin("agent", "calibrate --collector 127.0.0.1:1 -o /nonexistent/model.json --only none", &st, &n);
	assert_int_equal(st, 2);
	assert_null(strstr(out, "is written as JSON"));
	free(out);
}

/* Item 6: the boards' deploy scripts print their comment block as usage, and nothing of
 * the script after it (android-arm64 printed its `set -euo pipefail`). */
static void test_cli_input_deploy_usage(void **state)
{
	(void)state;
	const char *src = getenv("PROF_SRC_DIR");
	static const char *const boards[] = {"android-arm64", "arndale-octa"};
	for (size_t i = 0; i < 2; i++) {
		char cmd[1024];
		int st;
		snprintf(cmd, sizeof(cmd), "bash %s/board/%s/deploy.sh --help", src ? src : ".", boards[i]);
		char *out = run_sh(cmd, &st, NULL);
		if (st != 0 || strstr(out, "set -") || strstr(out, "here=") || out[0] == '#' ||
		    !strstr(out, "Build first: make BOARD="))
			fail_msg("%s: exit %d:\n%s", cmd, st, out);
		free(out);
	}
	char cmd[1024];
	int st;
	snprintf(cmd, sizeof(cmd), "bash %s/board/arndale-octa/deploy.sh sftp", src ? src : ".");
	char *out = run_sh(cmd, &st, NULL);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "say ssh USER@BOARD, root DIR or adb"));
	free(out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_cli_input_seconds_out_of_range_refused),
	    cmocka_unit_test(test_cli_input_kernel_model_not_a_model),
	    cmocka_unit_test(test_cli_input_store_is_a_directory),
	    cmocka_unit_test(test_cli_input_machine_help_says_override),
	    cmocka_unit_test(test_cli_input_output_extension_warned),
	    cmocka_unit_test(test_cli_input_calibrate_output_extension),
	    cmocka_unit_test(test_cli_input_deploy_usage),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
