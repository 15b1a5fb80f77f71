/* OpenCL commands of a store as SQL rows, for tests and benchmarks: since #41
 * the collector stores them as packed, compressed blocks (cl_command_blocks),
 * which SQL cannot read. tp_cl_int() answers a query over a temporary
 * cl_commands table with the columns of the row per command that collectors
 * before #41 wrote, filled through the collector's own reader
 * (store_cl_commands), beside the store's other tables (attached read-only).
 * The flattened store is kept for the next query while the store's file and
 * WAL are unchanged (size, mtime, inode). */
#ifndef TESTS_LIB_TP_CL_H
#define TESTS_LIB_TP_CL_H

#include <stdint.h>

/* The first column of the first row of the query (-1 on error), with
 * cl_commands(session_id, seq, pid, cmd_id, queue_id, type, kernel_id, work_dim,
 * gx, gy, gz, lx, ly, lz, ox, oy, oz, queued_ns, submit_ns, start_ns, end_ns,
 * host_enqueue_ns, host_complete_ns, bytes, prev_in_queue, n_wait, n_read,
 * n_written, dropped_before, forced_profiling, layer_event) holding every
 * session's commands. */
int64_t tp_cl_int(const char *db, const char *sql_fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
