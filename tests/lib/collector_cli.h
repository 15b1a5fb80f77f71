/* The collector's command line from an integration test, and its report --json read back
 * (test_fleet_query, test_pid_reuse). */
#ifndef TESTS_COLLECTOR_CLI_H
#define TESTS_COLLECTOR_CLI_H

/* `collector ARGS...` (NULL-terminated), its output written to the file out (emptied first):
 * that output (free it); the test fails unless it exits 0. */
char *tp_collector(const char *out, ...);
/* In a report --json, the value of field in the row named name (-1: no such row). */
long long tp_report_row_field(const char *json, const char *name, const char *field);

#endif
