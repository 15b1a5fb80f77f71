/* OpenCL command records in the store: the tables cl_kernels and
 * cl_command_blocks (a packed, compressed block of commands per record,
 * store_cl_block.h), written by the ClCommand / ClCommandBatch record kinds
 * (store_opencl.c), and their queries (store_opencl_read.c), which read the
 * row per command (cl_commands) of stores written before #41 as well. Rows
 * are passed to a callback; strings and arrays are valid during the call only. */
#ifndef COLLECTOR_STORE_OPENCL_H
#define COLLECTOR_STORE_OPENCL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_cl_kernel_row {
	uint32_t id;
	const char *name;
	uint64_t program_hash;
	const char *build_options;
	double model_ops, model_bytes; /* per work-item, from agent profile --kernel-model; 0: none */
};
typedef int (*store_cl_kernel_cb)(const struct store_cl_kernel_row *row, void *arg);

struct store_cl_command_row {
	uint64_t seq;
	int32_t pid;
	uint64_t id;
	uint32_t queue_id, type, kernel_id, work_dim;
	uint64_t global_size[3], local_size[3], global_offset[3]; /* 0 where absent */
	uint64_t queued_ns, submit_ns, start_ns, end_ns;	    /* device clock */
	uint64_t host_enqueue_ns, host_complete_ns;		    /* after Hello.base_ns */
	uint64_t bytes, prev_in_queue, dropped_before;
	bool forced_profiling, layer_event;
	const uint64_t *wait_ids, *mem_read, *mem_written;
	size_t n_wait, n_read, n_written;
};
typedef int (*store_cl_command_cb)(const struct store_cl_command_row *row, void *arg);

/* Kernel declarations of a session, by id. */
int store_cl_kernels(struct store *s, int64_t session_id, store_cl_kernel_cb cb, void *arg);
/* Commands of a session by (pid, command id). */
int store_cl_commands(struct store *s, int64_t session_id, store_cl_command_cb cb, void *arg);
/* The same for the commands enqueued in [t_from, t_to) (host_enqueue_ns): only the blocks
 * that overlap it are read. */
int store_cl_commands_range(struct store *s, int64_t session_id, uint64_t t_from, uint64_t t_to,
			    store_cl_command_cb cb, void *arg);

#endif
