/* The collector's query subcommands and their shared helpers. Each
 * subcommand takes its own argv (argv[0] is the subcommand name) and returns
 * the process exit status: 0 ok, 1 failure, 2 usage error. */
#ifndef COLLECTOR_CLI_H
#define COLLECTOR_CLI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

int cli_sessions(int argc, char **argv);
int cli_dump(int argc, char **argv);
int cli_report(int argc, char **argv);
int cli_export(int argc, char **argv);
int cli_calibrate(int argc, char **argv); /* cli_calibrate.c */
int cli_edag(int argc, char **argv);
int cli_roofline(int argc, char **argv);    /* cli_analysis.c */
int cli_sensitivity(int argc, char **argv); /* cli_analysis.c */
int cli_http_key(int argc, char **argv);

/* The subcommand table (cli_commands.c): main() dispatches from it and
 * `collector --help` lists it. NULL-name terminated. */
struct cli_command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *synopsis; /* arguments, one line */
	const char *help;     /* what it does, one line */
};
extern const struct cli_command cli_commands[];
const struct cli_command *cli_command_find(const char *name);
/* "       collector NAME SYNOPSIS" lines, and the "commands:" list of NAME + help. */
void cli_commands_usage(FILE *f);
void cli_commands_help(FILE *f);

/* Open an existing store read-only; errors are logged with what to do. */
int cli_open_store(const char *path, struct store **out);
/* The session id in s ("--session N"): N when s is a whole positive decimal
 * number, else 0 (NULL, empty, trailing text, zero or negative). */
long long cli_session_id(const char *s);
/* Copy s for terminal output: control characters become '?', empty is "-". */
const char *cli_clean(char *buf, size_t len, const char *s);
/* "2024-05-01T12:00:00Z" (UTC) or "-" for 0. */
const char *cli_time(char *buf, size_t len, int64_t unix_s);

#endif
