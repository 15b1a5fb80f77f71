/* PerfMap record checks (validate_perf_map.h). */
#include "validate_perf_map.h"

#include <string.h>

#include "fail.h"

bool perf_map_anon(const char *path)
{
	return !path || strcmp(path, "//anon") == 0 || strncmp(path, "/dev/zero", 9) == 0 ||
	       strncmp(path, "/anon_hugepage", 14) == 0;
}

int validate_perf_map(const Prof__PerfMap *m, char *err, size_t errlen)
{
	size_t n = m->n_start;
	if (m->pid <= 0)
		return fail(err, errlen, "perf_map: pid %d", (int)m->pid);
	if (m->n_size != n || m->n_name != n)
		return fail(err, errlen, "perf_map: columns of %zu, %zu and %zu entries", n, m->n_size,
			    m->n_name);
	if (n > PERF_MAP_REC_SYMS)
		return fail(err, errlen, "perf_map: %zu symbols (max %u)", n, PERF_MAP_REC_SYMS);
	for (size_t i = 0; i < n; i++) {
		if (m->size[i] == 0 || m->start[i] + m->size[i] < m->start[i])
			return fail(err, errlen, "perf_map: symbol %zu: size 0 or a range that wraps", i);
		size_t len = m->name[i] ? strnlen(m->name[i], PERF_MAP_NAME_MAX + 1) : 0;
		if (len == 0 || len > PERF_MAP_NAME_MAX)
			return fail(err, errlen, "perf_map: symbol %zu: name empty or over %u bytes", i,
				    PERF_MAP_NAME_MAX);
	}
	return 0;
}
