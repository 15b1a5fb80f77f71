/* Latency sensitivity per function across a fleet (issue #36): the per-thread,
 * per-function splits of many sessions and agents (collector/README.md
 * "Sensitivity per function") combined into one row per function: "which code
 * in my fleet slows most if memory gets slower". Pure: no I/O; the caller
 * loads the parts (report/fleet_sens.c).
 *
 * Input: groups and parts. A group is one thread of one session: its voting
 * trace windows (count, instructions) and its Lambda*alpha0. A part is one
 * function's split of one group (edag_func: insns_f, lambda_f, and f's share
 * of the group's Lambda*alpha0 with its interval and upper-bound flag).
 *
 * Output, per key (function and module):
 *   Lambda*alpha0 = sum_g n_g * s_fg / sum_g n_g over every group g, where
 *     n_g is g's windows' instructions and s_fg f's share in g (0 where f did
 *     not run): every window weighs by its instructions (within a group the
 *     combine already weighs its windows so), so the rows add up to the
 *     fleet's Lambda*alpha0, f's share of the fleet's sampled time spent
 *     waiting on memory at the baseline latency;
 *   lo, hi = the same sums of the parts' interval ends (it holds the weighted
 *     figure when each part's interval holds its own);
 *   upper_bound when any part it rests on is one: the part's own flag (the
 *     session report's function rule, report/overview_sensf.c sensf_rows: f's
 *     cold misses over 10 % of its W), never its thread's (its windows counted
 *     apart); the thread's flag only makes the totals an upper bound;
 *   lambda/insn = sum lambda_f / sum insns_f;
 *   windows, sessions, agents: what the row rests on (the groups f ran in);
 *   discarded_short, discarded_cut: the windows of those groups that gave no
 *     vote (under EDAG_WINDOW_MIN_INSNS instructions; cut by the stop-time
 *     limit): never part of a row. */
#ifndef COLLECTOR_REPORT_SENS_FLEET_H
#define COLLECTOR_REPORT_SENS_FLEET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sensitivity.h"

struct sens_fleet_group {
	int64_t session;
	const char *agent_id;
	size_t windows;	 /* voting windows */
	uint64_t insns;	 /* their instructions: the group's weight */
	double mem_share, mem_lo, mem_hi; /* the thread's Lambda*alpha0 and interval */
	bool upper_bound;
	size_t discarded_short, discarded_cut; /* its windows that gave no vote, and why */
};

struct sens_fleet_part {
	size_t group; /* index into the groups */
	const char *name, *module; /* function ("[module]" unresolved), its module ("" unknown) */
	uint64_t insns;		   /* f's instructions in the group's windows */
	double lambda;		   /* lambda_f summed over them */
	double mem_share, mem_lo, mem_hi; /* f's part of the group's Lambda*alpha0, interval */
	bool upper_bound;
};

struct sens_fleet_row {
	char name[SENS_NAME_MAX], module[SENS_NAME_MAX];
	uint64_t insns;
	double insn_share; /* of all the groups' instructions */
	double lambda_per_insn;
	double mem_share, mem_lo, mem_hi;
	bool upper_bound;
	size_t windows, upper_windows; /* of the groups it ran in; of those, in upper-bound parts */
	size_t discarded_short, discarded_cut; /* those groups' windows that gave no vote */
	size_t sessions, agents;
	char top_agent[SENS_NAME_MAX]; /* the agent whose groups give the most of mem_share */
};

struct sens_fleet_result {
	struct sens_fleet_row *rows; /* by mem_share, largest first, then name */
	size_t nrows;
	/* over every group */
	size_t groups, windows, upper_windows, sessions, agents;
	size_t discarded_short, discarded_cut;
	uint64_t insns;
	double mem_share, mem_lo, mem_hi;
	bool upper_bound;
};

/* Combine; parts naming a group out of range: -EINVAL. 0 or -ENOMEM. Free with
 * sens_fleet_result_free. No groups: an empty result. */
int sens_fleet_combine(const struct sens_fleet_group *g, size_t ng, const struct sens_fleet_part *p, size_t np,
		       struct sens_fleet_result *out);
void sens_fleet_result_free(struct sens_fleet_result *r);

#endif
