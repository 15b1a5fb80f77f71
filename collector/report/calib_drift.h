/* The calibration a report uses against the one before it on the same board
 * (the same profile, store_calib_for_session): which of the report's key
 * figures (the roofs' pi and beta, the eDAG's alpha0 and m) moved beyond their
 * spread. A new calibration replaces the previous one for every later session:
 * a report says so when that changed its numbers. Pure: no I/O. */
#ifndef COLLECTOR_REPORT_CALIB_DRIFT_H
#define COLLECTOR_REPORT_CALIB_DRIFT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calib/calib_model.h"

/* A move below this relative change is never reported, whatever the spreads (two
 * single-shot measurements have spread 0). */
#define CALIB_DRIFT_MIN_REL 0.05
#define CALIB_DRIFT_MAX 8

struct calib_drift_item {
	char name[CALIB_NAME_MAX], unit[CALIB_UNIT_MAX];
	double before, after;
	double rel; /* (after - before) / before */
	double tol; /* max(spread before, spread after, CALIB_DRIFT_MIN_REL) */
};

struct calib_drift {
	int64_t prev_session; /* the calibration before the one used; 0: none */
	int64_t prev_time;    /* its last_seen (unix s), 0 unknown */
	size_t n;	      /* key figures that moved beyond their spread */
	struct calib_drift_item moved[CALIB_DRIFT_MAX];
};

/* The key figures of before and after (both present, finite, before != 0) whose relative
 * change exceeds their tolerance, into d->moved (d->n). Returns d->n. */
size_t calib_drift_compare(const struct calib_model *before, const struct calib_model *after,
			   struct calib_drift *d);
/* One line per moved figure, each prefixed by indent, after a header naming the
 * sessions ("" when nothing moved). */
void calib_drift_text(const struct calib_drift *d, int64_t used_session, const char *indent, FILE *f);

#endif
