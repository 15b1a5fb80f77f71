/* Per-function samples of one or two stack_sets: self (the function is the
 * leaf) and total (the function is on the stack, counted once per stack), for
 * the diff's top table of gains and losses. */
#ifndef COLLECTOR_VIEWS_FUNC_STATS_H
#define COLLECTOR_VIEWS_FUNC_STATS_H

#include <stdio.h>

#include "stacks.h"

struct func_stat {
	const char *name, *module;
	uint64_t self[2], total[2];
};

struct func_stats {
	struct func_stat *v;
	size_t n, cap;
	int32_t *hash;
	size_t caphash;
	uint64_t samples[2];
};

void func_stats_init(struct func_stats *fs);
void func_stats_free(struct func_stats *fs);
/* Count s into side 0 or 1. 0 or -ENOMEM. */
int func_stats_add(struct func_stats *fs, const struct stack_set *s, int side);
/* The table of the functions whose self share changed most from side 0 (A) to
 * 1 (B), gains first then losses, limit rows each (0: 15); text or JSON. */
int func_stats_diff_table(struct func_stats *fs, unsigned limit, int json, FILE *out);

#endif
