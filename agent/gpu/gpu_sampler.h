/* Mali counter sampling for `agent run --gpu` / `agent stat --gpu`: dumps
 * every interval (the reader's own timer, or the agent's for the UK dump
 * buffer), per-dump increments summed over block instances into rows, and a
 * GpuCounters record per flush period. The per-kernel attribution is the
 * collector's (common/gpu_attrib.h), which has both streams. */
#ifndef AGENT_GPU_GPU_SAMPLER_H
#define AGENT_GPU_GPU_SAMPLER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "gpu/kbase_dev.h"

struct session;
struct loop;

#define GPU_DEFAULT_INTERVAL_NS 1000000u /* 1 ms */
#define GPU_DEFAULT_FLUSH_MS 200u
#define GPU_MAX_ROWS 1024u /* a record is sent early when this many rows are waiting */

struct gpu_sampler_opts {
	const char *device;	     /* NULL: gpu_device_path(NULL) */
	uint32_t interval_ns;	     /* 0: default */
	uint32_t flush_ms;	     /* 0: default */
	const struct kbase_sys *sys; /* NULL: the C library's */
};

/* opt, else $PROF_MALI_DEVICE, else /dev/mali0. */
const char *gpu_device_path(const char *opt);

/* Rows waiting to be sent: row r covers (t0[r], t1[r]], values[r*ncols + c]
 * is the increment of column c summed over the instances of its block. */
struct gpu_rows {
	size_t ncols, nrows;
	uint64_t t0[GPU_MAX_ROWS], t1[GPU_MAX_ROWS];
	uint64_t *values;
};

struct gpu_sampler;

int gpu_sampler_open(struct gpu_sampler **out, const struct gpu_sampler_opts *o, char *err, size_t errlen);
const struct kbase_dev *gpu_sampler_dev(const struct gpu_sampler *g);
const struct gpu_rows *gpu_sampler_rows(const struct gpu_sampler *g);
/* The counter of column c (the family's table, in order). */
const struct mali_counter *gpu_sampler_column(const struct gpu_sampler *g, size_t c);
/* Take what the driver has ready (reader), or dump now (UK dump buffer). */
int gpu_sampler_poll(struct gpu_sampler *g);
/* Final manual dump (the tail after the last periodic one). */
int gpu_sampler_final_dump(struct gpu_sampler *g);
/* The waiting rows as a GpuCounters envelope body: returns a malloc'd frame
 * of the record through the session (declaring the counters when needed),
 * then forgets the rows. 0 or -errno. */
int gpu_sampler_flush(struct gpu_sampler *g);
/* Forget the waiting rows (benchmarks, tests without a session). */
void gpu_sampler_discard(struct gpu_sampler *g);
/* Register the reader fd / dump timer and the flush timer with the loop;
 * records go to s. */
int gpu_sampler_attach(struct gpu_sampler *g, struct session *s, struct loop *l);
void gpu_sampler_print_summary(const struct gpu_sampler *g, FILE *out);
void gpu_sampler_close(struct gpu_sampler *g);

#endif
