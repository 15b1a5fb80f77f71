/* The agent's side of the capture library's state file (cl_layer/cl_state.h):
 * created before the command starts, read when it died by a signal, to say
 * whether the library was inside a call on one of its threads then. Only
 * built with CONFIG_AGENT_OPENCL. */
#ifndef AGENT_CL_STATE_FILE_H
#define AGENT_CL_STATE_FILE_H

#include <stddef.h>

/* The values of TargetEnd.capture_inside (proto/target.proto). */
enum cl_inside {
	CL_INSIDE_UNKNOWN = 0,
	CL_INSIDE_NO = 1,	  /* no thread of the pid was inside the library */
	CL_INSIDE_FORWARDING = 2, /* some were, each forwarding the program's own call to the runtime */
	CL_INSIDE_OWN = 3,	  /* some thread was in a call of the library's own (a query, its reaper, its callback) */
};

/* A fresh state file in dir (0600); its path in path. 0 or -errno. */
int cl_state_file_create(const char *dir, char *path, size_t len);
/* Which threads of pid were inside the library: CL_INSIDE_OWN or
 * CL_INSIDE_FORWARDING with the threads in detail ("thread 12 in
 * clSetKernelArg, in the library's own call to clGetKernelArgInfo"),
 * CL_INSIDE_NO, or CL_INSIDE_UNKNOWN when the file is unreadable or some
 * threads found no slot. */
enum cl_inside cl_state_file_inside(const char *path, int pid, char *detail, size_t len);

#endif
