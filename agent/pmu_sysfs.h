/* The events an ARM CPU PMU advertises in sysfs
 * (/sys/bus/event_source/devices/<pmu>/events/<name> = "event=0xNN"). On arm64
 * the kernel shows a common event (< 0x40, and 0x4000-0x403f) only when the
 * core's PMCEID0/1 registers say it is implemented (drivers/perf/arm_pmuv3.c,
 * armv8pmu_event_attr_is_visible); perf_event_open itself accepts any raw
 * number and such an event then reads 0. So before opening a hardware event
 * the agent asks here. Pure file reading: unit-tested on a fake tree. */
#ifndef AGENT_PMU_SYSFS_H
#define AGENT_PMU_SYSFS_H

#include <stddef.h>

#include "events.h"

#define PMU_SYSFS_ROOT "/sys/bus/event_source/devices"

/* The ARM PMU event number a hardware event opens on these kernels: raw
 * config, or the generic event's number in the kernel's ARM maps
 * (arch/arm/kernel/perf_event_v7.c armv7_a15_perf_map, drivers/perf/arm_pmuv3.c
 * armv8_pmuv3_perf_map: instructions 0x08, cache-references 0x04,
 * cache-misses 0x03, branch-misses 0x10, bus-cycles 0x1d). Returns 0, or
 * -ENOENT for events without such a number (software, cycles: CCNT/PMCCNTR). */
int pmu_sysfs_arm_number(const struct event_desc *ev, unsigned *num);

/* Does an ARM CPU PMU under root (PMU_SYSFS_ROOT) advertise ev? Returns 1 (yes,
 * or nothing to check: no ARM PMU with an events directory, an event without an
 * ARM number, or a number the kernel never lists: 0x40-0x3fff), 0 (no: why
 * says so, naming the PMU), or -errno. ARM PMUs are told by their
 * events/cpu_cycles file (x86 spells it cpu-cycles). */
int pmu_sysfs_advertised(const char *root, const struct event_desc *ev, char *why, size_t whylen);

#endif
