/* A bound on a ClCommand's packed size, by arithmetic (issue #41): the agent's
 * OpenCL batches are cut by size without protobuf-c's get_packed_size, which
 * walks every field descriptor of every command. */
#ifndef AGENT_CL_BATCH_SIZE_H
#define AGENT_CL_BATCH_SIZE_H

#include <stddef.h>

#include "opencl.pb-c.h"

/* At least the packed size of m as one entry of a ClCommandBatch (its tag and
 * length included), without its new_kernels declarations. */
size_t cl_command_size_bound(const Prof__ClCommand *m);

#endif
