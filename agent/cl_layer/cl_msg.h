/* Messages from the OpenCL layer (inside the profiled app) to the agent, over
 * a SOCK_SEQPACKET unix socket: one message per datagram, native byte order
 * (both ends run on the same machine). Shared by libprofcl_layer.so /
 * libprofcl_preload.so and the agent's receiver (cl_receiver.c); no
 * allocation, no dependencies. */
#ifndef AGENT_CL_LAYER_CL_MSG_H
#define AGENT_CL_LAYER_CL_MSG_H

#include <stddef.h>
#include <stdint.h>

#define PCL_MSG_MAGIC 0x50434c32u /* "PCL2" */
#define PCL_MSG_MAX 4096u         /* largest encoded message */
#define PCL_MAX_DEPS 64u          /* per kind; the layer truncates longer lists */
#define PCL_MAX_NAME 255u
#define PCL_MAX_OPTIONS 511u

/* Environment the agent sets for the app. */
#define PCL_ENV_SOCKET "PROF_CL_SOCKET"     /* "@name" (abstract) or a path */
#define PCL_ENV_DROPFILE "PROF_CL_DROPFILE" /* where the layer appends drop counts it could not send */
#define PCL_ENV_DEBUG "PROF_CL_DEBUG"       /* 1: log to stderr, 2: also every command */

enum pcl_msg_type {
	PCL_MSG_HELLO = 1, /* first message of a process: pcl_proc */
	PCL_MSG_CMD = 2,   /* one completed command: pcl_cmd */
	PCL_MSG_BYE = 3,   /* process exit: pcl_proc with totals */
};

enum pcl_mode { PCL_MODE_LAYER = 1, PCL_MODE_PRELOAD = 2 };

struct pcl_proc {
	int32_t pid;
	uint32_t mode;     /* enum pcl_mode */
	uint64_t commands; /* commands captured so far */
	uint64_t dropped;  /* commands dropped so far (queue full, agent absent) */
};

struct pcl_cmd {
	uint64_t id;
	int32_t pid;
	uint32_t queue_id;
	uint32_t type; /* CL_COMMAND_* */
	uint32_t work_dim;
	uint8_t has_local, has_offset, forced_profiling, layer_event;
	uint64_t global[3], local[3], offset[3];
	uint64_t queued, submit, start, end;     /* device clock */
	uint64_t host_enqueue, host_complete;    /* CLOCK_MONOTONIC, absolute */
	uint64_t bytes;
	uint64_t prev_in_queue;
	uint64_t dropped_before;
	uint64_t program_hash;
	uint32_t n_wait, n_read, n_written;
	uint64_t wait[PCL_MAX_DEPS], read[PCL_MAX_DEPS], written[PCL_MAX_DEPS];
	char kernel[PCL_MAX_NAME + 1];   /* "" for non-kernel commands */
	char options[PCL_MAX_OPTIONS + 1];
};

/* Encode into buf (cap >= PCL_MSG_MAX is always enough); returns the length
 * or -EMSGSIZE. Strings longer than the limits are cut. */
int pcl_encode_proc(enum pcl_msg_type type, const struct pcl_proc *p, uint8_t *buf, size_t cap);
int pcl_encode_cmd(const struct pcl_cmd *c, uint8_t *buf, size_t cap);
/* Decode one message; returns its type (> 0) and fills *p or *c, or -EINVAL
 * for anything malformed (wrong magic, short, counts over the limits). */
int pcl_decode(const uint8_t *buf, size_t len, struct pcl_proc *p, struct pcl_cmd *c);

#endif
