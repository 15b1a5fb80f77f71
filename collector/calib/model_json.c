/* The calibration machine model from JSON (calib_io.h), read with the one
 * JSON reader (common/json_read.h). */
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib_io.h"
#include "json_read.h"

/* A number, or null (unknown): NAN. */
static int number_or_null(struct json_rd *p, double *v)
{
	if (json_rd_null(p)) {
		*v = NAN;
		return 0;
	}
	return json_rd_number(p, v);
}

struct param_ctx {
	struct calib_param p;
	bool have_value;
};

static int param_key(struct json_rd *p, const char *key, void *arg)
{
	struct param_ctx *c = arg;
	if (strcmp(key, "value") == 0) {
		c->have_value = true;
		return number_or_null(p, &c->p.value);
	}
	if (strcmp(key, "unit") == 0)
		return json_rd_string(p, c->p.unit, sizeof(c->p.unit));
	if (strcmp(key, "method") == 0)
		return json_rd_string(p, c->p.method, sizeof(c->p.method));
	if (strcmp(key, "spread") == 0)
		return number_or_null(p, &c->p.spread);
	if (strcmp(key, "confidence") == 0)
		return number_or_null(p, &c->p.confidence);
	if (strcmp(key, "flagged") == 0)
		return json_rd_bool(p, &c->p.flagged);
	return json_rd_skip(p);
}

static int params_key(struct json_rd *p, const char *key, void *arg)
{
	struct calib_model *m = arg;
	struct param_ctx c = {.p = {.confidence = 1}};
	snprintf(c.p.name, sizeof(c.p.name), "%s", key);
	if (json_rd_object(p, param_key, &c) < 0)
		return -EINVAL;
	if (!c.have_value)
		return json_rd_fail(p, "parameter %s has no value", key);
	if (isnan(c.p.value))
		return 0; /* null: unknown, as if absent */
	if (isnan(c.p.spread))
		c.p.spread = 0;
	if (isnan(c.p.confidence))
		c.p.confidence = 1;
	int rc = calib_model_set(m, &c.p);
	if (rc < 0)
		return json_rd_fail(p, "parameter %s: %s", key, rc == -ENOSPC ? "too many parameters" : "bad value");
	return 0;
}

static int model_key(struct json_rd *p, const char *key, void *arg)
{
	struct calib_model *m = arg;
	if (strcmp(key, "device") == 0)
		return json_rd_string(p, m->device, sizeof(m->device));
	if (strcmp(key, "source") == 0)
		return json_rd_string(p, m->source, sizeof(m->source));
	if (strcmp(key, "params") == 0)
		return json_rd_object(p, params_key, m);
	return json_rd_skip(p);
}

int calib_model_parse_json(const char *json, size_t len, struct calib_model *m, char *err, size_t errlen)
{
	memset(m, 0, sizeof(*m));
	struct json_rd p;
	json_rd_init(&p, json, len, "machine model", err, errlen);
	if (json_rd_object(&p, model_key, m) < 0)
		return -EINVAL;
	return json_rd_end(&p);
}
