/* A query result (collector/query/query.h) as the views' stack_set. */
#ifndef COLLECTOR_VIEWS_STACKS_QUERY_H
#define COLLECTOR_VIEWS_STACKS_QUERY_H

#include "query/query.h"
#include "stacks.h"

/* out initialized here; the points (query_opts.series) become its CPU series
 * with one track per process ("comm (agent)"). 0 or -errno. */
int stack_set_from_query(const struct query_result *r, struct stack_set *out);

#endif
