/* The --help of the agent and the collector is generated from the same
 * table that dispatches their subcommands: `agent --help` and `collector
 * --help` list exactly the table's names, and every listed subcommand
 * answers its own --help (exit 0, "usage: PROG NAME", no printf escapes such
 * as a literal "%%"). Runs the built binaries ($PROF_BIN_DIR). */
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <cmocka.h>

#include "cli/cli.h"
#include "commands.h"
#include "testproc.h"

/* Output (stdout + stderr) of PROG ARGS, and its exit status in *status. */
static char *run_help(const char *prog, const char *args, int *status)
{
	char bin[512], cmd[1024];
	tp_bin(prog, bin, sizeof(bin));
	snprintf(cmd, sizeof(cmd), "%s %s 2>&1", bin, args);
	FILE *p = popen(cmd, "r");
	assert_non_null(p);
	size_t cap = 1 << 16, len = 0;
	char *buf = malloc(cap + 1);
	assert_non_null(buf);
	size_t got;
	while (len < cap && (got = fread(buf + len, 1, cap - len, p)) > 0)
		len += got;
	buf[len] = '\0';
	int st = pclose(p);
	*status = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	return buf;
}

/* The names listed under the line starting with `header` ("  NAME  text" lines, up to a blank line). */
static size_t listed_names(const char *text, const char *header, char names[][32], size_t max)
{
	const char *p = strstr(text, header);
	assert_non_null(p);
	p = strchr(p, '\n');
	size_t n = 0;
	while (p && p[1] == ' ' && p[2] == ' ' && p[3] != ' ' && n < max) {
		if (sscanf(p + 1, " %31s", names[n]) == 1)
			n++;
		p = strchr(p + 1, '\n');
	}
	return n;
}

static void check_sub_help(const char *prog, const char *name, const char *usage_prefix)
{
	char args[96];
	snprintf(args, sizeof(args), "%s --help", name);
	int st;
	char *out = run_help(prog, args, &st);
	bool ok = st == 0 && strncmp(out, usage_prefix, strlen(usage_prefix)) == 0 && !strstr(out, "%%");
	if (!ok)
		fprintf(stderr, "%s", out);
	free(out);
	if (!ok)
		fail_msg("%s %s --help: exit %d, want it to start with '%s' and hold no '%%%%' (above)", prog, name, st,
			 usage_prefix);
}

static void test_cli_help_collector_lists_its_dispatch_table(void **state)
{
	(void)state;
	int st;
	char *out = run_help("collector", "--help", &st);
	assert_int_equal(st, 0);
	char names[64][32];
	size_t n = listed_names(out, "commands (", names, 64);
	size_t ntable = 0;
	for (const struct cli_command *c = cli_commands; c->name; c++, ntable++) {
		bool found = false;
		for (size_t i = 0; i < n; i++)
			found |= strcmp(names[i], c->name) == 0;
		char syn[96];
		snprintf(syn, sizeof(syn), "collector %s ", c->name);
		if (!found || !strstr(out, syn))
			fail_msg("collector --help does not list '%s' (in the synopsis and the commands):\n%s", c->name, out);
		char prefix[96];
		snprintf(prefix, sizeof(prefix), "usage: collector %s ", c->name);
		check_sub_help("collector", c->name, prefix);
	}
	if (n != ntable)
		fail_msg("collector --help lists %zu commands, the dispatch table has %zu:\n%s", n, ntable, out);
	static const char *const must[] = {"calibrate", "edag", "--format text|json|html", "--kernel-model", "--device"};
	for (size_t i = 0; i < sizeof(must) / sizeof(must[0]); i++)
		if (!strstr(out, must[i]))
			fail_msg("collector --help lacks %s", must[i]);
	free(out);
	/* an unknown command is refused with the usage */
	out = run_help("collector", "no-such-command", &st);
	assert_int_equal(st, 2);
	assert_non_null(strstr(out, "unknown command 'no-such-command'"));
	free(out);
}

static void test_cli_help_agent_lists_its_dispatch_table(void **state)
{
	(void)state;
	int st;
	char *out = run_help("agent", "--help", &st);
	assert_int_equal(st, 0);
	char names[64][32];
	size_t n = listed_names(out, "subcommands:", names, 64);
	size_t ntable = 0;
	for (const struct agent_command *c = agent_commands; c->name; c++, ntable++) {
		bool found = false;
		for (size_t i = 0; i < n; i++)
			found |= strcmp(names[i], c->name) == 0;
		if (!found)
			fail_msg("agent --help does not list '%s':\n%s", c->name, out);
		char prefix[96];
		snprintf(prefix, sizeof(prefix), strcmp(c->name, "stat") == 0 ? "usage: agent [%s] " : "usage: agent %s ",
			 c->name);
		check_sub_help("agent", c->name, prefix);
	}
	if (n != ntable)
		fail_msg("agent --help lists %zu subcommands, the dispatch table has %zu:\n%s", n, ntable, out);
	free(out);
}

/* Subcommands that only start a command do not offer -p/-a. */
static void test_cli_help_run_and_profile_take_only_a_command(void **state)
{
	(void)state;
	static const char *const cmds[] = {"run", "profile"};
	for (size_t i = 0; i < 2; i++) {
		char args[64];
		snprintf(args, sizeof(args), "%s --help", cmds[i]);
		int st;
		char *out = run_help("agent", args, &st);
		assert_int_equal(st, 0);
		if (strstr(out, "-p PID") || strstr(out, "  -a "))
			fail_msg("agent %s --help offers -p/-a:\n%s", cmds[i], out);
		assert_non_null(strstr(out, "-- CMD [ARGS...]"));
		free(out);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_cli_help_collector_lists_its_dispatch_table),
		cmocka_unit_test(test_cli_help_agent_lists_its_dispatch_table),
		cmocka_unit_test(test_cli_help_run_and_profile_take_only_a_command),
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
