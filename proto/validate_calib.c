#include "validate_calib.h"
#include "fail.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "validate.h"

static int name_ok(const char *s)
{
	return s && s[0] && strlen(s) <= VALIDATE_MAX_CALIB_NAME;
}

static int str_ok(const char *s)
{
	return s == NULL || strlen(s) <= VALIDATE_MAX_STRING;
}

int validate_calibration(const Prof__Calibration *c, char *err, size_t errlen)
{
	if (!str_ok(c->device) || !str_ok(c->benchmark))
		return fail(err, errlen, "calibration: device or benchmark name too long");
	if (!(isfinite(c->clock_mhz) && c->clock_mhz >= 0) || !(isfinite(c->seconds) && c->seconds >= 0))
		return fail(err, errlen, "calibration: clock_mhz and seconds must be finite and >= 0");
	if (c->n_params > VALIDATE_MAX_CALIB_PARAMS)
		return fail(err, errlen, "calibration: %zu params (max %u)", c->n_params, VALIDATE_MAX_CALIB_PARAMS);
	if (c->n_curves > VALIDATE_MAX_CALIB_CURVES)
		return fail(err, errlen, "calibration: %zu curves (max %u)", c->n_curves, VALIDATE_MAX_CALIB_CURVES);
	for (size_t i = 0; i < c->n_params; i++) {
		const Prof__CalibParam *p = c->params[i];
		if (!name_ok(p->name))
			return fail(err, errlen, "calibration: param %zu has an empty or overlong name", i);
		if (!str_ok(p->unit) || !str_ok(p->method))
			return fail(err, errlen, "calibration: param %s: unit or method too long", p->name);
		if (!isfinite(p->value))
			return fail(err, errlen, "calibration: param %s: value is not finite", p->name);
		if (!(p->spread >= 0)) /* +inf allowed: a spread that could not be bounded */
			return fail(err, errlen, "calibration: param %s: spread must be >= 0", p->name);
		if (!(p->confidence >= 0 && p->confidence <= 1))
			return fail(err, errlen, "calibration: param %s: confidence must be in 0..1", p->name);
	}
	for (size_t i = 0; i < c->n_curves; i++) {
		const Prof__CalibCurve *k = c->curves[i];
		if (!name_ok(k->name) || !str_ok(k->x_unit) || !str_ok(k->y_unit))
			return fail(err, errlen, "calibration: curve %zu: bad name or unit", i);
		if (k->n_x != k->n_y)
			return fail(err, errlen, "calibration: curve %s: %zu x for %zu y", k->name, k->n_x, k->n_y);
		if (k->n_x > VALIDATE_MAX_CALIB_POINTS)
			return fail(err, errlen, "calibration: curve %s: %zu points (max %u)", k->name, k->n_x,
				    VALIDATE_MAX_CALIB_POINTS);
		if (k->n_y_spread != 0 && k->n_y_spread != k->n_y)
			return fail(err, errlen, "calibration: curve %s: %zu spreads for %zu points", k->name,
				    k->n_y_spread, k->n_y);
		for (size_t j = 0; j < k->n_x; j++)
			if (!isfinite(k->x[j]) || !isfinite(k->y[j]))
				return fail(err, errlen, "calibration: curve %s: point %zu is not finite", k->name, j);
	}
	return 0;
}
