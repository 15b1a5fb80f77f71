/* Helpers for integration tests and benchmarks: start and stop the real
 * binaries, temp dirs, small SQLite queries. Everything bounded in time. */
#ifndef TESTS_LIB_TESTPROC_H
#define TESTS_LIB_TESTPROC_H

#include <stdint.h>
#include <sys/types.h>

/* Path of a built program: $PROF_BIN_DIR/<rel> (e.g. "agent", "workloads/busy"). */
const char *tp_bin(const char *rel, char *buf, size_t len);
/* mkdtemp under /tmp; returns 0 or -errno. */
int tp_tmpdir(char *buf, size_t len, const char *tag);
void tp_rm_rf(const char *path);

/* Start argv[0] with stdout+stderr appended to log_path (NULL: inherit). */
pid_t tp_spawn(char *const argv[], const char *log_path);
/* Wait up to ms for pid; returns 0 and sets *status, -ETIMEDOUT, or -errno. */
int tp_wait(pid_t pid, int ms, int *status);
/* SIGTERM, then SIGKILL after grace_ms; reaps. Returns the wait status. */
int tp_stop(pid_t pid, int grace_ms);
int tp_alive(pid_t pid);

/* Start a collector on 127.0.0.1:port (0 = any) with store db; returns pid
 * and the port it bound (read from its --port-file). */
pid_t tp_start_collector(const char *dir, const char *db, int port, int *bound_port, const char *log);

/* Run a query returning one integer (first column of first row); -1 on error. */
int64_t tp_db_int(const char *db, const char *sql_fmt, ...) __attribute__((format(printf, 2, 3)));
/* Count of lines in file containing needle. */
int tp_file_count(const char *path, const char *needle);
/* Read a whole small file into a malloc'd string (NULL on error). */
char *tp_slurp(const char *path);
void tp_sleep_ms(int ms);

#endif
