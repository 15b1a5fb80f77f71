/* Frames in a process's anonymous memory named from the JIT symbols its
 * /tmp/perf-PID.map held (the agent's PerfMap records, store_perf_map.h), as
 * perf report names them: the symbol as written, module "perf-PID.map". */
#include <errno.h>
#include <stdio.h>

#include "query_priv.h"
#include "store/store_perf_map.h"

int qm_perf_map_of(struct store *s, struct sess *se)
{
	return store_perf_map_syms(s, se->id, &se->jit, &se->njit);
}

static int before(const struct perf_map_sym *y, int32_t pid, uint64_t ip)
{
	return y->pid < pid || (y->pid == pid && y->start <= ip);
}

bool qm_jit_frame(const struct sess *se, int32_t pid, uint64_t ip, char *buf, size_t buflen, struct sym_frame *out)
{
	size_t lo = 0, hi = se->njit; /* the last symbol at or before (pid, ip) */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (before(&se->jit[mid], pid, ip))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == 0)
		return false;
	const struct perf_map_sym *y = &se->jit[lo - 1];
	if (y->pid != pid || ip >= y->end)
		return false;
	memset(out, 0, sizeof(*out));
	snprintf(buf, buflen, "perf-%d.map", (int)pid);
	out->name = out->raw = y->name;
	out->module = buf;
	out->ip = ip;
	out->file_off = ip - y->start;
	out->resolved = 1;
	return true;
}
