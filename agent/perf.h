/* perf_event counting: open one group per target task or CPU, enable, read
 * (summed over groups, scaled for multiplexing), close. Also the probe of the
 * hardware PMU and the choice of default events. The sampling work will add
 * its own open call next to perf_counters_open(); the probe and the attr
 * helpers are shared. Functions return 0 or a negative errno. */
#ifndef AGENT_PERF_H
#define AGENT_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "events.h"

enum perf_target_kind {
	PERF_TARGET_PID,    /* every current thread of pid, inherit=1 for new children */
	PERF_TARGET_SYSTEM, /* one group per online CPU, pid = -1 */
	PERF_TARGET_EXEC,   /* a forked child not yet exec'd: enable_on_exec + inherit */
};

struct perf_target {
	enum perf_target_kind kind;
	pid_t pid;         /* PID and EXEC */
	bool no_group;     /* open one fd per event even if groups work */
};

/* One event's reading, summed over all groups of the target. */
struct perf_value {
	uint64_t raw;     /* sum of raw counts */
	uint64_t scaled;  /* sum of per-group raw * enabled / running */
	uint64_t enabled; /* sum of time_enabled (ns) */
	uint64_t running; /* sum of time_running (ns) */
};

struct perf_counters;

/* Open counters for ev[0..nev) on the target. In PID and SYSTEM mode the
 * counters run when this returns; in EXEC mode they start when the child
 * calls exec. Tries one group per task/CPU (leader = ev[0], read_format
 * GROUP|TOTAL_TIME_ENABLED|TOTAL_TIME_RUNNING) and falls back to one fd per
 * event if the kernel refuses the group. err gets a user-facing reason. */
int perf_counters_open(const struct event_desc *ev, size_t nev, const struct perf_target *target,
		       struct perf_counters **out, char *err, size_t errlen);
/* Read every event into vals[0..nev). */
int perf_counters_read(struct perf_counters *pc, struct perf_value *vals);
/* Stop counting (the values stay readable). */
int perf_counters_disable(struct perf_counters *pc);
void perf_counters_close(struct perf_counters *pc);
size_t perf_counters_nfds(const struct perf_counters *pc);
bool perf_counters_grouped(const struct perf_counters *pc); /* false: one fd per event */
size_t perf_counters_ngroups(const struct perf_counters *pc); /* tasks or CPUs */

/* Pure helpers. Multiplexing scale: value * enabled / running (0 if it never
 * ran, value if running >= enabled), without overflow. */
uint64_t perf_scale(uint64_t value, uint64_t enabled, uint64_t running);
/* running / enabled as 0..100 (100 when enabled is 0). */
uint32_t perf_running_pct(uint64_t enabled, uint64_t running);
/* Per-interval increments of the scaled cumulative counts: inc = cur - prev
 * (0 if scaling made it go backwards), pct from the increments of enabled and
 * running. prev is updated to cur (keeping the larger scaled value). */
void perf_interval(struct perf_value *prev, const struct perf_value *cur, size_t n, uint64_t *inc, uint32_t *pct);

/* Open ev alone on the target (pid, or cpu for system-wide) and close it:
 * 0 if the kernel accepts it, else -errno. */
int perf_probe_event(const struct event_desc *ev, pid_t pid, int cpu);
/* The same, first refusing a hardware event the CPU's PMU does not advertise
 * (pmu_sysfs.h: -EOPNOTSUPP); why gets a one-line reason on failure. */
int perf_probe_event_why(const struct event_desc *ev, pid_t pid, int cpu, char *why, size_t whylen);
/* Open the hardware events of ev[0..n) as one group under a disabled task-clock
 * leader (nothing counts) and close it: 0 if the PMU has counters for all of them
 * at once (the ARM driver's validate_group refuses a group that does not fit with
 * EINVAL), else -errno. */
int perf_group_fits(const struct event_desc *ev, size_t n, pid_t pid, int cpu);
/* Probe PERF_COUNT_HW_CPU_CYCLES on the target: 0 if the hardware PMU works. */
int perf_probe_hw(pid_t pid, int cpu);
/* /proc/sys/kernel/perf_event_paranoid, or INT32_MIN if unreadable. */
int perf_paranoid(void);
/* The message for a failed perf_event_open on pid (rc = -errno): what to do
 * about a permission error, a target that exited, else "<what>: <strerror>". */
void perf_open_error(int rc, pid_t pid, const char *what, char *err, size_t errlen);
/* Online CPU numbers (from /sys/devices/system/cpu/online). Returns count or -errno. */
int perf_online_cpus(int *cpus, size_t max);

/* Default events for the target: the hardware list when the cycles probe
 * succeeds (less the events that do not open; msg then names them), else the
 * software list; then msg gets the one-line explanation ("hardware counters
 * unsupported (perf_event_open cycles: ...), using software events: ...") and
 * *fell_back is set. msg is empty when there is nothing to say. */
size_t perf_default_events(pid_t pid, int cpu, struct event_desc *out, size_t max, bool *fell_back, char *msg,
			   size_t msglen);

/* Drop the events of ev[0..*n) the kernel refuses on the target, warning for
 * each one by name. Returns 0, or -ENOENT if nothing is left (err says why). */
int perf_filter_supported(struct event_desc *ev, size_t *n, pid_t pid, int cpu, char *err, size_t errlen);

/* perf_event_open(2) with close-on-exec, also on kernels older than 3.14
 * (no PERF_FLAG_FD_CLOEXEC). Returns the fd, or -1 with errno. */
struct perf_event_attr;
long perf_event_open_cloexec(struct perf_event_attr *a, pid_t pid, int cpu, int group_fd, unsigned long flags);

#endif
