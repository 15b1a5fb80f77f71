/* The calibration benchmarks: each is a kernel family (OpenCL or C), a host
 * sweep and a detector (common/calib/calib_detect.h), and fills one
 * calib_result (sent as one Calibration record). The list and the order
 * live in calib_run.c. */
#ifndef AGENT_CALIB_BENCH_H
#define AGENT_CALIB_BENCH_H

#include <stdbool.h>
#include <stddef.h>

#include "calib/calib_model.h"
#include "calib/calib_phys.h"
#include "calib/calib_stats.h"
#include "cl_env.h"

#define CR_MAX_PARAMS 96
#define CR_MAX_CURVES 16
#define CR_MAX_POINTS 192
#define CR_MAX_REPS 9

struct calib_curve {
	char name[CALIB_NAME_MAX];
	char x_unit[16], y_unit[16];
	size_t n;
	unsigned reps;
	double x[CR_MAX_POINTS];
	double y[CR_MAX_POINTS];      /* median of the repetitions */
	double spread[CR_MAX_POINTS]; /* relative spread of the repetitions */
	double raw[CR_MAX_POINTS][CR_MAX_REPS];
};

struct calib_result {
	char benchmark[32];
	char device[CALIB_DEVICE_MAX];
	double clock_mhz;
	double seconds;
	bool quick;
	char skipped[1100]; /* non-empty: the benchmark did not run, and why */
	char note[CALIB_METHOD_MAX + 32]; /* non-empty: printed with the result (e.g. why a physical peak is unknown) */
	size_t nparams;
	struct calib_param params[CR_MAX_PARAMS];
	size_t ncurves;
	struct calib_curve curves[CR_MAX_CURVES];
};

struct calib_ctx {
	struct cl_env *cl;              /* NULL: no OpenCL device (OpenCL benchmarks are skipped) */
	const struct cl_dev_info *dev;  /* NULL with cl */
	bool quick;
	unsigned reps;                  /* repetitions per measurement point */
	double cpu_mhz;                 /* host CPU running clock, measured (phys_measure_clock); NAN if unknown */
	double cpu_base_mhz;            /* host CPU base clock the system reports (cpufreq, /proc/cpuinfo) */
	double clock_mhz;               /* the clock *_cycles figures of the OpenCL device count: the device's
					 * reported clock, or on a CPU device (PoCL) the running clock */
	double clock_spread;            /* of the running clock (best two bursts) */
	char clock_method[CALIB_METHOD_MAX];
	unsigned cpus;                  /* online CPUs */
	const struct calib_model *known; /* what earlier benchmarks measured (line size, caches, ...) */
};

/* Add a parameter (flagged from spread/confidence as calib_model_set does). */
int cr_param(struct calib_result *r, const char *name, double value, const char *unit, const char *method,
	     double spread, double confidence);
struct calib_curve *cr_curve(struct calib_result *r, const char *name, const char *x_unit, const char *y_unit);
/* Append a point from its repetitions v[0..n). */
void cr_point(struct calib_curve *c, double x, const double *v, unsigned n);
/* y of repetition rep of every point, into y[0..c->n). */
void cr_rep_y(const struct calib_curve *c, unsigned rep, double *y);

/* Time fn reps times after one untimed warm-up run; v gets the seconds. */
typedef int (*cr_timed_fn)(void *arg, double *seconds);
int cr_repeat(unsigned reps, cr_timed_fn fn, void *arg, double *v);

/* The benchmarks (one file each). Return 0, or -errno with r->skipped set. */
int bench_arith(struct calib_ctx *c, struct calib_result *r);
int bench_compute_units(struct calib_ctx *c, struct calib_result *r);
int bench_registers(struct calib_ctx *c, struct calib_result *r);
int bench_granularity(struct calib_ctx *c, struct calib_result *r);
int bench_cache(struct calib_ctx *c, struct calib_result *r);
int bench_peak(struct calib_ctx *c, struct calib_result *r);
int bench_cpu_peak(struct calib_ctx *c, struct calib_result *r);
int bench_mem_slots(struct calib_ctx *c, struct calib_result *r);
/* The CPU's data caches from sysfs as cpu_cache_l{1,2,3}_{bytes,ways,line_bytes}
 * and cpu_line_bytes (cpu_caches.c). Returns the levels added. */
int cpu_caches_params(struct calib_result *r);

/* Physical peaks (phys_probe.c, common/calib/calib_phys.h): the clock measured
 * with dependent adds (MHz, NAN if it cannot), the CPU as the formulas need it,
 * and, after the "peak" and "cpu_peak" benchmarks, the physical parameters and
 * the measured/physical ratios added to r (impossible values flagged). */
#define PHYS_CLOCK_BURSTS 64 /* CALIB_MAX_REPS: calib_stat() takes at most 64 */
struct phys_clock {
	double best;     /* MHz of the best burst: the running (boost) clock */
	double median;   /* MHz of the median burst */
	double spread;   /* relative half-gap between the best two bursts */
	unsigned bursts;
};
/* Dependent add chain against CLOCK_MONOTONIC, best of short bursts (~150 ms). */
void phys_measure_clock(struct phys_clock *out);
double phys_measure_mhz(void);
/* mhz: the measured running clock (measured here when not > 0). */
void phys_cpu_probe(unsigned cores, double mhz, struct calib_phys_cpu *out);
/* Adds the DRAM peak the platform states (SMBIOS type 17) to out (phys_mem.c). */
void phys_mem_probe(struct calib_phys_cpu *out);
void phys_annotate(const struct calib_ctx *c, struct calib_result *r);

/* Helpers shared by the benchmarks (bench_util.c). */
/* Sattolo: one random cycle through nodes 0..n-1 visited in page-clustered
 * random order (all nodes of a page, shuffled, then the next random page),
 * written as next[] indices scaled by stride_elems. */
void cr_chase_cycle(unsigned *next, size_t nnodes, size_t stride_elems, size_t nodes_per_page, unsigned seed);
/* Scale n so that one run takes about target seconds, from a trial time. */
long cr_scale(long n, double trial_s, double target_s, long lo, long hi);

#endif
