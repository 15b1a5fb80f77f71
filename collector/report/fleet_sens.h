/* collector report --sensitivity over a query (issue #36): latency sensitivity
 * per function across the sessions and agents a filter selects, like the CPU
 * views (query/query.h's filters: --since/--until/--agent/--board/--comm/--pid/
 * --session; --by function or module). Loading in fleet_sens.c, the rows from
 * report/sens_fleet.h, text and JSON in fleet_sens_render.c. */
#ifndef COLLECTOR_REPORT_FLEET_SENS_H
#define COLLECTOR_REPORT_FLEET_SENS_H

#include <stdatomic.h>
#include <stdio.h>

#include "query/query.h"
#include "sens_fleet.h"
#include "store/store.h"

struct fleet_sens {
	enum query_group by;
	struct sens_fleet_result r;
	size_t sessions_searched;    /* sessions the filters selected and that could be read */
	size_t skipped;		     /* sessions left out: unreadable (warned) */
	size_t windows_out_of_range; /* their windows outside the time range or pids */
	size_t windows_without_row;  /* windows of threads whose windows all were discarded */
	size_t without_row_short, without_row_cut; /* of those: too short, cut by the stop-time limit */
};

/* Whether the view groups by g (function or module). */
bool fleet_sens_groups_by(enum query_group g);
/* Load and combine: machine NULL (each session's calibration) or a --machine FILE for all;
 * deadline_ns (CLOCK_MONOTONIC ns, clock_mono_ns(); NULL or 0: none): past it, -ETIMEDOUT.
 * 0 or -errno; free with fleet_sens_free. */
int fleet_sens_load(struct store *st, const struct query_opts *qo, const char *machine,
		    const _Atomic uint64_t *deadline_ns, struct fleet_sens *out);
void fleet_sens_free(struct fleet_sens *fs);
/* Text (limit rows, 0: 20) or JSON. 0 or -EIO. */
int fleet_sens_text(const struct fleet_sens *fs, const struct query_opts *qo, unsigned limit, FILE *out);
int fleet_sens_json(const struct fleet_sens *fs, const struct query_opts *qo, unsigned limit, FILE *out);
/* The live page's section (an <h2 id="sensitivity"> and a table id="sens-rows"). 0 or -EIO. */
int fleet_sens_html(const struct fleet_sens *fs, unsigned limit, FILE *out);

#endif
