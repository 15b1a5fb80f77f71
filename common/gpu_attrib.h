/* Attribution of GPU counter increments to OpenCL kernels (pure; no I/O).
 *
 * Counters arrive as increments over disjoint, time-ordered intervals (one
 * per driver dump, or merged idle dumps). Kernels are host-clock spans
 * [k0, k1) from the OpenCL layer's timestamps. An interval's increments go
 * to the kernels that ran in it, each in proportion to its overlap with the
 * interval, normalised by the kernel time in the interval (the sum of the
 * overlaps, so concurrent kernels split it): a kernel shorter than a dump period
 * gets its share of the one dump that holds it, two kernels in one dump
 * split it by their overlaps, and counts in intervals where no kernel ran
 * are left unattributed. The sum over kernels plus the unattributed part is
 * exactly the sum of the increments (up to floating point). */
#ifndef COMMON_GPU_ATTRIB_H
#define COMMON_GPU_ATTRIB_H

#include <stddef.h>
#include <stdint.h>

/* Intervals: (t0[i], t1[i]] with t1[i] <= t0[i+1], values[i * ncols + c].
 * Kernels: [k0[k], k1[k]) in any order. out: nk * ncols (zeroed here);
 * unattributed: ncols or NULL. Returns 0, -EINVAL (unordered intervals),
 * -ENOMEM. */
int gpu_attrib(const uint64_t *t0, const uint64_t *t1, const uint64_t *values, size_t nrows, size_t ncols,
	       const uint64_t *k0, const uint64_t *k1, size_t nk, double *out, double *unattributed);

#endif
