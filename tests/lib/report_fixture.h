/* A small stored session for the report tests: Hello, one Calibration
 * record (GPU and CPU roofline ceilings, alpha0 and m) and two trace windows
 * of a pointer-chasing thread. */
#ifndef TESTS_LIB_REPORT_FIXTURE_H
#define TESTS_LIB_REPORT_FIXTURE_H

#include <stdint.h>

#include "store/store.h"

/* Writes the session into st and commits; returns 0 and *sid, or -errno. */
int rf_make_session(struct store *st, int64_t *sid);
/* A large session of agent_id (boot 1): nwin trace windows of per instructions
 * each (the same pointer chase) of one thread, as agent trace would upload them,
 * committed; 0 and *sid, or -errno. */
int rf_make_trace_session(struct store *st, const char *agent_id, unsigned nwin, unsigned per, int64_t *sid);

#endif
