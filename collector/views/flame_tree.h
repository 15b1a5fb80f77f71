/* The call tree under the flame graphs, the diff and the caller/callee view:
 * stacks of one or two stack_sets merged by (parent, frame name), with the
 * samples of each side. Node 0 is the root ("all"). Names point into the
 * stack_sets, which must outlive the tree. */
#ifndef COLLECTOR_VIEWS_FLAME_TREE_H
#define COLLECTOR_VIEWS_FLAME_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "stacks.h"

#define FLAME_MAX_NODES (4u << 20) /* bounded: beyond it, stacks are cut (flagged in truncated) */

struct flame_node {
	const char *name, *module;
	uint64_t total[2], self[2]; /* samples per side: [0] the only / the base (A), [1] the new (B) */
	int32_t parent, child, next; /* -1: none; children in no particular order */
};

struct flame_tree {
	struct flame_node *nodes;
	size_t n, cap;
	int32_t *hash; /* (parent, name) -> node, open addressing */
	size_t caphash;
	uint64_t total[2];
	bool truncated;
};

struct flame_opts {
	bool process_level; /* a first level of process names (comm) under the root */
};

int flame_tree_init(struct flame_tree *t);
void flame_tree_free(struct flame_tree *t);
/* Merge the stacks of s into side (0 or 1). 0 or -ENOMEM. */
int flame_tree_add(struct flame_tree *t, const struct stack_set *s, int side, const struct flame_opts *o);
/* Children of node i sorted by name into out (caller frees). n children or -ENOMEM. */
int flame_tree_children(const struct flame_tree *t, int32_t i, int32_t **out);

#endif
