/* Messages from the OpenCL layer (inside the profiled app) to the agent, over
 * a SOCK_SEQPACKET unix socket, native byte order (both ends run on the same
 * machine). A datagram holds one or more messages back to back (the layer
 * batches completed commands: one send per batch, not per command); each
 * message starts with its magic, type and length. Kernels are declared once
 * per connection (PCL_MSG_KERNEL) and commands name them by that id, so a
 * command carries no strings. Shared by libprofcl_layer.so /
 * libprofcl_preload.so and the agent's receiver (cl_receiver.c); no
 * allocation, no dependencies. */
#ifndef AGENT_CL_LAYER_CL_MSG_H
#define AGENT_CL_LAYER_CL_MSG_H

#include <stddef.h>
#include <stdint.h>

#define PCL_MSG_MAGIC 0x50434c33u /* "PCL3" */
#define PCL_MSG_MAX 4096u         /* largest encoded message */
#define PCL_DGRAM_MAX 65536u      /* largest datagram (a batch of messages) */
#define PCL_MAX_DEPS 64u          /* per kind; the layer truncates longer lists */
#define PCL_MAX_NAME 255u
#define PCL_MAX_OPTIONS 511u
#define PCL_MAX_DETAIL 191u

/* Environment the agent sets for the app. */
#define PCL_ENV_SOCKET "PROF_CL_SOCKET"     /* "@name" (abstract) or a path */
#define PCL_ENV_DROPFILE "PROF_CL_DROPFILE" /* where the layer appends drop counts it could not send */
#define PCL_ENV_DEBUG "PROF_CL_DEBUG"       /* 1: log to stderr, 2: also every command */
#define PCL_ENV_STATE "PROF_CL_STATE"       /* file of per-thread "inside the library" slots (cl_state.h) */

enum pcl_msg_type {
	PCL_MSG_HELLO = 1,  /* first message of a process's connection: pcl_proc */
	PCL_MSG_CMD = 2,    /* one completed command: pcl_cmd */
	PCL_MSG_BYE = 3,    /* process exit: pcl_proc with totals */
	PCL_MSG_KERNEL = 4, /* a kernel declaration (before the first command naming it): pcl_kdesc */
	PCL_MSG_NOTE = 5,   /* what the library found when it started: pcl_proc with flags and detail */
};

enum pcl_mode { PCL_MODE_LAYER = 1, PCL_MODE_PRELOAD = 2 };

/* pcl_proc.flags of a NOTE */
enum pcl_note_flags {
	PCL_NOTE_LAYER_LOADED = 1u << 0,     /* the ICD loader initialised the layer */
	PCL_NOTE_SHIM_ACTIVE = 1u << 1,      /* the preload shim saw the program's first OpenCL call */
	PCL_NOTE_DLOPEN_BRIDGED = 1u << 2,   /* the program dlopen'ed libOpenCL; the shim stands in for it */
	PCL_NOTE_DLOPEN_UNBRIDGED = 1u << 3, /* ... and the shim could not: its calls are not seen (detail: library) */
};

struct pcl_proc {
	int32_t pid;
	uint32_t mode;     /* enum pcl_mode */
	uint32_t flags;    /* NOTE: enum pcl_note_flags */
	uint64_t commands; /* commands captured so far */
	uint64_t dropped;  /* commands dropped so far (queue full, agent absent) */
	char detail[PCL_MAX_DETAIL + 1];
};

struct pcl_kdesc {
	uint32_t id; /* per process, >= 1 */
	uint64_t program_hash;
	char name[PCL_MAX_NAME + 1];
	char options[PCL_MAX_OPTIONS + 1];
};

struct pcl_cmd {
	uint64_t id;
	int32_t pid;
	uint32_t queue_id;
	uint32_t type; /* CL_COMMAND_* */
	uint32_t kernel; /* pcl_kdesc id for kernel launches, 0 otherwise */
	uint32_t work_dim;
	uint8_t has_local, has_offset, forced_profiling, layer_event;
	uint64_t global[3], local[3], offset[3];
	uint64_t queued, submit, start, end;  /* device clock */
	uint64_t host_enqueue, host_complete; /* CLOCK_MONOTONIC, absolute */
	uint64_t bytes;
	uint64_t prev_in_queue;
	uint64_t dropped_before;
	uint32_t n_wait, n_read, n_written;
	uint64_t wait[PCL_MAX_DEPS], read[PCL_MAX_DEPS], written[PCL_MAX_DEPS];
};

struct pcl_msg {
	int type; /* enum pcl_msg_type */
	union {
		struct pcl_proc proc; /* HELLO, BYE, NOTE */
		struct pcl_cmd cmd;
		struct pcl_kdesc kernel;
	} u;
};

/* Encode one message into buf; returns its length or -EMSGSIZE (cap >=
 * PCL_MSG_MAX is always enough). Strings longer than the limits are cut. */
int pcl_encode_proc(enum pcl_msg_type type, const struct pcl_proc *p, uint8_t *buf, size_t cap);
int pcl_encode_cmd(const struct pcl_cmd *c, uint8_t *buf, size_t cap);
int pcl_encode_kernel(const struct pcl_kdesc *k, uint8_t *buf, size_t cap);
/* Decode the first message of buf[0..len): returns its length (> 0) and fills
 * *m, or -EINVAL for anything malformed (wrong magic, short, a length that
 * does not match the content, counts over the limits, unknown type). */
int pcl_decode(const uint8_t *buf, size_t len, struct pcl_msg *m);

#endif
