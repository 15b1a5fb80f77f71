/* The collector's subcommands: one table that main() dispatches from and
 * that `collector --help` is printed from (cli.h). */
#include <string.h>

#include "cli.h"

const struct cli_command cli_commands[] = {
    {"sessions", cli_sessions, "--store PATH [--json]", "list the sessions in a store"},
    {"dump", cli_dump, "--store PATH --session N [--json] [--rows] [--keys]",
     "one session: hardware, per-event totals and rates, rows, CPU sample keys"},
    {"report", cli_report,
     "--store PATH [--session N | --since T --until T --agent ID --comm NAME|--pid N --by G] [--top] "
     "[--opencl] [--sensitivity] "
     "[--format text|json|html]",
     "the overview of a session (top functions, OpenCL kernels, roofline, latency sensitivity, calibration), "
     "or a section; with filters: the top table across sessions and agents (--sensitivity: latency "
     "sensitivity per function across them)"},
    {"export", cli_export,
     "--store PATH [--session N | filters] [--perfetto OUT.json] [--pprof OUT.pb.gz] [--folded OUT]",
     "a session as a Perfetto trace; CPU samples as pprof or folded stacks"},
    {"flame", cli_flame, "--store PATH [filters] -o FILE.html|FILE.svg",
     "flame graph of the CPU samples the filters select (HTML: zoom, search, callers/callees)"},
    {"diff", cli_diff,
     "--store PATH A B [filters] [-o FILE.html|.svg] (A, B: --session N or --since/--until)",
     "functions that gained and lost CPU share from A to B, and the differential flame graph"},
    {"calibrate", cli_calibrate, "--store PATH --session N [--model OUT.json] [--emit OUT.config]",
     "the machine model of a calibration session, and a GPGPU-sim configuration from it"},
    {"edag", cli_edag, "--store PATH --session N [-m M] [--cache SPEC] [--json]",
     "eDAG metrics (work, depth, latency sensitivity) of the session's instruction traces"},
    {"roofline", cli_roofline,
     "--store PATH --session N [--machine F] [--kernel-model F] [--device gpu|cpu] [-o OUT.svg|.png]",
     "roofline ceilings and dots, and the chart"},
    {"sensitivity", cli_sensitivity, "--store PATH --session N [--machine F] [-o PREFIX]",
     "latency sensitivity per traced thread, and its slowdown charts"},
    {"prune", cli_prune, "--store PATH --older-than DURATION [--agent ID] | --session N[,M...]",
     "retention: delete old samples and sessions, or whole sessions"},
    {"downsample", cli_downsample, "--store PATH --older-than DURATION [--per DURATION]",
     "long retention: old CPU samples summed per window (default a minute), totals kept"},
    {"recover", cli_recover, "--store DAMAGED.db --out NEW.db",
     "copy what a damaged SQLite store still holds into a new store"},
    {"check", cli_check, "--store PATH [--quick]",
     "check the store's integrity (read commands do it by themselves only after an unclean shutdown)"},
    {"migrate", cli_migrate, "--store PATH",
     "create or migrate the store's schema and exit (as the database owner; collectors then need no DDL)"},
    {"http-key", cli_http_key, "--token-file FILE",
     "the key the --http pages want on a non-loopback address (derived from the token)"},
    {NULL, NULL, NULL, NULL},
};

const struct cli_command *cli_command_find(const char *name)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void cli_commands_usage(FILE *f)
{
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(f, "       collector %s %s\n", c->name, c->synopsis);
}

void cli_commands_help(FILE *f)
{
	fputs("commands ('collector COMMAND --help' shows its options):\n", f);
	for (const struct cli_command *c = cli_commands; c->name; c++)
		fprintf(f, "  %-13s %s\n", c->name, c->help);
	fputs("Each command that reads a store takes --check full|quick|off (default quick): a damaged\n"
	      "store is refused with how to recover it.\n",
	      f);
}
