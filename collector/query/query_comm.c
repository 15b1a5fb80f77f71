/* A --comm filter turned into the session's pids of those names before its
 * blocks are read (query_priv.h), so the blocks whose pid range and bits
 * rule them all out are passed over as for --pid. A process name is the
 * pid's (qm_task_names: its task rows, else its executable, pid 0
 * "swapper"), so the pids named are those of the session's task rows and
 * mappings whose name is in the list; a key of any other pid has no name
 * ("") and no --comm value is empty. */
#include <errno.h>

#include "query_priv.h"

static bool take_pid(const struct sess *se, const struct query_filter *f, struct query_filter *out, int32_t pid)
{
	if (f->npids && !qm_in_pid_list(f->pids, f->npids, pid))
		return true;
	if (!qm_pid_named(se, f, pid)) /* any of its processes (pid reuse: the keys are matched by name too) */
		return true;
	if (out->npids == QUERY_MAX_LIST)
		return false;
	out->pids[out->npids++] = pid;
	return true;
}

int qm_comm_pids(const struct sess *se, const struct query_filter *f, struct query_filter *out)
{
	*out = *f;
	if (!f->ncomms)
		return 0;
	out->npids = 0;
	bool fits = take_pid(se, f, out, 0);
	int32_t last = 0; /* the pids met in order: both lists are sorted by pid (qm_sess_sort) */
	size_t i = 0, j = 0;
	while (fits && (i < se->ntasks || j < se->nmaps)) {
		int32_t pid;
		if (j >= se->nmaps || (i < se->ntasks && se->tasks[i].pid <= se->maps[j].pid))
			pid = se->tasks[i++].pid;
		else
			pid = se->maps[j++].pid;
		if (pid != last)
			fits = take_pid(se, f, out, pid);
		last = pid;
	}
	if (!fits) {
		*out = *f; /* more pids than a list holds: the names are matched per key after summing */
		return 0;
	}
	return out->npids ? 0 : 1;
}
