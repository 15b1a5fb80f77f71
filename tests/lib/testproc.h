/* Helpers for integration tests and benchmarks: start and stop the real
 * binaries, temp dirs, small SQLite queries. Everything bounded in time. */
#ifndef TESTS_LIB_TESTPROC_H
#define TESTS_LIB_TESTPROC_H

#include <stdbool.h>
#include <stddef.h>
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
/* Spawn argv (output to log) and wait up to ms: its exit status, 128 when a signal ended it, -1 when it
 * could not start or did not end in time. */
int tp_run(char *const argv[], const char *log, int ms);
/* SIGTERM, then SIGKILL after grace_ms; reaps. Returns the wait status. */
int tp_stop(pid_t pid, int grace_ms);
int tp_alive(pid_t pid);

/* Start a collector on 127.0.0.1:port (0 = any) with store db; returns pid
 * and the port it bound (read from its --port-file). */
pid_t tp_start_collector(const char *dir, const char *db, int port, int *bound_port, const char *log);
/* The same with extra collector arguments (NULL-terminated list, NULL for none). */
pid_t tp_start_collector_args(const char *dir, const char *db, int port, int *bound_port, const char *log,
			      const char *const *extra);
/* A free TCP port on 127.0.0.1 (bound then released), -1 if none. */
int tp_free_port(void);
/* Peak resident set of a live process in KiB (VmHWM), -1 if unknown. */
long tp_peak_rss_kib(pid_t pid);

/* One integration test's world: a temp dir (kept when PROF_KEEP_TMP is set),
 * the usual paths in it, and optionally a collector on 127.0.0.1. */
struct tp_env {
	char dir[256];
	char db[300], clog[300], alog[300], spool[300];
	char coll[64]; /* "127.0.0.1:PORT" */
	pid_t collector;
	pid_t agent; /* an agent the test started (0: none), stopped by tp_env_teardown */
	int port;
};
/* Returns 0, or -1 (the reason printed) when the dir or the collector could not be made. */
int tp_env_setup(struct tp_env *e, const char *tag, bool start_collector);
/* Stops the agent and the collector (continued first if a test stopped them). */
void tp_env_teardown(struct tp_env *e);
/* cmocka setup/teardown for suites whose state is a tp_env, or a struct of
 * size bytes that begins with one: *state = a new zeroed one, its env set up
 * (tp_env_setup); 0 or -1. tp_env_free: tp_env_teardown, free; 0. */
int tp_env_new(void **state, size_t size, const char *tag, bool start_collector);
int tp_env_free(void **state);
/* (Re)start the env's collector on 127.0.0.1:port (0 = any) with extra arguments
 * (NULL-terminated, or NULL); 0, or -1 if it did not start or bound another port.
 * One still running is stopped first (continued if stopped): its pid is replaced. */
int tp_env_start_collector(struct tp_env *e, int port, const char *const *extra);
/* The same with --http on a free 127.0.0.1 port, stored in *http_port; 0, or -1
 * (the collector's log printed) if it did not start. */
int tp_env_start_collector_http(struct tp_env *e, int *http_port);
/* DIR/name of the env, into buf. */
const char *tp_env_path(const struct tp_env *e, const char *name, char *buf, size_t len);
/* Print a file (a log) to stderr, for failing tests. */
void tp_dump_file(const char *path);

/* Run a query returning one integer (first column of first row); -1 on error.
 * A query naming block_keys reads the decoded sample blocks (block_keys.h). */
int64_t tp_db_int(const char *db, const char *sql_fmt, ...) __attribute__((format(printf, 2, 3)));
/* Count of lines in file containing needle. */
int tp_file_count(const char *path, const char *needle);
/* Read a whole small file into a malloc'd string (NULL on error). */
char *tp_slurp(const char *path);
/* The first data row of `collector report --top` output (text after the
 * "function" header line), cut at its newline inside out; NULL if no header. */
char *tp_top_first_row(char *out);
/* One row of `collector report --top` text ("12.34% 567 module function"). */
struct tp_top_row {
	long n;
	char mod[128], fn[256];
};
/* The next such row from *cursor on (other lines skipped), *cursor moved past it; false at the end. */
bool tp_top_next(const char **cursor, struct tp_top_row *row);
/* The samples of the rows whose module and function are as given (NULL: any). */
long tp_top_samples(const char *out, const char *module, const char *fn);
void tp_sleep_ms(int ms);
/* Wait (polling every 20 ms, at most ms) until the file at path has a line containing needle:
 * true once it has, false if it still has none after ms (issue 43: a wait on the condition, not
 * a fixed sleep that a loaded machine outlasts). */
bool tp_wait_log(const char *path, const char *needle, int ms);
/* Wait (at most ms) until an agent's log at path has its sampler's opening line ("sampling EVENT at
 * N Hz with the B back end": its mapping watch and sampling events are open): true once it has. Not
 * "sampling " alone (w45c): where the hardware PMU is missing an earlier warning says "sampling the
 * software event cpu-clock", and a program started then had no FORK or MMAP record. */
bool tp_wait_sampling(const char *path, int ms);
/* GET path from the collector's HTTP server on 127.0.0.1:port (30 s at most): the status
 * code (-1 if none), the body in *body (malloc'd; NULL when the connection failed). */
int tp_http_get(int port, const char *path, char **body);

#endif
