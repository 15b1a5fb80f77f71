/* A session's OpenCL commands loaded into memory, for the report and the
 * Perfetto export: names resolved, the DAG (collector/cldag) built, and the
 * device -> host clock offset estimated. */
#ifndef COLLECTOR_REPORT_CL_DATA_H
#define COLLECTOR_REPORT_CL_DATA_H

#include <stddef.h>
#include <stdint.h>

#include "cldag/cldag.h"
#include "store/store.h"
#include "store/store_opencl.h"

struct cl_data_cmd {
	struct store_cl_command_row r; /* arrays point into the owned copies below */
	const char *name;	       /* kernel name, or the command type ("read buffer") */
	uint64_t *lists;	       /* wait, read, written, back to back */
};

/* A kernel declaration: what a user means by "a kernel" is this plus the NDRange shape. */
struct cl_data_kernel {
	char *name; /* NULL where undeclared */
	uint64_t program_hash;
	char *options;
};

struct cl_data {
	struct cl_data_cmd *cmds; /* by (pid, id) */
	size_t n;
	struct cl_data_kernel *kernels; /* by kernel id */
	size_t n_kernels;
	struct cldag dag; /* nodes in the order of cmds */
	/* host_ns ~ device_ns + offset (median over commands of host_enqueue - queued) */
	int64_t device_to_host_ns;
	uint64_t busy_ns; /* union of [start, end] over all commands */
};

/* Loads and analyses; -ENOMEM, or the store's error. */
int cl_data_load(struct store *st, int64_t sid, struct cl_data *d);
void cl_data_free(struct cl_data *d);
/* "ndrange", "read buffer", ... for a CL_COMMAND_* value. */
const char *cl_command_type_name(uint32_t type);
/* Device duration of a command (0 if not timed). */
uint64_t cl_data_duration(const struct cl_data_cmd *c);

#endif
