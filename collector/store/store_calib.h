/* Calibration records in the store (tables calib_runs, calib_params,
 * calib_curves; writer in store_calib.c) and the read the `collector
 * calibrate` command needs. */
#ifndef COLLECTOR_STORE_CALIB_H
#define COLLECTOR_STORE_CALIB_H

#include <stdbool.h>
#include <stdint.h>

#include "store.h"

struct store_calib_param_row {
	uint64_t seq;
	const char *device;
	const char *benchmark;
	double clock_mhz;
	const char *name;
	double value;
	const char *unit;
	const char *method;
	double spread;
	double confidence;
	bool flagged;
};
typedef int (*store_calib_param_cb)(const struct store_calib_param_row *row, void *arg);

/* Every calibration parameter of the session, in record order (a later
 * record's value of a name supersedes an earlier one). Returns the number of
 * rows, or -errno (-ENOENT: the store has no calibration tables). */
int store_calib_params(struct store *s, int64_t session_id, store_calib_param_cb cb, void *arg);

/* Up to max calibrated sessions before session_id, newest first, into ids.
 * Returns how many, or -errno (-ENOENT: no calibration tables). */
int store_calib_sessions_before(struct store *s, int64_t session_id, int64_t *ids, int max);

/* A profile is the sessions of one agent id on one board and machine
 * (sessions.agent_id, board, machine). The calibration that applies to
 * session sid: the newest calibration session of its profile started before
 * it, else the oldest one after it (*later set). Returns 1 with *calib_sid, 0
 * if the profile has no other calibrated session, or -errno. */
int store_calib_for_session(struct store *s, int64_t sid, int64_t *calib_sid, bool *later);
/* For every session, by id: the calibration session that applies (itself when
 * it holds calibration records; 0 for none), as the overview chooses it. */
typedef int (*store_calib_map_cb)(int64_t session_id, int64_t calib_session_id, void *arg);
int store_calib_map(struct store *s, store_calib_map_cb cb, void *arg);

#endif
