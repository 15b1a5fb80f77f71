/* The agent's subcommand table (commands.h). */
#include "commands.h"

#include <string.h>

const struct agent_command agent_commands[] = {
	{"stat", cmd_stat, "count perf events of a target, one row per interval (default)"},
	{"record", cmd_record, "sample a target's CPU at -F HZ (bpf or perf ring back end), aggregated per interval"},
	{"run", cmd_run, "run a command with OpenCL kernel/transfer timing (layer or LD_PRELOAD shim)"},
	{"trace", cmd_trace, "sampled instruction-trace windows of a thread (ptrace), for the eDAG analysis"},
	{"trace-import", cmd_trace_import, "stream a full native trace (QEMU plugin, file or pipe) to the collector"},
	{"profile", cmd_profile, "one command, one session: counters, CPU samples, OpenCL timing and trace windows"},
	{"calibrate", cmd_calibrate, "measure the machine (OpenCL device and CPU) for the roofline and the eDAG"},
	{"spool", cmd_spool, "list (ls), send (send) or remove (drop) the records agents left unacknowledged in their spools"},
	{NULL, NULL, NULL},
};

const struct agent_command *agent_command_find(const char *name)
{
	for (const struct agent_command *c = agent_commands; c->name; c++)
		if (strcmp(c->name, name) == 0)
			return c;
	return NULL;
}

void agent_commands_help(FILE *out)
{
	fputs("subcommands:\n", out);
	for (const struct agent_command *c = agent_commands; c->name; c++)
		fprintf(out, "  %-13s %s\n", c->name, c->help);
}
