/* Roofline model (Williams et al.; ../../../shared/seeds/roofline-model.txt).
 *
 * This header is the whole API of the library. It is pure: no I/O, no
 * logging, no allocation, no global state. Functions return 0 or a negative
 * errno unless documented otherwise.
 *
 * Units: work W in operations (FLOP), traffic Q in bytes, time in seconds;
 * performance in GFLOP/s, bandwidth in GB/s, intensity I = W / Q in FLOP/byte.
 * Attainable performance P(I) = min(pi, beta * I) with pi the highest compute
 * ceiling and beta the highest bandwidth ceiling; the ridge point is pi / beta:
 * a kernel with I < pi / beta is memory-bound. Lower ceilings (no SIMD, no
 * FMA, L2 or no-prefetch bandwidth) are drawn below the roof; locality walls
 * are vertical lines at the intensity a kernel would have if only the traffic
 * missing one cache level counted (when those differ, I depends on cache size). */
#ifndef COLLECTOR_ROOFLINE_ROOFLINE_H
#define COLLECTOR_ROOFLINE_ROOFLINE_H

#include <stdbool.h>
#include <stddef.h>

#define ROOFLINE_MAX_CEILINGS 16
#define ROOFLINE_MAX_WALLS 4
#define ROOFLINE_NAME_MAX 48

enum roofline_ceiling_kind {
	ROOFLINE_COMPUTE = 0,	/* horizontal: GFLOP/s */
	ROOFLINE_BANDWIDTH = 1, /* diagonal: GB/s */
};

struct roofline_ceiling {
	enum roofline_ceiling_kind kind;
	char name[ROOFLINE_NAME_MAX]; /* "float16 (SIMD)", "DRAM triad", "L1" ... */
	double value;		      /* GFLOP/s or GB/s, > 0 */
	char source[ROOFLINE_NAME_MAX]; /* calibration parameter it came from */
};

struct roofline {
	char device[ROOFLINE_NAME_MAX]; /* "GPU: Mali-T628", "CPU" */
	size_t n;
	struct roofline_ceiling c[ROOFLINE_MAX_CEILINGS];
};

/* Add a ceiling; -EINVAL for a value that is not finite and positive, -ENOSPC when full. */
int roofline_add(struct roofline *r, enum roofline_ceiling_kind kind, const char *name, double value,
		 const char *source);
/* The roof: the highest compute ceiling (pi, GFLOP/s) and the highest bandwidth
 * ceiling (beta, GB/s); 0 when the model has none of that kind. */
double roofline_pi(const struct roofline *r);
double roofline_beta(const struct roofline *r);
/* True when the model has both a compute and a bandwidth ceiling. */
bool roofline_complete(const struct roofline *r);
/* pi / beta (FLOP/byte); 0 when incomplete. */
double roofline_ridge(const struct roofline *r);
/* min(pi, beta * I) in GFLOP/s; 0 when incomplete or I <= 0. */
double roofline_attainable(const struct roofline *r, double intensity);
/* The same under one given ceiling pair (for the lower ceilings). */
double roofline_attainable_under(double pi, double beta, double intensity);

enum roofline_bound { ROOFLINE_MEMORY_BOUND = 0, ROOFLINE_COMPUTE_BOUND = 1 };

struct roofline_point {
	double W, Q, seconds;	/* inputs */
	double intensity;	/* W / Q */
	double achieved;	/* W / seconds in GFLOP/s */
	double attainable;	/* P at this intensity */
	double fraction;	/* achieved / attainable */
	enum roofline_bound bound;
};

/* Place a dot: W > 0 operations, Q > 0 bytes, seconds > 0. -EINVAL for bad
 * inputs, -ENODATA when the model is incomplete. */
int roofline_place(const struct roofline *r, double W, double Q, double seconds, struct roofline_point *out);
const char *roofline_bound_name(enum roofline_bound b);

/* Locality walls: the intensity of work W against the traffic that misses
 * each cache level (bytes[k] = misses of level k x line). A wall is kept when
 * it differs from the previous one by more than 1% (I depends on cache size). */
struct roofline_wall {
	char name[ROOFLINE_NAME_MAX]; /* "L1", "L2" ... */
	double intensity;
};
/* Returns the number of walls written to out (at most max and ROOFLINE_MAX_WALLS). */
size_t roofline_walls(double W, const char *const *names, const double *bytes, size_t nlevels,
		      struct roofline_wall *out, size_t max);

/* Ceilings of one device from a calibrated machine model (common/calib/calib_model.h).
 * GPU (cpu false): peak_gflops, gflops_nofma, gflops_float1 (no SIMD), per precision
 * tput_{float,half}_{mad,add}_per_cycle_cu x compute_units x clock_mhz; peak_gbps,
 * bw_{copy,scale,triad,read}_gbps, l1_gbps..l4_gbps. CPU: cpu_peak_gflops,
 * cpu_nofma_gflops, cpu_scalar_gflops; cpu_peak_gbps, cpu_{triad,copy}_gbps,
 * cpu_l1_gbps..cpu_l4_gbps. Names not present are skipped. Returns the number of
 * ceilings (0: nothing calibrated for that device). */
struct calib_model;
int roofline_from_calib(const struct calib_model *m, bool cpu, struct roofline *r);

#endif
