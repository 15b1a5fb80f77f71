/* What the static agent and prof-clhelper exchange raw over the pipe (struct opencl_probe,
 * struct calib_result: helper/main.c writes them, opencl_probe_run and calib_helper.c read
 * them), as sizes and offsets in one array. On glibc boards both come from one compiler; the
 * Android helper is clang against bionic, the agent gcc against musl: `bionic-libs` compiles
 * this file both ways and fails unless the two arrays are the same bytes (mk/cl_layer.mk). */
#include <stddef.h>

#include "calib/calib_bench.h"
#include "opencl_probe.h"

__attribute__((used)) const size_t helper_layout[] = {
    sizeof(struct opencl_probe),
    offsetof(struct opencl_probe, devices),
    offsetof(struct opencl_probe, status),
    sizeof(struct opencl_device),
    offsetof(struct opencl_device, compute_units),
    offsetof(struct opencl_device, global_mem_bytes),
    offsetof(struct opencl_device, type),
    sizeof(struct calib_result),
    _Alignof(struct calib_result),
    offsetof(struct calib_result, clock_mhz),
    offsetof(struct calib_result, quick),
    offsetof(struct calib_result, skipped),
    offsetof(struct calib_result, nparams),
    offsetof(struct calib_result, params),
    offsetof(struct calib_result, ncurves),
    offsetof(struct calib_result, curves),
    sizeof(struct calib_param),
    offsetof(struct calib_param, value),
    offsetof(struct calib_param, spread),
    offsetof(struct calib_param, flagged),
    sizeof(struct calib_curve),
    offsetof(struct calib_curve, n),
    offsetof(struct calib_curve, reps),
    offsetof(struct calib_curve, x),
    offsetof(struct calib_curve, raw),
};
