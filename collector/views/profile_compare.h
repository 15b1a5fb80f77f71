/* The comparison of two ranges on the live /profile page: the stacks of A
 * and B as a differential flame graph (widths B, colour the change: the one
 * `collector diff -o x.html` draws) and a table of the functions whose self
 * share changed most (rows class "diff-row"), with both sides' totals. Names
 * are escaped (svg_escape; the flame's data through the JSON writer). */
#ifndef COLLECTOR_VIEWS_PROFILE_COMPARE_H
#define COLLECTOR_VIEWS_PROFILE_COMPARE_H

#include <stdio.h>

#include "stacks.h"

#define PROFILE_COMPARE_ROWS 20

/* a, b: the two sides' stacks. 0 or -errno. */
int profile_compare_html(const struct stack_set *a, const struct stack_set *b, FILE *out);

#endif
