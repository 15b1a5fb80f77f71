/* Mali GPU counters per OpenCL kernel (collector report --gpu, the overview's
 * GPU section and the Perfetto counter tracks): the session's counter series
 * (store_gpu.h) attributed to its kernel launches (common/gpu_attrib.h) on
 * the host clock, summed per kernel name, with the counter-derived roofline
 * dot. Mali counts instruction words (Midgard) or instructions (Bifrost),
 * not floating-point operations: the dot's work is arithmetic instruction
 * words, and its traffic is external bus beats x bus width. */
#ifndef COLLECTOR_REPORT_GPU_H
#define COLLECTOR_REPORT_GPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "store/store.h"
#include "store/store_gpu.h"

struct gpu_kernel_row {
	char name[128];
	uint64_t launches, time_ns; /* device time of the launches */
	double gpu_active, core_active, compute_active, arith, ls, tex, read_beats, write_beats;
	double dram_bytes;     /* (read + write beats) x bus width */
	double words_per_byte; /* arithmetic words / DRAM byte; 0 when no traffic */
	double words_per_s;    /* arithmetic words / second of device time */
};

struct gpu_report {
	struct store_gpu_series s;
	struct gpu_kernel_row *k;
	size_t nk;
	double unattributed_arith, total_arith;
	struct gpu_kernel_row session; /* every dump of the session, kernels or not */
	uint64_t launches_attributed;
};

/* 0 (nk = 0 and s.nrows = 0 when the session has no GPU counters), or -errno. */
int gpu_report_load(struct store *st, int64_t sid, struct gpu_report *r);
void gpu_report_free(struct gpu_report *r);
/* Text, through the control-character filter (report/text_safe.h); 0 or -EIO. */
int gpu_report_text(const struct gpu_report *r, FILE *out);
/* The "gpu" object (without a key). */
void gpu_report_json(const struct gpu_report *r, FILE *out);
/* The counter-derived dots (words/B, words/s) of the kernels and the whole
 * session on log axes (no roof: the calibrated roofs are in FLOP/s).
 * -ENODATA when no kernel has DRAM traffic. */
int gpu_report_svg(const struct gpu_report *r, FILE *out);
/* The session's chart as a malloc'd SVG string, NULL when there is none. */
char *gpu_report_svg_string(struct store *st, int64_t sid);
struct report_opts;
/* Load and render (JSON object or text), for `report --gpu` and the overview. */
int report_gpu(struct store *st, int64_t sid, const struct report_opts *o, FILE *out);
/* Does the session have GPU counters? */
bool report_gpu_present(struct store *st, int64_t sid);

#endif
