/* Physical peaks: what the hardware can do at most, from what the machine
 * says about itself (cores, clock, SIMD width) and published per-core rates,
 * never from a benchmark. A calibrated ceiling above its physical peak means
 * the benchmark is wrong (folded or dead code) and must not be a roof.
 * Pure functions (no I/O, no globals). */
#ifndef COMMON_CALIB_PHYS_H
#define COMMON_CALIB_PHYS_H

#include <stddef.h>

/* The CPU as the agent found it (agent/calib/phys_probe.c). */
struct calib_phys_cpu {
	unsigned cores;     /* online CPUs (or the OpenCL CPU device's compute units) */
	double mhz;         /* clock: measured (dependent add chain), else cpufreq */
	const char *isa;    /* widest FP SIMD the CPU runs: "avx512f", "avx2+fma", "neon", ... */
	unsigned fp32_lanes; /* fp32 lanes of that SIMD */
	double mem_mbps;     /* DRAM peak the platform states: sum over memory devices of MT/s x bus bytes
			      * (MB/s; SMBIOS type 17); 0: the system does not tell */
	unsigned mem_devices; /* memory devices that gave it */
};

/* Stated assumptions of the CPU formulas (upper bounds for every core the
 * project targets: no x86 or ARM core of ours issues more). */
#define CALIB_PHYS_FMA_PIPES 2u  /* SIMD FMA pipelines per core */

/* GFLOP/s = cores x MHz x lanes x FMA pipes x 2 / 1000, with the formula and
 * its assumption written to method. NAN (and why) when an input is missing. */
double calib_phys_cpu_gflops(const struct calib_phys_cpu *c, char *method, size_t n);
/* GB/s bound of a DRAM stream: the memory the platform states (channels x
 * speed: sum of MT/s x bus bytes over its memory devices) / 1000; NAN (and
 * why) when the system does not tell, never a cache figure. */
double calib_phys_cpu_gbps(const struct calib_phys_cpu *c, char *method, size_t n);
/* One SMBIOS type 17 (Memory Device) structure as the kernel exposes it
 * (/sys/firmware/dmi/entries/17-N/raw; DMTF DSP0134 7.18): MB/s =
 * configured speed (0x20, else speed 0x15; MT/s) x data width (0x0A, bits) / 8,
 * 0 for an empty slot or an unknown speed or width. */
double calib_phys_smbios17_mbps(const unsigned char *raw, size_t len);

/* A GPU family with a published per-core rate. */
struct calib_phys_gpu {
	const char *match;          /* substring of CL_DEVICE_NAME */
	double fp32_flops_per_cycle_core;
	const char *source;
};
/* The table entry whose match is in device, or NULL. */
const struct calib_phys_gpu *calib_phys_gpu_lookup(const char *device);
/* GFLOP/s = compute units x MHz x published FLOPs/cycle/core / 1000; NAN
 * (and why, in method) for a device not in the table. */
double calib_phys_gpu_gflops(const char *device, unsigned compute_units, double mhz, char *method, size_t n);

#endif
