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
	const char *cache_from; /* where the cache levels came from */
	/* a stored session: the report's settings for it (overview_edag_settings) */
	char params_from[256], cache_from_buf[256], unit[16];
	bool params_flags; /* --alpha0 or -m given */
	char prog[40];		/* the program the stored session traced ("" unknown) */
	unsigned arch;
	int cpu;
	size_t max_vertices;
	int64_t max_bad; /* -1: the default limit (100 lines or 1% of them) */
	int threads;	 /* trace files: 1 all in one, 2 parser + engine, 3 (default) two EDAN parsers + engine */
	unsigned check;	 /* --check: STORE_CHECK_* flags */
};

/* Where alpha0 and m came from, for the output (cli_edag.c). */
const char *cli_edag_params_from(const struct opts *o);

struct run {
	const struct opts *o;
	struct edag_state *st;
	struct edag_graph *g; /* the first window, when a graph was asked for */
	bool graph_done, graph_too_big, in_window;
	struct edag_window_info info;
	uint32_t capture;	 /* the current window's TraceWindow.capture, warm-up and stop time */
	uint32_t end_reason; /* and how it ended (TraceWindow.end_reason) */
	size_t lost_cut;     /* records of no instructions: windows the stop-time limit cut in their warm-up */
	uint64_t warm_insns, stop_ns;
	uint64_t n;
	uint64_t unknown;  /* instructions of the current window whose class is a guess */
	uint64_t pos_next; /* store: trace_pos that continues the current window, 0 if none */
	struct edag_window_result *res;
	uint64_t *res_unknown; /* per result: vertices of unknown class */
	size_t nres, capres;
	FILE *layers;
	uint64_t items, bad; /* lines (instructions of stored windows) read, and bad ones skipped */
	uint64_t lines;	     /* text traces: all lines, comments and blank ones too */
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
/* n instructions at once (edag_step_batch straight from ins when no graph
 * is being built). */
int cli_edag_window_steps(struct run *r, const struct edag_insn *ins, size_t n);

/* Trace files: parse in this thread, run the engine in another
 * (cli_edag_pipe.c). start begins the first window; slot is where to parse
 * the next instruction, commit hands it on; window ends the current window
 * and begins info's; finish ends the last (ok) and waits for the engine.
 * All return 0 or a logged error (-EIO, -EBADMSG). */
struct edag_pipe;
int cli_edag_pipe_start(struct run *r, const struct edag_window_info *first, struct edag_pipe **out);
struct edag_insn *cli_edag_pipe_slot(struct edag_pipe *p);
int cli_edag_pipe_commit(struct edag_pipe *p, bool unknown);
int cli_edag_pipe_window(struct edag_pipe *p, const struct edag_window_info *info);
int cli_edag_pipe_finish(struct edag_pipe *p, bool ok);

/* A second EDAN parser thread (cli_edag_split.c): begin parses
 * buf[from..to) (whole lines) into records, wait returns them and where it
 * stopped (at most 16384 lines: the caller parses the rest). start returns
 * NULL when no thread could be had. */
struct edan_rec {
	struct edag_insn in;
	struct edag_edan_info info;
	int k;	 /* as edag_edan_parse returns */
	int err; /* its reason (k < 0): cli_edag_split_err */
};
struct edan_split;
struct edan_split *cli_edag_split_start(void);
void cli_edag_split_begin(struct edan_split *s, const char *buf, size_t from, size_t to);
size_t cli_edag_split_wait(struct edan_split *s, const struct edan_rec **rec, size_t *n);
const char *cli_edag_split_err(const struct edan_split *s, const struct edan_rec *r);
void cli_edag_split_stop(struct edan_split *s);

/* Output (cli_edag_out.c). */
void cli_edag_print_window_text(const struct opts *o, const struct edag_window_result *r, uint64_t unknown, FILE *f);
void cli_edag_print_discarded_text(const struct edag_approx *ap, FILE *f);
/* ap: the estimate when have_ap, else (combine failed) only its window counts */
void cli_edag_print_json(const struct opts *o, const struct run *r, const struct edag_approx *ap, bool have_ap);
void cli_edag_print_approx_text(const struct edag_approx *ap, FILE *f);
int cli_edag_write_graph(const struct opts *o, const struct edag_graph *g);
int cli_edag_write_sweep(const struct opts *o, const struct edag_metrics *mt, const char *label, FILE *f);

/* --trace FILE --format edan|native */
int cli_edag_run_file(struct run *r);

#endif
