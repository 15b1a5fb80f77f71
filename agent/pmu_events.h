/* Architectural PMU event names (CPU_CYCLES, L1D_CACHE_REFILL, VFP_SPEC ...)
 * from the boards' tables (board/<name>/pmu-events, embedded at build time),
 * resolved for the core types of this machine's CPUs. */
#ifndef AGENT_PMU_EVENTS_H
#define AGENT_PMU_EVENTS_H

#include <stddef.h>

#include "events.h"
#include "sysinfo.h"

/* Resolve name for the given CPUs into a raw event. Returns 0 (msg may warn
 * that some core types lack it: counts only while running on the others),
 * -ENOENT (no table knows these CPUs, or the name is not in it; msg says
 * which), -EINVAL (the core types number it differently: not supported). */
int pmu_event_lookup(const char *name, const struct cpu_desc *cpus, size_t ncpu, struct event_desc *out, char *msg,
		     size_t msglen);

/* events_parse, where names the generic table does not know are looked up as
 * PMU event names for these CPUs. Warnings are logged. */
int events_parse_pmu(const char *list, const struct cpu_desc *cpus, size_t ncpu, struct event_desc *out, size_t max,
		     size_t *n, char *err, size_t errlen);

/* The same for this machine (/proc/cpuinfo). */
int events_parse_here(const char *list, struct event_desc *out, size_t max, size_t *n, char *err, size_t errlen);

#endif
