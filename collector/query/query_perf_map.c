/* Frames in a process's anonymous memory named from the JIT symbols its
 * /tmp/perf-PID.map held (the agent's PerfMap records, store_perf_map.h), as
 * perf report names them: the symbol as written, module "perf-PID.map". */
#include <errno.h>
#include <stdio.h>

#include "log.h"
#include "log_once.h"
#include "query_priv.h"
#include "store/store_perf_map.h"

int qm_perf_map_of(struct store *s, struct sess *se)
{
	int rc = store_perf_map_syms(s, se->id, &se->jit, &se->njit);
	char key[64];
	snprintf(key, sizeof(key), "perf-map-cut %lld", (long long)se->id);
	if (rc == 1 && log_once(key))
		log_warn(
		    "session %lld of agent %s: over %u JIT symbols or %u MiB of their names stored (a forged "
		    "agent?): the views use the first %zu",
		    (long long)se->id, se->agent_id, STORE_PERF_MAP_QUERY_SYMS,
		    STORE_PERF_MAP_QUERY_BYTES >> 20, se->njit);
	return rc < 0 ? rc : 0;
}

static int before(const struct perf_map_sym *y, int32_t pid, uint64_t ip)
{
	return y->pid < pid || (y->pid == pid && y->start <= ip);
}

bool qm_jit_frame(const struct sess *se, int32_t pid, uint64_t ip, char *buf, size_t buflen,
		  struct sym_frame *out)
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
