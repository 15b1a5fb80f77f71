/* `collector report` overview, `collector roofline` and `collector
 * sensitivity`: one session's board and kernel, calibration summary,
 * roofline (ceilings and dots), latency sensitivity, and the --top and
 * --opencl sections, loaded once (overview_load.c: store reads and the
 * analyses) and rendered as text, JSON or self-contained HTML
 * (overview_render.c, overview_html.c). */
#ifndef COLLECTOR_REPORT_OVERVIEW_H
#define COLLECTOR_REPORT_OVERVIEW_H

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "calib/calib_model.h"
#include "edag/edag.h"
#include "report/calib_drift.h"
#include "report/roofline_plot.h"
#include "report/sensitivity.h"
#include "roofline/roofline.h"
#include "store/store.h"

#define OV_MAX_DOTS 32
#define OV_MAX_SENS 16
#define OV_MAX_SENSF 12 /* per-function sensitivity rows shown */

/* Latency sensitivity per function (collector/README.md "Sensitivity per
 * function"): a thread's Lambda*alpha0 split over its functions by lambda_f. */
struct sens_func_row {
	char name[SENS_NAME_MAX];   /* function (or "[module]") */
	char module[SENS_NAME_MAX]; /* its module (file basename; "" unknown) */
	char thread[SENS_NAME_MAX]; /* the thread row it splits */
	uint64_t insns;		    /* its instructions in the voting windows */
	double W_share;		    /* its share of the thread's memory vertices */
	double lambda_per_insn;	    /* lambda_f per instruction of f */
	double mem_share;	    /* its part of the thread's Lambda*alpha0 */
	double mem_lo, mem_hi;	    /* the thread's interval, split the same way (a flagged row: low end
				     * at most the figure with its cold misses as hits; in a flagged thread
				     * the high end over the thread's baseline with every cold miss a hit) */
	bool upper_bound;	    /* its cold misses are over 10 % of its W (edag_func_cold_bound) */
	double lambda_lo_per_insn;  /* lambda_f per instruction with its cold misses as hits (flagged);
				     * = lambda_per_insn if not flagged */
	double lambda;		    /* lambda_f summed over the voting windows */
	double split;		    /* lambda_f / sum lambda_f: its share of the thread's row */
};

/* Every thread row and its function rows (all of them, not only the shown ones), as
 * overview_sensitivity makes them: the fleet view (report/fleet_sens.c). 0 or -errno
 * (which fails the load). */
typedef int (*overview_sens_sink)(void *arg, const struct sens_row *thread, const struct sens_func_row *rows,
				  size_t nrows);
#define OV_MAX_NOTES 12
#define OV_NOTE_MAX 256
#define OV_JSON_SCHEMA "prof-report/1"

struct overview_opts {
	const char *machine;	  /* --machine FILE: overrides the calibration of the session's profile */
	const char *kernel_model; /* --kernel-model FILE */
	const char *symfs;	  /* for --top */
	const char *debug_dir;	  /* for --top: --debug-dir */
	const char *kallsyms;	  /* for --top: --kallsyms */
	unsigned limit;		  /* rows of the --top / --opencl tables */
	bool sections;		  /* also capture the --top and --opencl sections */
	bool json;		  /* capture them as JSON (else text) */
	/* Time budget (CLOCK_MONOTONIC ns, clock_mono_ns(); another thread may move it): past it
	 * the load stops at its next checkpoint (between its stages, between trace windows) with
	 * -ETIMEDOUT. NULL or 0: none. */
	const _Atomic uint64_t *deadline_ns;
	/* the trace windows that count (the fleet view): wall-clock range (unix ns, 0 open),
	 * pids (none: all); and a sink for every sensitivity row */
	int64_t since_ns, until_ns;
	const int32_t *pids;
	size_t npids;
	overview_sens_sink sens_sink;
	void *sens_sink_arg;
};

struct overview {
	int64_t session;
	/* board and kernel */
	char agent_id[64], board[64], kernel_release[96], hostname[64], arch[32], target[256], agent_version[32];
	char cpu_model[128], gpu[200];
	unsigned ncpus, ngpus;
	int64_t first_seen, last_seen;
	uint64_t records;
	/* calibration ("" source: none) */
	char calib_source[OV_NOTE_MAX];
	struct calib_model *calib; /* NULL when there is none */
	int64_t calib_session;	   /* the session whose calibration records it is; 0: --machine or none */
	int64_t calib_time;	   /* when that calibration was made (its last_seen, unix s); 0 unknown */
	struct calib_drift calib_drift; /* against the board's calibration before it (none with --machine) */
	/* roofline */
	struct roofline roof_cpu, roof_gpu;
	struct roofline_wall walls[ROOFLINE_MAX_WALLS]; /* on the CPU chart (eDAG cache model) */
	size_t nwalls;
	struct rl_dot dots[OV_MAX_DOTS];
	size_t ndots;
	char notes[OV_MAX_NOTES][OV_NOTE_MAX]; /* why a dot or a chart is missing */
	size_t nnotes;
	/* latency sensitivity */
	struct edag_config edag;
	char edag_source[OV_NOTE_MAX]; /* where its cache levels came from ("" : defaults) */
	char edag_params_from[OV_NOTE_MAX]; /* where alpha0 and m came from */
	char sens_unit[16]; /* unit of alpha0 and delta10 */
	double sens_ns_per_unit; /* 0 when unknown */
	struct sens_row sens[OV_MAX_SENS];
	uint64_t trace_insns, trace_flops; /* instructions of the trace windows, of which floating point */
	size_t nsens;
	size_t sens_windows_no_row; /* windows of threads whose windows all were discarded */
	size_t sens_no_row_short, sens_no_row_cut; /* of those: too short, cut (the rest gave no metrics) */
	char sens_note[OV_NOTE_MAX];
	struct sens_func_row sensf[OV_MAX_SENSF]; /* by Lambda*alpha0, largest first */
	size_t nsensf;
	const char *symfs; /* for the window PCs' functions (overview_opts.symfs) */
	/* captured sections (malloc'd, may be NULL) */
	char *top, *opencl;
	char *gpu_counters; /* the --gpu section, NULL when the session has no Mali counters */
	char *gpu_svg;      /* its dots chart (HTML), NULL without one */
	char *flame_html;   /* the CPU flame graph with callers/callees (HTML fragment), NULL without samples */
	const _Atomic uint64_t *deadline_ns; /* overview_opts.deadline_ns, during the load */
	uint64_t realtime_ns;		     /* the session's Hello.realtime_ns */
	int64_t since_ns, until_ns;	     /* overview_opts' window filters, during the load */
	const int32_t *pids;
	size_t npids;
	overview_sens_sink sens_sink;
	void *sens_sink_arg;
	size_t sens_windows_out_of_range; /* windows the time range or pids left out */
};

/* Load and analyse session sid. Problems that only leave a section empty
 * become notes; -ENOENT if there is no such session, -EINVAL for a bad
 * --machine or --kernel-model file (logged), other negative errno. */
int overview_load(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov);
void overview_free(struct overview *ov);
/* Only what the sensitivity needs: the session, its eDAG settings (calibration or
 * o->machine) and the sensitivity rows of the windows o's filters keep (sinked to
 * o->sens_sink). Errors as overview_load. Free with overview_free. */
int overview_load_sensitivity(struct store *st, int64_t sid, const struct overview_opts *o, struct overview *ov);
/* Add a note (printf format). */
void overview_note(struct overview *ov, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Whether the load's time budget is spent (overview_opts.deadline_ns). */
bool overview_past_deadline(const struct overview *ov);
/* The sensitivity rows, sens_note and locality walls from the session's trace
 * windows (overview_sens.c; called by overview_load). */
int overview_sensitivity(struct store *st, int64_t sid, struct overview *ov);

/* The eDAG settings of session sid, one set for the report, `collector sensitivity` and
 * `collector edag --store` (issue 42): --machine FILE, else the calibration the report
 * chooses (alpha0 = mem_latency_cycles, m = mem_issue_slots, the CPU caches), else the
 * engine's defaults (edag_config_default); where each came from in params_from (alpha0, m)
 * and cache_from (the levels). 0, -ENOENT (no such session), -EINVAL (bad --machine). */
struct overview_edag_settings {
	struct edag_config cfg;
	char unit[16]; /* of alpha0: "cycles" or "cost units" */
	char params_from[OV_NOTE_MAX], cache_from[OV_NOTE_MAX];
};
int overview_edag_settings(struct store *st, int64_t sid, const char *machine, struct overview_edag_settings *out);
/* "alpha0 = 100 cycles, m = 2 (from ...)" */
void overview_edag_params_line(const struct edag_config *cfg, const char *unit, const char *from, char *buf,
			       size_t len);

/* Renderers (sections: every section; the roofline and sensitivity commands print theirs). */
int overview_text(const struct overview *ov, FILE *f);
int overview_json(const struct overview *ov, FILE *f);
int overview_html(const struct overview *ov, FILE *f);
void overview_roofline_text(const struct overview *ov, FILE *f);
void overview_sensitivity_text(const struct overview *ov, FILE *f);
/* The roofline chart of the GPU (gpu true) or CPU roof; -ENODATA without one. */
int overview_roofline_svg(const struct overview *ov, bool gpu, FILE *f);

#endif
