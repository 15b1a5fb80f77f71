/* Shape checks of GpuCounters records (proto/gpu.proto): bounded columns and
 * rows, values that fill rows x columns, positive row lengths, counter
 * declarations inside a 64-word block. Called by envelope_validate(). */
#ifndef PROTO_VALIDATE_GPU_H
#define PROTO_VALIDATE_GPU_H

#include <stddef.h>

#include "profiler.pb-c.h"

#define VALIDATE_GPU_MAX_COLS 256u
#define VALIDATE_GPU_MAX_ROWS 65536u
#define VALIDATE_GPU_MAX_NAME 64u

/* Returns 0, or -EINVAL with a reason in err. */
int validate_gpu_counters(const Prof__GpuCounters *g, char *err, size_t errlen);

#endif
