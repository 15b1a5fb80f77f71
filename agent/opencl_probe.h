/* OpenCL platform/device discovery for Hello and --features. The library is
 * loaded at run time (dlopen "libOpenCL.so.1"), in a short-lived child
 * process so that a broken driver can neither crash nor leak into the agent.
 * Without CONFIG_AGENT_OPENCL it reports "not compiled in". */
#ifndef AGENT_OPENCL_PROBE_H
#define AGENT_OPENCL_PROBE_H

#include <stddef.h>
#include <stdint.h>

#define OPENCL_PROBE_MAX_DEVICES 16u

struct opencl_device {
	char platform[128];
	char name[128];
	char vendor[128];
	char version[128];
	char driver[64];
	uint32_t compute_units;
	uint64_t global_mem_bytes;
	uint32_t max_clock_mhz;
	uint32_t type; /* CL_DEVICE_TYPE bits */
};

struct opencl_probe {
	size_t nplatforms;
	size_t ndevices;
	struct opencl_device devices[OPENCL_PROBE_MAX_DEVICES];
	char status[160]; /* "ok", "not compiled in", "libOpenCL.so.1 not found: ...", ... */
};

/* Fill p. Returns 0 when the probe ran (even with no platform), -ENOTSUP when
 * OpenCL is not compiled in, -ENOENT when the library is missing, other
 * -errno on failure; p->status says it in words. timeout_ms bounds the child. */
int opencl_probe_run(struct opencl_probe *p, int timeout_ms);

/* The discovery itself, in this process (opencl_discover.c): what the probe's child, or the
 * board-libc helper prof-clhelper, runs. */
void opencl_probe_fill(struct opencl_probe *p);

/* Static musl agents (no dlopen): in the probe's child, exec the helper `prof-clhelper MODE`
 * (agent/cl_layer/helper/) with its stdout on fd; it writes what the child would have. Found
 * as $PROF_CLHELPER, else next to the agent, else in ../lib/profcl/ from it. Returns only
 * when no helper could be executed, the reason in status (opencl_helper.c). */
void opencl_helper_exec(int fd, const char *mode, char *status, size_t len);

/* dlopen("libOpenCL.so.1") for the probe and for calibration (CONFIG_AGENT_OPENCL
 * only). NULL on failure, with the reason in err: the library's absence, or
 * that this agent is a static musl build, which cannot load libraries. */
void *opencl_lib_open(char *err, size_t errlen);

/* "CPU", "GPU", "ACCELERATOR", ... for CL_DEVICE_TYPE bits. */
const char *opencl_device_type_name(uint32_t type);

#endif
