/* SVG chart of predicted slowdown vs added memory latency, one curve per
 * m = 1, 2, 4 (polylines with class="curve m1" ...), and the 10% line. */
#ifndef COLLECTOR_REPORT_SENS_PLOT_H
#define COLLECTOR_REPORT_SENS_PLOT_H

#include <stdio.h>

#include "report/sensitivity.h"

#define SENS_PLOT_WIDTH 560
#define SENS_PLOT_HEIGHT 380

/* unit: the latency unit ("cycles", "ns"); scale converts alpha0 units into it. */
int sens_plot_svg(FILE *f, const struct sens_row *r, const char *unit, double scale);

#endif
