/* Stability across runs (issue 37): a calibration is compared with the
 * recent calibrations of the same machine; a key whose value moved beyond
 * its spread is FLAGGED (and so never sets a GPGPU-sim option silently),
 * its method saying where it moved from. Pure: no I/O, no globals. */
#ifndef COLLECTOR_CALIB_HISTORY_H
#define COLLECTOR_CALIB_HISTORY_H

#include <stddef.h>

#include "calib/calib_model.h"

/* How many recent calibrations `collector calibrate` compares with. */
#define CALIB_HISTORY_MAX 4
/* Moves below this (relative) are never flagged (timer and rounding noise of
 * keys whose spread is 0: device queries, physical bounds). */
#define CALIB_HISTORY_FLOOR 0.02

/* Flag every key of cur whose value is further from the median of the same
 * key in prev[0..nprev) than (its spread + the largest previous spread +
 * CALIB_HISTORY_FLOOR) x |value|. Returns the number of keys flagged now. */
size_t calib_history_flag_moved(struct calib_model *cur, const struct calib_model *const *prev, size_t nprev);

#endif
