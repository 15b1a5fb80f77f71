/* The agent's subcommands: each takes its own argv (argv[0] = its name) and
 * returns the process exit status. The table lives in main.c. */
#ifndef AGENT_COMMANDS_H
#define AGENT_COMMANDS_H

int cmd_stat(int argc, char **argv);
int cmd_trace(int argc, char **argv);
int cmd_trace_import(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_profile(int argc, char **argv);

#endif
