/* agent: the on-board daemon. Subcommands share one streaming session
 * (agent/session.h), one poll loop (agent/loop.h) and one notion of target
 * (agent/target.h); each lives in its own agent/cmd_<name>.c. */
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "cli_opts.h"
#include "commands.h"
#include "feature_report.h"
#include "frame.h"
#include "generated/config.h"
#include "gpu/gpu_selftest.h"
#include "log.h"
#include "sysinfo.h"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: agent [SUBCOMMAND] --collector HOST:PORT [options] [-p PID | -a | -- CMD [ARGS...]]\n"
		"       agent --version | --features | --help\n"
#ifdef CONFIG_AGENT_MALI
		"       agent --gpu-selftest [--gpu-device PATH] [--gpu-interval US] [--dumps N]\n"
#endif
		"\n");
	agent_commands_help(out);
	fprintf(out, "\n'agent SUBCOMMAND --help' shows its options. Without a subcommand: stat.\n");
}

int main(int argc, char **argv)
{
	log_init("agent", LOG_LEVEL_INFO);
	signal(SIGPIPE, SIG_IGN);
	if (argc >= 2) {
		if (strcmp(argv[1], "--version") == 0) {
			printf("agent %s (schema version %u, board %s)\n", AGENT_VERSION, PROF_SCHEMA_VERSION,
			       CONFIG_BOARD_NAME);
			return 0;
		}
		if (strcmp(argv[1], "--features") == 0) {
			feature_report_print(stdout);
			return 0;
		}
#ifdef CONFIG_AGENT_MALI
		if (strcmp(argv[1], "--gpu-selftest") == 0)
			return gpu_selftest_main(argc - 1, argv + 1, stdout);
#endif
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		const struct agent_command *c = agent_command_find(argv[1]);
		if (c)
			return c->run(argc - 1, argv + 1);
		if (argv[1][0] != '-') {
			log_error("unknown subcommand '%s' (see agent --help)", argv[1]);
			return EXIT_USAGE;
		}
	}
	/* No subcommand: stat, with argv[0] standing in for its name. */
	argv[0] = "stat";
	return cmd_stat(argc, argv);
}
