#include "pmu_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int bad(char *err, size_t errlen, const char *path, int line, const char *why)
{
	snprintf(err, errlen, "%s:%d: %s", path, line, why);
	return -EINVAL;
}

static int parse_stream(FILE *f, const char *path, struct pmu_table *t, char *err, size_t errlen);

int pmu_table_parse(const char *path, struct pmu_table *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fopen(path, "re");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", path, strerror(e));
		return -e;
	}
	return parse_stream(f, path, t, err, errlen);
}

int pmu_table_parse_text(const char *text, const char *label, struct pmu_table *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	FILE *f = fmemopen((void *)text, strlen(text), "r");
	if (!f) {
		int e = errno;
		snprintf(err, errlen, "%s: %s", label, strerror(e));
		return -e;
	}
	return parse_stream(f, label, t, err, errlen);
}

/* Parses f (closed here). */
static int parse_stream(FILE *f, const char *path, struct pmu_table *t, char *err, size_t errlen)
{
	char buf[256];
	int ln = 0, rc = 0;
	struct pmu_core *cur = NULL;
	while (rc == 0 && fgets(buf, sizeof(buf), f)) {
		ln++;
		char *hash = strchr(buf, '#');
		if (hash)
			*hash = 0;
		char a[64], b[64], c[64], d[64];
		int n = sscanf(buf, "%63s %63s %63s %63s", a, b, c, d);
		if (n <= 0)
			continue;
		if (strcmp(a, "core") == 0) {
			char *e1, *e2;
			if (n != 4)
				rc = bad(err, errlen, path, ln, "expected: core NAME IMPLEMENTER PART");
			else if (t->ncores == PMU_MAX_CORES)
				rc = bad(err, errlen, path, ln, "too many core types");
			else if (strlen(b) >= PMU_NAME_MAX)
				rc = bad(err, errlen, path, ln, "core name too long");
			if (rc)
				break;
			cur = &t->cores[t->ncores];
			snprintf(cur->name, sizeof(cur->name), "%s", b);
			unsigned long impl = strtoul(c, &e1, 0), part = strtoul(d, &e2, 0);
			if (*e1 || *e2 || impl > 0xff || part > 0xfff) {
				rc = bad(err, errlen, path, ln, "implementer/part must be numbers (0x41 0xc0f)");
				break;
			}
			cur->implementer = (uint32_t)impl;
			cur->part = (uint32_t)part;
			t->ncores++;
			continue;
		}
		if (n != 2) {
			rc = bad(err, errlen, path, ln, "expected: EVENT NUMBER (or EVENT -)");
			break;
		}
		if (!cur) {
			rc = bad(err, errlen, path, ln, "event before any 'core' line");
			break;
		}
		if (cur->nev == PMU_MAX_EVENTS || strlen(a) >= PMU_NAME_MAX) {
			rc = bad(err, errlen, path, ln, "too many events or name too long");
			break;
		}
		uint64_t raw = PMU_NOT_IMPLEMENTED;
		if (strcmp(b, "-") != 0) {
			char *e;
			unsigned long long v = strtoull(b, &e, 0);
			if (*e || v > 0xffff) {
				rc = bad(err, errlen, path, ln, "event number must be 0..0xffff or '-'");
				break;
			}
			raw = v;
		}
		for (size_t i = 0; i < cur->nev; i++)
			if (strcmp(cur->ev[i].name, a) == 0)
				rc = bad(err, errlen, path, ln, "event listed twice for this core");
		if (rc)
			break;
		snprintf(cur->ev[cur->nev].name, PMU_NAME_MAX, "%s", a);
		cur->ev[cur->nev++].raw = raw;
	}
	fclose(f);
	if (rc == 0 && t->ncores == 0)
		rc = bad(err, errlen, path, ln, "no 'core' section");
	return rc;
}

const struct pmu_core *pmu_table_core(const struct pmu_table *t, uint32_t implementer, uint32_t part)
{
	for (size_t i = 0; i < t->ncores; i++)
		if (t->cores[i].implementer == implementer && t->cores[i].part == part)
			return &t->cores[i];
	return NULL;
}

int pmu_core_event(const struct pmu_core *c, const char *name, uint64_t *raw)
{
	for (size_t i = 0; i < c->nev; i++)
		if (strcmp(c->ev[i].name, name) == 0) {
			if (c->ev[i].raw == PMU_NOT_IMPLEMENTED)
				return -ENOTSUP;
			*raw = c->ev[i].raw;
			return 0;
		}
	return -ENOENT;
}

size_t pmu_select(const struct pmu_table *t, const struct cpu_desc *cpus, size_t n, const struct pmu_core **per_cpu)
{
	const struct pmu_core *seen[PMU_MAX_CORES];
	size_t nseen = 0;
	for (size_t i = 0; i < n; i++) {
		per_cpu[i] = pmu_table_core(t, cpus[i].implementer, cpus[i].part);
		if (!per_cpu[i])
			continue;
		size_t j = 0;
		while (j < nseen && seen[j] != per_cpu[i])
			j++;
		if (j == nseen && nseen < PMU_MAX_CORES)
			seen[nseen++] = per_cpu[i];
	}
	return nseen;
}
