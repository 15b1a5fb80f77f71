/* A small stored session for the report tests: Hello, one Calibration
 * record (GPU and CPU roofline ceilings, alpha0 and m), two trace windows
 * of a pointer-chasing thread and, when named, one OpenCL kernel launch. */
#ifndef TESTS_LIB_REPORT_FIXTURE_H
#define TESTS_LIB_REPORT_FIXTURE_H

#include <stdint.h>

#include "store/store.h"

/* The agent-supplied strings of the session (NULL: the defaults). */
struct rf_names {
	const char *agent_id, *board, *hostname, *target;
	const char *calib_device, *calib_method, *calib_param; /* calib_param: one more parameter's name */
	const char *kernel; /* NULL: no OpenCL command */
	uint64_t boot_id;   /* 0: 42 */
};

/* Writes the session into st and commits; returns 0 and *sid, or -errno. */
int rf_make_session(struct store *st, int64_t *sid);
/* The same with these strings (names may be NULL). */
int rf_make_session_names(struct store *st, const struct rf_names *names, int64_t *sid);
/* One Heartbeat record of session sid (sequence seq), committed: the session has one more record
 * and nothing else changes. 0 or -errno. */
int rf_add_heartbeat(struct store *st, int64_t sid, uint64_t seq);
/* A large session of agent_id (boot 1): nwin trace windows of per instructions
 * each (the same pointer chase) of one thread, as agent trace would upload them,
 * committed; 0 and *sid, or -errno. */
int rf_make_trace_session(struct store *st, const char *agent_id, unsigned nwin, unsigned per, int64_t *sid);
/* One more trace window of session sid (seq, tid), per instructions of the chase,
 * as an agent takes it: capture 1 single steps or 2 replay, end_reason as
 * TraceWindow (7: the stop-time limit); committed. 0 or -errno. */
int rf_add_trace_window(struct store *st, int64_t sid, uint64_t seq, int32_t tid, unsigned per, uint32_t capture,
			uint32_t end_reason);

/* One mapping of process pid, [start, end) of file path, as agent record sends it (in a
 * Samples record of sequence seq); committed. 0 or -errno. */
int rf_add_mapping(struct store *st, int64_t sid, uint64_t seq, int32_t pid, uint64_t start, uint64_t end,
		   const char *path);

#endif
