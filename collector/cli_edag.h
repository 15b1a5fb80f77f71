/* `collector edag` internals shared by cli_edag.c (options, output, stored
 * windows) and cli_edag_file.c (trace files). */
#ifndef COLLECTOR_CLI_EDAG_H
#define COLLECTOR_CLI_EDAG_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "edag/edag.h"

#define EDAG_BATCH 256 /* instructions handed to edag_step_batch at once */

struct opts {
	const char *store, *trace, *format, *machine, *dot, *gjson, *layers, *sweep;
	int64_t session, window;
	struct edag_config cfg;
	bool json, alpha_set;
	unsigned arch;
	int cpu;
	size_t max_vertices;
	int64_t max_bad; /* -1: the default limit (100 lines or 1% of them) */
};

struct run {
	const struct opts *o;
	struct edag_state *st;
	struct edag_graph *g; /* the first window, when a graph was asked for */
	bool graph_done, graph_too_big, in_window;
	struct edag_window_info info;
	uint64_t n;
	uint64_t unknown;  /* instructions of the current window whose class is a guess */
	uint64_t pos_next; /* store: trace_pos that continues the current window, 0 if none */
	struct edag_window_result *res;
	uint64_t *res_unknown; /* per result: vertices of unknown class */
	size_t nres, capres;
	FILE *layers;
	uint64_t items, bad; /* lines (instructions of stored windows) read, and bad ones skipped */
	struct edag_insn batch[EDAG_BATCH];
	size_t nbatch;
};

/* Errors are logged where they happen; then -EIO (exit status 1), or
 * -EBADMSG for input that is no trace (exit status 2). */
int cli_edag_window_begin(struct run *r, const struct edag_window_info *info);
int cli_edag_window_step(struct run *r, const struct edag_insn *in);
int cli_edag_window_end(struct run *r);
/* One bad item (line or stored instruction): logged (the first few, where
 * is the position already escaped), counted; -EBADMSG once over the limit. */
int cli_edag_bad(struct run *r, const char *where, const char *why);
/* Over the --max-bad limit at the end of the input? Logs and returns -EBADMSG. */
int cli_edag_bad_check(struct run *r, const char *what);
/* --trace FILE --format edan|native */
int cli_edag_run_file(struct run *r);

#endif
