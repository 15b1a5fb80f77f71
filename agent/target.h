/* What the agent profiles: a running process (-p PID), the whole system
 * (-a), or a command it starts (-- CMD ARGS). For a command, the child is
 * forked blocked until the counters/samplers are attached (target_release),
 * like `perf stat -- cmd`. Signals (SIGINT/SIGTERM/SIGCHLD) arrive through a
 * signalfd; the target source stops the loop when the target ends, when
 * --duration passes, or on SIGINT/SIGTERM (forwarded to a command, which is
 * then given 2 s before SIGKILL). The agent never kills a process it did not
 * start, and never takes a running command down with it on its own errors. */
#ifndef AGENT_TARGET_H
#define AGENT_TARGET_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "loop.h"

enum target_kind { TARGET_PID, TARGET_SYSTEM, TARGET_EXEC };

struct target_opts {
	pid_t pid;          /* -p */
	bool all;           /* -a */
	char **cmd;         /* -- CMD ARGS (NULL-terminated) */
	double duration_s;  /* 0: until the target ends */
	char **extra_env;   /* NAME=VALUE set for CMD only (e.g. OPENCL_LAYERS), NULL-terminated or NULL */
};

struct target;

/* Checks the options, blocks the signals, and for a command forks it
 * (blocked). Returns 0, or -errno with a reason in err (-ESRCH: no such pid). */
int target_prepare(struct target **out, const struct target_opts *o, char *err, size_t errlen);
enum target_kind target_kind(const struct target *t);
/* pid to attach to: the process, the command's child, or -1 system-wide. */
pid_t target_pid(const struct target *t);
/* "pid 12", "system-wide", "app arg" (a command: argv[0]'s basename, as perf) */
const char *target_describe(const struct target *t);
/* Let the command exec. Returns 0, or the exit code to use when it could not
 * run (127 not found, 126 not executable) with the reason logged. */
int target_release(struct target *t);
/* The same, --duration counted from start_ns (CLOCK_MONOTONIC) instead of now: when
 * sampling of a running target began, before work that came between (issue 39). */
int target_release_at(struct target *t, uint64_t start_ns);
/* Register the signals / child / pidfd / duration source; it stops the loop
 * with 0 when the target is done. */
int target_attach(struct target *t, struct loop *l);
bool target_interrupted(const struct target *t); /* ended by SIGINT/SIGTERM to the agent */
/* The command's exit code (128+signal if killed); 0 for -p and -a. */
int target_exit_code(struct target *t);
/* The command's wait status (waitpid) once it ended: true and *status set. */
bool target_wait_status(struct target *t, int *status);
/* Someone else (the tracer's waitpid) collected the exit status of pid: if it
 * is the command's, the command is done (ends the loop, keeps the status). */
void target_child_reaped(struct target *t, pid_t pid, int status);
void target_close(struct target *t);

#endif
