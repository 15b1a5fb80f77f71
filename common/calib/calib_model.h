/* The machine model: every calibrated parameter with value, unit, method,
 * spread and confidence, plus the views derived from it (cache levels,
 * roofline ceilings, EDAN alpha0/m). Written as JSON by the agent
 * (`agent calibrate -o`) and the collector (`collector calibrate --model`);
 * the shape is documented in collector/calib/README.md.
 * Parameter names are the canonical ones listed there (compute_units,
 * l1_line_bytes, peak_gflops, ...). */
#ifndef COMMON_CALIB_MODEL_H
#define COMMON_CALIB_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#define CALIB_MODEL_MAX_PARAMS 256u
#define CALIB_MODEL_MAX_LEVELS 4u
#define CALIB_NAME_MAX 64u
#define CALIB_UNIT_MAX 24u
#define CALIB_METHOD_MAX 200u
#define CALIB_DEVICE_MAX 160u

struct calib_param {
	char name[CALIB_NAME_MAX];
	double value;
	char unit[CALIB_UNIT_MAX];
	char method[CALIB_METHOD_MAX];
	double spread;     /* relative spread of the repeated measurements (0 if one) */
	double confidence; /* detector confidence 0..1 (1 for direct measurements and queries) */
	bool flagged;      /* spread too large or confidence too low: not trustworthy */
};

struct calib_model {
	char device[CALIB_DEVICE_MAX];
	char source[CALIB_METHOD_MAX]; /* "agent calibrate --quick", "published (seed Table 2)", ... */
	size_t nparams;
	struct calib_param params[CALIB_MODEL_MAX_PARAMS];
};

/* Add p or replace the parameter of the same name. Strings are truncated to
 * their fields. flagged is recomputed (p->flagged || spread > CALIB_SPREAD_MAX
 * || confidence < CALIB_CONFIDENCE_MIN). -ENOSPC when full, -EINVAL for an
 * empty name or a non-finite value. */
int calib_model_set(struct calib_model *m, const struct calib_param *p);
/* Shorthand for calib_model_set. */
int calib_model_put(struct calib_model *m, const char *name, double value, const char *unit, const char *method,
		    double spread, double confidence);
const struct calib_param *calib_model_get(const struct calib_model *m, const char *name);
/* Value of name, or dflt when absent. */
double calib_model_value(const struct calib_model *m, const char *name, double dflt);

struct calib_cache_level {
	unsigned level;     /* 1.. */
	double size_bytes;  /* NAN when unknown */
	double line_bytes;
	double assoc;
	double latency_cycles;
};
/* The levels lN_size_bytes (N = 1..4) present, in order, with their line
 * (lN_line_bytes, else l1_line_bytes), assoc (lN_assoc) and latency
 * (lN_latency_cycles); unknown fields are NAN. Returns the count. */
size_t calib_model_cache_levels(const struct calib_model *m, struct calib_cache_level *out, size_t max);

/* Write the model as JSON (README shape). Returns 0 or -EIO. */
int calib_model_write_json(const struct calib_model *m, FILE *f);

#endif
