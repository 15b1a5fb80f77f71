/* Helpers of the fleet integration tests (test_faults, test_auth, test_load):
 * a real agent profiling `sleep`, its summary, and store checks. */
#ifndef TESTS_LIB_FLEET_H
#define TESTS_LIB_FLEET_H

#include <stdint.h>
#include <sys/types.h>

/* agent --collector 127.0.0.1:port --spool spool --agent-id id -I interval_ms [--token-file F]
 * [extra...] -- /bin/sleep secs; output appended to log. */
pid_t fl_start_agent(int port, const char *spool, const char *id, const char *interval_ms, const char *secs,
		     const char *token_file, const char *log, const char *const *extra);
/* Wait up to ms for the agent; returns its exit code, or -1 (killed, timed out). */
int fl_wait_exit(pid_t pid, int ms);
/* "N created" from the agent's summary line in log, -1 if absent. */
int64_t fl_created(const char *log);
/* Records of agent id: count, and whether seqs are exactly 1..count (no gap, no duplicate). */
int64_t fl_records(const char *db, const char *id, int *complete);
/* Write a token file (0600) with a fixed test secret (variant selects another one). */
int fl_write_token(const char *path, int variant);

#endif
