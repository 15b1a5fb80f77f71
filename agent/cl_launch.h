/* Starting a command with OpenCL command capture (agent run, agent profile):
 * choose layer or LD_PRELOAD mode, find the capture library, open the
 * receiving socket and build the environment the command gets. Only built
 * with CONFIG_AGENT_OPENCL. */
#ifndef AGENT_CL_LAUNCH_H
#define AGENT_CL_LAUNCH_H

#include <stddef.h>

#include "cl_receiver.h"

enum cl_launch_mode { CL_MODE_AUTO, CL_MODE_LAYER, CL_MODE_PRELOAD };

struct cl_launch {
	enum cl_launch_mode mode; /* the one chosen (never AUTO after cl_launch_open) */
	struct cl_receiver *rx;
	char *env[6];		  /* NAME=VALUE for the command, NULL-terminated */
	char lib[4096];
	char state[4096];	  /* the library's state file (cl_state_file.h), "" if none */
};

/* Parse "layer", "preload", "auto". */
int cl_launch_parse_mode(const char *s, enum cl_launch_mode *out);
/* Everything before the command starts; errors are logged. libdir: NULL for
 * the default places; spool_dir: where a layer writes drops it could not tell. */
int cl_launch_open(struct cl_launch *cl, enum cl_launch_mode mode, const char *libdir, const char *spool_dir);
void cl_launch_close(struct cl_launch *cl);
/* After the command pid ended: fill e's capture fields (e->status set) and
 * its OpenCL note: what the library was doing if a signal ended it, and why
 * no command was captured. */
struct target_end;
void cl_launch_outcome(const struct cl_launch *cl, struct target_end *e);

#endif
