/* Hardware PMU event tables per ARM core type (board/<name>/pmu-events) and
 * the choice of a table per CPU from its MIDR implementer/part (big.LITTLE:
 * each CPU gets the events of its own core type). Pure: file reading only. */
#ifndef AGENT_PMU_TABLE_H
#define AGENT_PMU_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "sysinfo.h"

#define PMU_MAX_CORES 16u
#define PMU_MAX_EVENTS 32u
#define PMU_NAME_MAX 32u
#define PMU_NOT_IMPLEMENTED UINT64_MAX

struct pmu_core {
	char name[PMU_NAME_MAX];
	uint32_t implementer, part;
	size_t nev;
	struct {
		char name[PMU_NAME_MAX];
		uint64_t raw; /* PMU_NOT_IMPLEMENTED: the core lacks it */
	} ev[PMU_MAX_EVENTS];
};

struct pmu_table {
	size_t ncores;
	struct pmu_core cores[PMU_MAX_CORES];
};

/* Parse a pmu-events file. Returns 0, or -errno with "FILE:LINE: reason" in err. */
int pmu_table_parse(const char *path, struct pmu_table *t, char *err, size_t errlen);
/* The same from the text of such a file (label names it in errors). */
int pmu_table_parse_text(const char *text, const char *label, struct pmu_table *t, char *err, size_t errlen);
/* The core type of (implementer, part), NULL if the table has none. */
const struct pmu_core *pmu_table_core(const struct pmu_table *t, uint32_t implementer, uint32_t part);
/* Raw number of event name on core c: 0, -ENOENT (not in the table), -ENOTSUP (not implemented). */
int pmu_core_event(const struct pmu_core *c, const char *name, uint64_t *raw);
/* For each CPU, its core type (NULL if unknown: generic events only).
 * Returns how many distinct core types were found. */
size_t pmu_select(const struct pmu_table *t, const struct cpu_desc *cpus, size_t n, const struct pmu_core **per_cpu);

#endif
