/* Host-side calibration outputs: read a machine model (JSON, the shape of
 * collector/calib/README.md) and write a GPGPU-sim configuration from one.
 * No file I/O here: callers pass text and a FILE *. */
#ifndef COLLECTOR_CALIB_IO_H
#define COLLECTOR_CALIB_IO_H

#include <stddef.h>
#include <stdio.h>

#include "calib/calib_model.h"

/* Parse the JSON text of a machine model: "device", "source" and "params"
 * (every other key is skipped). Returns 0, or -EINVAL with a reason in err. */
int calib_model_parse_json(const char *json, size_t len, struct calib_model *m, char *err, size_t errlen);

/* Write a gpgpusim.config for model m. base: the text of a base
 * gpgpusim.config (NULL: the built-in QuadroFX5800-style defaults). Every
 * option is written once, commented with its source: the measured parameter
 * it came from, or "kept from the base config: <why>". Returns 0 or -EIO. */
int calib_gpgpusim_write(const struct calib_model *m, const char *base, FILE *f);

#endif
