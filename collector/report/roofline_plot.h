/* Roofline chart rendering (SVG, log-log) from the computed model
 * (collector/roofline) and placed dots. Rendering only: no computation
 * beyond pixel placement. */
#ifndef COLLECTOR_REPORT_ROOFLINE_PLOT_H
#define COLLECTOR_REPORT_ROOFLINE_PLOT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include "report/svg.h"
#include "roofline/roofline.h"

#define RL_NAME_MAX 64
#define RL_SOURCE_MAX 320

/* One dot: a process (CPU counters) or an OpenCL kernel. */
struct rl_dot {
	char name[RL_NAME_MAX];
	bool cpu;		    /* placed on the CPU roof (else the GPU one) */
	char source[RL_SOURCE_MAX]; /* where W and Q came from */
	struct roofline_point p;
};

#define RL_PLOT_WIDTH 760
#define RL_PLOT_HEIGHT 520

/* Write one chart: the roof, the lower ceilings, the ridge point, the walls
 * and the dots (circles with class="dot", data-name, data-i = intensity,
 * data-p = achieved GFLOP/s). -ENODATA if the roof is incomplete. */
int roofline_plot_svg(FILE *f, const struct roofline *roof, const struct roofline_wall *walls, size_t nwalls,
		      const struct rl_dot *dots, size_t ndots, const char *title);
/* The plot area roofline_plot_svg used for these inputs (for tests and parse-back). */
int roofline_plot_area(const struct roofline *roof, const struct roofline_wall *walls, size_t nwalls,
		       const struct rl_dot *dots, size_t ndots, struct svg_plot *out);

#endif
