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
};

/* Stated assumptions of the CPU formulas (upper bounds for every core the
 * project targets: no x86 or ARM core of ours issues more). */
#define CALIB_PHYS_FMA_PIPES 2u  /* SIMD FMA pipelines per core */
#define CALIB_PHYS_LOAD_PORTS 2u /* full-width SIMD loads per cycle per core */

/* GFLOP/s = cores x MHz x lanes x FMA pipes x 2 / 1000, with the formula and
 * its assumption written to method. NAN (and why) when an input is missing. */
double calib_phys_cpu_gflops(const struct calib_phys_cpu *c, char *method, size_t n);
/* GB/s upper bound of any stream through the cores: cores x MHz x load ports
 * x SIMD bytes / 1000 (the L1 load ports; DRAM is slower). */
double calib_phys_cpu_gbps(const struct calib_phys_cpu *c, char *method, size_t n);

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
