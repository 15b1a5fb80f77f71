/* Host-side calibration outputs: read a machine model (JSON, the shape of
 * collector/calib/README.md) and write a GPGPU-sim configuration from one.
 * No file I/O here: callers pass text and a FILE *. */
#ifndef COLLECTOR_CALIB_IO_H
#define COLLECTOR_CALIB_IO_H

#include <stddef.h>
#include <stdbool.h>
#include <stdio.h>

#include "calib/calib_model.h"

/* Parse the JSON text of a machine model: "device", "source" and "params"
 * (every other key is skipped). Returns 0, or -EINVAL with a reason in err. */
int calib_model_parse_json(const char *json, size_t len, struct calib_model *m, char *err, size_t errlen);

/* Choices for calib_gpgpusim_write(). */
struct calib_gpgpusim_opts {
	int version;	       /* 3 (GPGPU-sim 3.2.2) or 4 (4.0): limits and cache-string syntax */
	bool clamp;	       /* write out-of-range values clamped and commented, instead of refusing */
	bool use_flagged;      /* use FLAGGED parameters (commented) instead of their fallbacks */
	const char *base;      /* text of a --base gpgpusim.config or NULL: its other options are kept, checked */
	const char *icnt_name; /* -inter_config_file value (NULL: "config_calib_islip.icnt") */
	unsigned flagged_out;  /* out: FLAGGED parameters that were not used (or used, with use_flagged) */
	unsigned clamped_out;  /* out: values written clamped */
};

/* Write a gpgpusim.config (cfg) and its interconnect file (icnt) for model
 * m and GPGPU-sim o->version. Every option that matters is written with a
 * comment: the measured parameter it came from, or the fallback and why.
 * Both texts are checked against the limits table (gpgpusim_limits.h)
 * before anything is written. Returns 0; -ERANGE with the broken limit in
 * err (out of range without o->clamp); -EINVAL (bad version or base); -EIO. */
int calib_gpgpusim_write(const struct calib_model *m, struct calib_gpgpusim_opts *o, FILE *cfg, FILE *icnt, char *err,
			 size_t errlen);

#endif
