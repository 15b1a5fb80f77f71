/* The agent's subcommands: each takes its own argv (argv[0] = its name) and
 * returns the process exit status. One table (commands.c) dispatches them
 * and `agent --help` lists it. */
#ifndef AGENT_COMMANDS_H
#define AGENT_COMMANDS_H

int cmd_stat(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_trace_import(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_spool(int argc, char **argv);

#include <stdio.h>

struct agent_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *help; /* one line */
};
extern const struct agent_command agent_commands[]; /* NULL-name terminated */
const struct agent_command *agent_command_find(const char *name);
/* "subcommands:" and one "  NAME  help" line each. */
void agent_commands_help(FILE *out);

#endif
