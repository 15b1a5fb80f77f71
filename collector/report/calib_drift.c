/* Key figures of two calibrations of one board, compared (calib_drift.h). */
#include "calib_drift.h"

#include <math.h>
#include <string.h>

/* The report's key figures: the ceilings it draws first and the eDAG's latency and issue slots. */
static const char *const keys[] = {"peak_gflops",	 "peak_gbps",	     "cpu_peak_gflops",
				   "cpu_peak_gbps",	 "mem_latency_cycles", "mem_issue_slots"};

size_t calib_drift_compare(const struct calib_model *before, const struct calib_model *after,
			   struct calib_drift *d)
{
	d->n = 0;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]) && d->n < CALIB_DRIFT_MAX; i++) {
		const struct calib_param *a = calib_model_get(before, keys[i]);
		const struct calib_param *b = calib_model_get(after, keys[i]);
		if (!a || !b || !isfinite(a->value) || !isfinite(b->value) || a->value == 0)
			continue;
		double rel = (b->value - a->value) / a->value;
		double tol = fmax(fmax(a->spread, b->spread), CALIB_DRIFT_MIN_REL);
		if (!(fabs(rel) > tol))
			continue;
		struct calib_drift_item *m = &d->moved[d->n++];
		memset(m, 0, sizeof(*m));
		memcpy(m->name, b->name, sizeof(m->name));
		memcpy(m->unit, b->unit, sizeof(m->unit));
		m->before = a->value;
		m->after = b->value;
		m->rel = rel;
		m->tol = tol;
	}
	return d->n;
}

void calib_drift_text(const struct calib_drift *d, int64_t used_session, const char *indent, FILE *f)
{
	if (!d->n)
		return;
	fprintf(f,
		"%sWARNING: this calibration (session %lld) moved from the board's previous one (session %lld) "
		"beyond its spread; reports that used session %lld gave other numbers:\n",
		indent, (long long)used_session, (long long)d->prev_session, (long long)d->prev_session);
	for (size_t i = 0; i < d->n; i++) {
		const struct calib_drift_item *m = &d->moved[i];
		fprintf(f, "%s  %-20s %10.4g -> %-10.4g %-8s (%+.0f %%; spread %.0f %%)\n", indent, m->name, m->before,
			m->after, m->unit, m->rel * 100, m->tol * 100);
	}
	fprintf(f,
		"%s  (calibrate again on an idle board to see which holds; --machine FILE fixes the ceilings "
		"a report uses)\n",
		indent);
}
