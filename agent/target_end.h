/* What became of the command `agent run` / `agent profile` started: told to
 * the user (the signal that ended it, whether the OpenCL capture library was
 * inside a call then, why no OpenCL command was captured) and sent to the
 * collector as a TargetEnd record for the reports. */
#ifndef AGENT_TARGET_END_H
#define AGENT_TARGET_END_H

#include <stdio.h>

#include "session.h"

struct target_end {
	int pid;
	int status;	    /* waitpid status */
	int capture_inside; /* enum cl_inside (cl_state_file.h); 0 without OpenCL capture */
	char capture_detail[512];
	char opencl_note[512]; /* why there are no OpenCL commands, "" */
};

/* Lines on out when a signal ended the command, and the record. 0 or -errno (the send). */
int target_end_report(struct session *s, const struct target_end *e, FILE *out);

#endif
