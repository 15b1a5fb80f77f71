/* The agent's end of the OpenCL layer's socket: a loop source that accepts
 * the profiled processes' connections (SOCK_SEQPACKET, abstract unix name),
 * turns their command messages (agent/cl_layer/cl_msg.h) into ClCommand
 * records with interned kernel names, and sends them through the session.
 * Only built with CONFIG_AGENT_OPENCL. */
#ifndef AGENT_CL_RECEIVER_H
#define AGENT_CL_RECEIVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "loop.h"
#include "session.h"

struct cl_receiver;

/* Listen on a fresh abstract name (before the target starts). err gets a
 * user-facing reason. */
int cl_receiver_open(struct cl_receiver **out, char *err, size_t errlen);
/* The value for PROF_CL_SOCKET ("@prof-cl-..."). */
const char *cl_receiver_address(const struct cl_receiver *r);
/* The value for PROF_CL_RINGS: the directory of the processes' shared rings
 * (cl_ring_reader.h), "" when it could not be made (the socket alone then). */
const char *cl_receiver_rings(const struct cl_receiver *r);
/* Forward through s from now on; register with the loop. */
int cl_receiver_attach(struct cl_receiver *r, struct session *s, struct loop *l);
/* Declare kernels with this work model (agent profile --kernel-model); the
 * entries are copied. */
struct kernel_model_entry;
int cl_receiver_set_kernel_model(struct cl_receiver *r, const struct kernel_model_entry *e, size_t n);
/* After the target ended: read what the processes left in their sockets. */
void cl_receiver_drain(struct cl_receiver *r);
uint64_t cl_receiver_commands(const struct cl_receiver *r);
/* Drops the layers reported (BYE or the last command's counter). */
uint64_t cl_receiver_layer_dropped(const struct cl_receiver *r);
/* Commands a process enqueued that were never timed: it ended (killed,
 * aborted) before the library saw them complete (from the rings' counters). */
uint64_t cl_receiver_untimed(const struct cl_receiver *r);
/* Why the run has no commands, in one line ("" when it has some): no process
 * loaded the library, one loaded it but enqueued nothing, one dlopen'ed
 * libOpenCL where the preload shim cannot follow. layer_mode: the mode used. */
void cl_receiver_why_none(const struct cl_receiver *r, bool layer_mode, char *buf, size_t len);
/* " opencl: N commands from N process(es), N kernels, N dropped by the layer",
 * and the reason when N is 0. */
void cl_receiver_print_summary(const struct cl_receiver *r, bool layer_mode, FILE *out);
void cl_receiver_close(struct cl_receiver *r);

/* Drop counts a previous run's layer could not tell its agent (it was gone):
 * log them and remove the file. Returns the commands dropped in total. */
uint64_t cl_receiver_report_dropfile(const char *path);

#endif
