/* The JSON of a store's session list, one shape for `collector sessions
 * --json` and the live pages' /sessions.json:
 *   {"sessions":[{"id":..,"agent_id":..,...,"samples":..,"counter_samples":..,
 *                 "cpu_samples":..,"calibration_session":N|null}, ...]}
 * Fields are only ever added. */
#ifndef COLLECTOR_REPORT_SESSIONS_JSON_H
#define COLLECTOR_REPORT_SESSIONS_JSON_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"

struct sessions_json {
	FILE *f;
	size_t n;
	int64_t *calib; /* by session id: its calibration session (0 none) */
	size_t ncalib;
};

/* Load what the rows need (the calibration map) and write the opening. */
int sessions_json_begin(struct store *st, FILE *f, struct sessions_json *j);
void sessions_json_row(struct sessions_json *j, const struct store_session_row *r);
/* Write the closing and free. */
void sessions_json_end(struct sessions_json *j);
/* The calibration session of sid (0 none), for other renderers of the list. */
int64_t sessions_json_calib(const struct sessions_json *j, int64_t sid);

#endif
