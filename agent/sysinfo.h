/* What the agent tells the collector about itself: the Hello record
 * (uname, hostname, CPUs from /proc/cpuinfo + cpufreq, OpenCL devices,
 * session boot_id, clock base, features, target, board). */
#ifndef AGENT_SYSINFO_H
#define AGENT_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"

#define AGENT_VERSION "0.1.0"
#define SYSINFO_MAX_CPUS 1024u

struct cpu_desc {
	uint32_t cpu;
	char model[128];      /* "ARM Cortex-A15", or "model name", or the ARM "Processor" line */
	uint32_t implementer; /* MIDR implementer, 0 if unknown */
	uint32_t part;        /* MIDR part, 0 if unknown */
	uint64_t max_freq_khz;
};

/* Parse a /proc/cpuinfo-format file. Handles x86 ("model name" per CPU),
 * modern ARM/arm64 (a block per CPU with "CPU implementer"/"CPU part"), and
 * ARM 3.x kernels, where a global "Processor" line comes first, each
 * "processor : N" block only has BogoMIPS, and one trailing block holds the
 * implementer/part of the CPU that read the file: CPUs without their own
 * values take that block's. Returns the number of CPUs (>= 0) or -errno;
 * *cpus is malloc'd (free it). */
int sysinfo_parse_cpuinfo(const char *path, struct cpu_desc **cpus, size_t *n);

/* ARM core name for (implementer, part), e.g. (0x41, 0xc0f) -> "Cortex-A15"; NULL if unknown. */
const char *sysinfo_arm_core_name(uint32_t implementer, uint32_t part);

/* cpufreq cpuinfo_max_freq of a CPU in kHz, 0 if unknown. */
uint64_t sysinfo_cpu_max_freq_khz(uint32_t cpu);

/* Compiled-in features, comma separated ("bpf,opencl,tracer"). */
const char *sysinfo_features(void);

/* A random 64-bit session id (getrandom). Never 0. */
uint64_t sysinfo_boot_id(void);

struct sysinfo_opts {
	const char *agent_id; /* NULL: hostname */
	const char *target;   /* "pid 123", "system-wide", "cmd ..." */
	uint64_t boot_id;
	uint64_t base_ns;     /* CLOCK_MONOTONIC */
	uint64_t realtime_ns; /* CLOCK_REALTIME read at the same time */
	bool opencl;          /* discover OpenCL devices */
	const char *cpuinfo_path; /* NULL: /proc/cpuinfo */
};

/* Build a Hello (every string and array malloc'd; free with sysinfo_hello_free). */
int sysinfo_hello_build(const struct sysinfo_opts *o, Prof__Hello **out);
void sysinfo_hello_free(Prof__Hello *h);

#endif
