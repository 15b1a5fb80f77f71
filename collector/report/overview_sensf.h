/* The overview's sensitivity per function (overview_sensf.c): each trace
 * window instruction's function from the session's symbols, the window's
 * per-function split (edag/edag_func.h) kept when the window votes, and the
 * rows that split a thread's row. Private to collector/report/. */
#ifndef COLLECTOR_REPORT_OVERVIEW_SENSF_H
#define COLLECTOR_REPORT_OVERVIEW_SENSF_H

#include <stdbool.h>
#include <stdint.h>

#include "edag/edag_func.h"
#include "overview.h"

struct sensf;
struct store;

int sensf_open(struct store *st, int64_t sid, const char *symfs, struct sensf **out);
void sensf_free(struct sensf *sf);
/* A new window starts (pieces of one full trace continue it: no call). */
void sensf_window_start(struct sensf *sf);
/* Vertex v of the instruction at pc of pid. 0 or -ENOMEM. */
int sensf_step(struct sensf *sf, int32_t pid, uint64_t pc, const struct edag_vertex *v);
/* The piece read since the last call ends: into tot when vote (the window gives
 * a vote), dropped otherwise. 0 or -ENOMEM. */
int sensf_piece_end(struct sensf *sf, bool vote, struct edag_func_acc *tot);
/* The rows splitting thread row r (totals tot), one per function, into *rows
 * (malloc'd, *nrows of them); none unless some PC resolved to a function.
 * 0 or -ENOMEM. */
int sensf_rows(struct sensf *sf, const struct edag_func_acc *tot, const struct sens_row *r,
	       struct sens_func_row **rows, size_t *nrows);
/* Add row to ov->sensf, keeping the OV_MAX_SENSF largest. */
void sensf_put_row(struct overview *ov, const struct sens_func_row *row);

#endif
