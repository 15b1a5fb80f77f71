/* The Calibration record of one benchmark's result (calib_run.h: calib_record_build). */
#include "calib_run.h"

#include <errno.h>
#include <stdlib.h>

struct rec_mem {
	Prof__Calibration c;
	Prof__CalibParam p[CR_MAX_PARAMS];
	Prof__CalibParam *pp[CR_MAX_PARAMS];
	Prof__CalibCurve k[CR_MAX_CURVES];
	Prof__CalibCurve *kp[CR_MAX_CURVES];
};

int calib_record_build(const struct calib_result *r, unsigned device_index, Prof__Calibration **out)
{
	struct rec_mem *m = calloc(1, sizeof(*m));
	if (!m)
		return -ENOMEM;
	prof__calibration__init(&m->c);
	m->c.device = (char *)r->device;
	m->c.device_index = device_index;
	m->c.benchmark = (char *)r->benchmark;
	m->c.clock_mhz = r->clock_mhz;
	m->c.quick = r->quick;
	m->c.seconds = r->seconds;
	for (size_t i = 0; i < r->nparams; i++) {
		const struct calib_param *p = &r->params[i];
		Prof__CalibParam *q = &m->p[i];
		prof__calib_param__init(q);
		q->name = (char *)p->name;
		q->value = p->value;
		q->unit = (char *)p->unit;
		q->method = (char *)p->method;
		q->spread = p->spread;
		q->flagged = p->flagged;
		q->confidence = p->confidence;
		m->pp[i] = q;
	}
	m->c.n_params = r->nparams;
	m->c.params = m->pp;
	for (size_t i = 0; i < r->ncurves; i++) {
		const struct calib_curve *cv = &r->curves[i];
		Prof__CalibCurve *q = &m->k[i];
		prof__calib_curve__init(q);
		q->name = (char *)cv->name;
		q->x_unit = (char *)cv->x_unit;
		q->y_unit = (char *)cv->y_unit;
		q->n_x = q->n_y = q->n_y_spread = cv->n;
		q->x = (double *)cv->x;
		q->y = (double *)cv->y;
		q->y_spread = (double *)cv->spread;
		m->kp[i] = q;
	}
	m->c.n_curves = r->ncurves;
	m->c.curves = m->kp;
	*out = &m->c;
	return 0;
}

void calib_record_free(Prof__Calibration *c)
{
	free(c); /* the first member of struct rec_mem */
}
