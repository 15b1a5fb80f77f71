/* Shape checks of Calibration records (bounded counts and strings, finite
 * values, curves with equal columns). Called by envelope_validate(). */
#ifndef PROTO_VALIDATE_CALIB_H
#define PROTO_VALIDATE_CALIB_H

#include <stddef.h>

#include "profiler.pb-c.h"

#define VALIDATE_MAX_CALIB_PARAMS 256u
#define VALIDATE_MAX_CALIB_CURVES 64u
#define VALIDATE_MAX_CALIB_POINTS 4096u
#define VALIDATE_MAX_CALIB_NAME 64u

/* Returns 0, or -EINVAL with a reason in err. */
int validate_calibration(const Prof__Calibration *c, char *err, size_t errlen);

#endif
