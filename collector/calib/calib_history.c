/* Keys that moved between calibrations (calib_history.h). */
#include "calib/calib_history.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "calib/calib_stats.h"

size_t calib_history_flag_moved(struct calib_model *cur, const struct calib_model *const *prev, size_t nprev)
{
	size_t flagged = 0;
	if (nprev > CALIB_MAX_REPS)
		nprev = CALIB_MAX_REPS;
	for (size_t i = 0; i < cur->nparams; i++) {
		struct calib_param *p = &cur->params[i];
		if (!isfinite(p->value))
			continue;
		double v[CALIB_MAX_REPS], lo = INFINITY, hi = -INFINITY, sp = 0;
		size_t n = 0;
		for (size_t k = 0; k < nprev; k++) {
			const struct calib_param *q = calib_model_get(prev[k], p->name);
			if (!q || !isfinite(q->value))
				continue;
			v[n++] = q->value;
			lo = fmin(lo, q->value);
			hi = fmax(hi, q->value);
			sp = fmax(sp, isfinite(q->spread) ? q->spread : 0);
		}
		if (!n)
			continue;
		double med = calib_median(v, n);
		double tol = ((isfinite(p->spread) ? p->spread : 0) + sp + CALIB_HISTORY_FLOOR) * fabs(p->value);
		if (fabs(p->value - med) <= tol)
			continue;
		size_t len = strlen(p->method);
		snprintf(p->method + len, sizeof(p->method) - len,
			 "; MOVED: %.4g here vs %.4g (%.4g..%.4g) in the %zu previous calibration%s, beyond the spread",
			 p->value, med, lo, hi, n, n == 1 ? "" : "s");
		if (!p->flagged)
			flagged++;
		p->flagged = true;
	}
	return flagged;
}
