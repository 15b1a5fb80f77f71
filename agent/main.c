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
#include "log.h"
#include "sysinfo.h"

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help;
};

static const struct command commands[] = {
	{"stat", cmd_stat, "count perf events of a target, one row per interval (default)"},
	{"trace", cmd_trace, "sampled instruction-trace windows of a thread (ptrace), for the eDAG analysis"},
	{"trace-import", cmd_trace_import, "stream a full native trace (QEMU plugin, file or pipe) to the collector"},
	{"run", cmd_run, "run a command with OpenCL kernel/transfer timing (layer or LD_PRELOAD shim)"},
	{"record", cmd_record, "sample a target's CPU at -F HZ (bpf or perf ring back end), aggregated per interval"},
	{"profile", cmd_profile, "one command, one session: counters, CPU samples, OpenCL timing and trace windows"},
	{"calibrate", cmd_calibrate, "measure the machine (OpenCL device and CPU) for the simulator, roofline and eDAG"},
};

#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

static void usage(FILE *out)
{
	fprintf(out, "usage: agent [SUBCOMMAND] --collector HOST:PORT [options] [-p PID | -a | -- CMD [ARGS...]]\n"
		     "       agent --version | --features | --help\n\nsubcommands:\n");
	for (size_t i = 0; i < NCOMMANDS; i++)
		fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].help);
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
		if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		for (size_t i = 0; i < NCOMMANDS; i++)
			if (strcmp(argv[1], commands[i].name) == 0)
				return commands[i].run(argc - 1, argv + 1);
		if (argv[1][0] != '-') {
			log_error("unknown subcommand '%s' (see agent --help)", argv[1]);
			return EXIT_USAGE;
		}
	}
	/* No subcommand: stat, with argv[0] standing in for its name. */
	argv[0] = "stat";
	return cmd_stat(argc, argv);
}
