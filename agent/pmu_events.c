#include "pmu_events.h"

#include <ctype.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "pmu_table.h"

extern const char *const pmu_embedded_names[];
extern const char *const pmu_embedded_tables[];

int pmu_event_lookup(const char *name, const struct cpu_desc *cpus, size_t ncpu, struct event_desc *out, char *msg,
		     size_t msglen)
{
	if (msglen)
		msg[0] = 0;
	struct pmu_table *t = malloc(sizeof(*t));
	const struct pmu_core **per_cpu = calloc(ncpu ? ncpu : 1, sizeof(*per_cpu));
	int rc = -ENOENT;
	bool known_cpus = false;
	if (!t || !per_cpu) {
		rc = -ENOMEM;
		goto out;
	}
	for (size_t k = 0; pmu_embedded_tables[k]; k++) {
		char err[256];
		if (pmu_table_parse_text(pmu_embedded_tables[k], pmu_embedded_names[k], t, err, sizeof(err)) < 0) {
			log_warn("PMU table %s", err);
			continue;
		}
		if (pmu_select(t, cpus, ncpu, per_cpu) == 0)
			continue; /* not this board's cores */
		known_cpus = true;
		uint64_t raw = 0;
		bool have = false;
		char lacking[128] = "";
		for (size_t i = 0; i < ncpu; i++) {
			const struct pmu_core *c = per_cpu[i];
			if (!c)
				continue;
			uint64_t r;
			int e = pmu_core_event(c, name, &r);
			if (e == -ENOENT)
				goto next_table;
			if (e == -ENOTSUP) {
				if (!strstr(lacking, c->name) && strlen(lacking) + strlen(c->name) + 3 < sizeof(lacking))
					snprintf(lacking + strlen(lacking), sizeof(lacking) - strlen(lacking), "%s%s",
						 lacking[0] ? ", " : "", c->name);
				continue;
			}
			if (have && r != raw) {
				snprintf(msg, msglen,
					 "%s is event 0x%llx on one core type and 0x%llx on another (%s): not supported",
					 name, (unsigned long long)raw, (unsigned long long)r, pmu_embedded_names[k]);
				rc = -EINVAL;
				goto out;
			}
			raw = r;
			have = true;
		}
		if (!have) {
			snprintf(msg, msglen, "%s: not implemented by %s (%s)", name, lacking, pmu_embedded_names[k]);
			rc = -ENOENT;
			goto out;
		}
		if (lacking[0])
			snprintf(msg, msglen, "%s (raw 0x%llx) is not implemented by %s: it counts only on the other cores",
				 name, (unsigned long long)raw, lacking);
		memset(out, 0, sizeof(*out));
		snprintf(out->name, sizeof(out->name), "%s", name);
		out->type = PERF_TYPE_RAW;
		out->config = raw;
		out->unit = "";
		rc = 0;
		goto out;
next_table:;
	}
	if (!known_cpus)
		snprintf(msg, msglen, "no PMU event table for this machine's CPUs (tables: board/*/pmu-events)");
	else
		snprintf(msg, msglen, "%s is not in the PMU event table of this machine's cores", name);
out:
	free(t);
	free(per_cpu);
	return rc;
}

int events_parse_pmu(const char *list, const struct cpu_desc *cpus, size_t ncpu, struct event_desc *out, size_t max,
		     size_t *n, char *err, size_t errlen)
{
	/* The generic parser first: with only generic names, nothing changes. */
	if (events_parse(list, out, max, n, err, errlen) == 0)
		return 0;
	char *copy = strdup(list);
	if (!copy) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	size_t k = 0;
	int rc = 0;
	char *save = NULL;
	for (char *tok = strtok_r(copy, ",", &save); tok && rc == 0; tok = strtok_r(NULL, ",", &save)) {
		struct event_desc one;
		size_t got;
		char msg[256];
		if (k == max) {
			snprintf(err, errlen, "more than %zu events", max);
			rc = -EINVAL;
		} else if (events_parse(tok, &one, 1, &got, err, errlen) == 0) {
			out[k++] = one;
		} else if (isupper((unsigned char)tok[0])) {
			int e = pmu_event_lookup(tok, cpus, ncpu, &one, msg, sizeof(msg));
			if (e == 0) {
				if (msg[0])
					log_warn("%s", msg);
				out[k++] = one;
			} else {
				snprintf(err, errlen, "%s", msg);
				rc = -EINVAL;
			}
		} else {
			rc = -EINVAL; /* err holds the generic parser's reason */
		}
	}
	free(copy);
	for (size_t i = 0; rc == 0 && i < k; i++)
		for (size_t j = 0; j < i; j++)
			if (strcmp(out[i].name, out[j].name) == 0 ||
			    (out[i].type == out[j].type && out[i].config == out[j].config)) {
				/* INST_RETIRED and r8 are one raw event: counting it twice is a mistake */
				if (strcmp(out[i].name, out[j].name) == 0)
					snprintf(err, errlen, "event '%s' given twice", out[i].name);
				else
					snprintf(err, errlen, "event '%s' given twice (as '%s': the same raw event 0x%llx)",
						 out[i].name, out[j].name, (unsigned long long)out[i].config);
				rc = -EINVAL;
			}
	*n = rc == 0 ? k : 0;
	return rc;
}

int events_parse_here(const char *list, struct event_desc *out, size_t max, size_t *n, char *err, size_t errlen)
{
	struct cpu_desc *cpus = NULL;
	size_t ncpu = 0;
	if (sysinfo_parse_cpuinfo("/proc/cpuinfo", &cpus, &ncpu) < 0)
		ncpu = 0;
	int rc = events_parse_pmu(list, cpus, ncpu, out, max, n, err, errlen);
	free(cpus);
	return rc;
}
