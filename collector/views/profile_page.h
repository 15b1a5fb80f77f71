/* HTML fragments of the profile views for pages that embed them (the HTML
 * report of a session, the live pages of collector --http): a query's stacks
 * as an interactive flame graph with its caller/callee table, and its CPU
 * samples over time as an SVG chart. They run the query (query.h) and render;
 * no SQL of their own. */
#ifndef COLLECTOR_VIEWS_PROFILE_PAGE_H
#define COLLECTOR_VIEWS_PROFILE_PAGE_H

#include <stdio.h>

#include "query/query.h"
#include "stacks.h"

/* The flame section (assets, container id) of the stacks qo selects into
 * *html (malloc'd; NULL and 0 when no sample matches). 0 or -errno. */
int profile_flame_fragment(struct store *st, const struct query_opts *qo, const char *id, char **html);
/* CPU samples per second over [t0_ns, t1_ns) in buckets, one line per process
 * track (the 6 busiest) and their sum, as inline SVG. */
int cpu_chart_svg(const struct stack_set *s, int64_t t0_ns, int64_t t1_ns, unsigned buckets, FILE *out);

#endif
