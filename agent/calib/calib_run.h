/* Runs the calibration benchmarks in order, shows progress on stderr and
 * hands each result to a sink (agent calibrate sends it as a Calibration
 * record); every parameter also lands in one machine model. */
#ifndef AGENT_CALIB_RUN_H
#define AGENT_CALIB_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "calib/calib_model.h"
#include "calib_bench.h"
#include "profiler.pb-c.h"

struct calib_run_opts {
	int device;       /* OpenCL device index, -1: first GPU else first device */
	bool quick;       /* fewer points and repetitions (a full run in under a minute on 2 cores) */
	unsigned reps;    /* 0: 3 with quick, 5 without */
	const char *only; /* NULL, or a comma list of benchmark names */
	FILE *progress;   /* NULL: quiet */
	bool in_helper;   /* prof-clhelper: run the OpenCL benchmarks here, never through a helper */
};

typedef int (*calib_sink_fn)(void *arg, const struct calib_result *r);

/* Returns the number of benchmarks that produced results (>= 0), or -errno
 * when nothing could run. Results that the sink refuses are still in model. */
int calib_run_all(const struct calib_run_opts *o, struct calib_model *model, calib_sink_fn sink, void *arg);

/* Whether the OpenCL benchmarks run in prof-clhelper: a static musl agent (no dlopen), or one
 * given $PROF_CLHELPER (calib_helper.c). */
bool calib_helper_wanted(void);
/* Run the selected OpenCL benchmarks in the helper: each result lands in model and goes to sink.
 * Returns how many produced results, or -errno with the reason in err. */
int calib_helper_run(const struct calib_run_opts *o, struct calib_model *model, calib_sink_fn sink, void *arg,
		     char *err, size_t errlen);
/* Whether benchmark name is OpenCL (true) or CPU (false); -1 if unknown. */
int calib_bench_is_opencl(const char *name);

/* Names of the benchmarks, in order (NULL-terminated). */
extern const char *const calib_bench_names[];

/* Build the Calibration record of r (pointers into r; free with
 * calib_record_free). Returns 0 or -ENOMEM. */
int calib_record_build(const struct calib_result *r, unsigned device_index, Prof__Calibration **out);
void calib_record_free(Prof__Calibration *c);

#endif
