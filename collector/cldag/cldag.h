/* The OpenCL command DAG of a session: nodes are commands, edges are the
 * dependencies that order them on the device: explicit event wait lists,
 * the implicit order of an in-order queue, and read-after-write through a
 * buffer (a command that reads buffer B depends on the last command, in
 * enqueue order, that wrote B). Node weight = device time (END - START).
 * The critical path is the heaviest chain; parallelism = work / span.
 * Pure computation, no I/O, no global state: this header is the whole API. */
#ifndef COLLECTOR_CLDAG_CLDAG_H
#define COLLECTOR_CLDAG_CLDAG_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cldag_cmd {
	int32_t pid;	  /* commands of different processes are never connected */
	uint64_t id;	  /* per-process, in enqueue order */
	uint64_t start_ns, end_ns; /* device time; weight = end - start (0 when end < start) */
	uint64_t prev_in_queue;	   /* 0: none */
	const uint64_t *wait_ids;
	size_t n_wait;
	const uint64_t *mem_read;
	size_t n_read;
	const uint64_t *mem_written;
	size_t n_written;
};

enum cldag_edge_kind { CLDAG_EDGE_WAIT = 1, CLDAG_EDGE_ORDER = 2, CLDAG_EDGE_RAW = 4 };

struct cldag_edge {
	size_t from, to; /* indices into the input array */
	unsigned kinds;	 /* CLDAG_EDGE_* bits: one edge per pair, all its reasons */
};

struct cldag {
	size_t n_nodes;
	struct cldag_edge *edges;
	size_t n_edges;
	size_t n_wait_edges, n_order_edges, n_raw_edges; /* edges having that reason */
	size_t n_unresolved; /* wait ids / previous commands not among the nodes (dropped, other session) */
	uint64_t work_ns;    /* sum of node weights */
	uint64_t span_ns;    /* weight of the critical path */
	double parallelism;  /* work / span (0 when span is 0) */
	bool *critical;	     /* per input node: on the critical path */
	size_t *path;	     /* critical path, input indices, first to last */
	size_t path_len;
};

/* Build the DAG of n commands (any order) and its critical path. Returns 0,
 * -ENOMEM, or -EINVAL (NULL cmds with n > 0). Free with cldag_free. */
int cldag_build(const struct cldag_cmd *cmds, size_t n, struct cldag *out);
void cldag_free(struct cldag *d);
/* Weight of one command. */
uint64_t cldag_weight(const struct cldag_cmd *c);

#endif
