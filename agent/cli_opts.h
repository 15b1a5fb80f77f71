/* Options every agent subcommand shares (collector, spool, target, duration,
 * logging), parsed in one place. A subcommand passes its own extra options
 * and gets them back through a callback. */
#ifndef AGENT_CLI_OPTS_H
#define AGENT_CLI_OPTS_H

#include <getopt.h>
#include <stdbool.h>

#include "session.h"
#include "target.h"

#define EXIT_AGENT_ERROR 1
#define EXIT_USAGE 2
#define DEFAULT_SPOOL_DIR "/var/tmp/prof-agent-spool"

struct agent_cli {
	struct session_opts so;
	struct target_opts to;
	int verbose;        /* -1 quiet, 0 normal, 1 debug */
	bool need_target;   /* the subcommand profiles a target (exactly one of -p/-a/--CMD) */
	bool target_optional; /* with need_target: zero targets are accepted too (the subcommand checks) */
	char spool_buf[512];  /* the default spool: DEFAULT_SPOOL_DIR/<agent id>@<collector> */
};

/* Called for each option in `extra` (and for extra short options); return 0,
 * or an exit code (EXIT_USAGE after logging what is wrong). */
typedef int (*agent_cli_extra_fn)(void *ctx, int opt, const char *arg);

/* Parse argv (argv[0] is the subcommand name). `usage` is printed for -h.
 * extra: NULL or a {0}-terminated getopt_long table whose values are >= 1000;
 * extra_short: extra short options ("F:g") handled by fn too.
 * Returns -1 to go on, or the exit code to return (0 after --help). Applies -v/-q. */
int agent_cli_parse(int argc, char **argv, struct agent_cli *cli, const char *usage,
		    const struct option *extra, const char *extra_short, agent_cli_extra_fn fn, void *ctx);
/* A run's exit status: status (the target's), or EXIT_AGENT_ERROR when it is 0
 * but records of the run are left unacknowledged in the spool (the summary's
 * NOT DELIVERED line says so). */
int agent_cli_exit_status(const struct session *s, int status);
/* Where the end-of-run summary goes: stderr, or with -q (issue #41: nothing on
 * the program's streams) appended to SPOOL/run-summary.txt (or nowhere when
 * that cannot be opened); never NULL. Close it with agent_cli_summary_close. */
#include <stdio.h>
FILE *agent_cli_summary_open(const struct agent_cli *cli);
void agent_cli_summary_close(FILE *f);
/* Helpers for subcommands' own options. */
int agent_cli_double(const char *s, double *out);                         /* >= 0 */
/* A time in seconds, min..AGENT_CLI_MAX_SECONDS: every such option becomes CLOCK_MONOTONIC
 * nanoseconds in a uint64_t, and 1e30 s did not fit (it ended the run at once). */
#define AGENT_CLI_MAX_SECONDS 315360000.0 /* 10 years */
int agent_cli_seconds(const char *s, double min, double *out);
int agent_cli_ulong(const char *s, unsigned long max, unsigned long *out);  /* 0..max */
/* Values of options several subcommands take, parsed once: 0, or EXIT_USAGE after
 * logging what is wrong (the message names the option and echoes the value). */
int agent_cli_freq(const char *s, unsigned *hz);          /* -F HZ: 1..100000 */
int agent_cli_interval_ms(const char *s, unsigned *ms);   /* -I MS: 10..86400000 */
int agent_cli_backend(const char *s, int *backend);       /* --backend auto|bpf|ring (enum sampler_backend) */
int agent_cli_cl_mode(const char *s, int *mode);          /* --mode layer|preload|auto (enum cl_launch_mode) */
/* Text of the shared options, for usage messages: the target options
 * (-p, -a, -- CMD, --duration) and the session options (collector, spool...). */
extern const char agent_cli_target_help[];
extern const char agent_cli_common_help[];
/* The target options of subcommands that only start a command (run, profile). */
extern const char agent_cli_cmd_help[];

#endif
