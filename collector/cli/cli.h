/* The collector's query subcommands and their shared helpers. Each
 * subcommand takes its own argv (argv[0] is the subcommand name) and returns
 * the process exit status: 0 ok, 1 failure, 2 usage error. */
#ifndef COLLECTOR_CLI_H
#define COLLECTOR_CLI_H

#include <stdbool.h>
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
int cli_recover(int argc, char **argv);
int cli_migrate(int argc, char **argv);
int cli_check(int argc, char **argv);
int cli_prune(int argc, char **argv); /* cli_prune.c */
int cli_downsample(int argc, char **argv); /* cli_downsample.c */
int cli_http_key(int argc, char **argv);
int cli_flame(int argc, char **argv); /* cli_flame.c */
int cli_diff(int argc, char **argv);  /* cli_flame.c */

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

/* Open an existing store read-only, checked first as check says (STORE_CHECK_*
 * flags, 0: not checked); errors are logged with what to do. */
int cli_open_store(const char *path, unsigned check, struct store **out);
/* --check auto|full|quick|off, taken by every command that opens a store (default
 * auto: quick only after an unclean shutdown): the value as STORE_CHECK_* flags into *check; 0, or 2 after
 * printing the usage error. CLI_CHECK_HELP is its line in the commands' usage. */
int cli_check_arg(const char *cmd, const char *arg, unsigned *check);
#define CLI_CHECK_DEFAULT STORE_CHECK_AUTO
#define CLI_CHECK_HELP                                                                                       \
	"  --check MODE  check the store before reading it: auto (default: quick when its last writer\n"     \
	"                did not close it, e.g. after a crash), quick, full, or off (read a damaged\n"       \
	"                store as far as it goes); `collector check` checks it on demand\n"
/* The session id in s ("--session N"): N when s is a whole positive decimal
 * number, else 0 (NULL, empty, trailing text, zero or negative). */
long long cli_session_id(const char *s);
/* An output file whose format its name's extension picks: true when path ends in one of exts
 * (NULL-terminated, e.g. ".svg", ".png"; "-" for stdout counts as a match), else one warning
 * saying which format was written and which names would say so (cli_out_ext.c). */
bool cli_out_ext_check(const char *cmd, const char *path, const char *written_as, const char *const *exts);
/* "2024-05-01T12:00:00Z" (UTC) or "-" for 0. */
const char *cli_time(char *buf, size_t len, int64_t unix_s);

#endif
