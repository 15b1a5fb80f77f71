/* Where a roofline dot's work W and traffic Q come from. Pure: no I/O.
 *
 * CPU (per profiled process, from its counters): W from floating-point
 * events (x86 fp_arith_inst_retired.* weighted by lanes; Arm VFP_SPEC,
 * ASE_SPEC (x4 lanes, assumed), FP_FIXED_OPS_SPEC / FP_SCALE_OPS_SPEC), Q
 * from last-level refills and write-backs (Arm L2D_CACHE_REFILL/_WB, generic
 * LLC-load-misses/LLC-store-misses, else cache-misses) x the line size.
 *
 * OpenCL kernels, per-kernel model file (--kernel-model FILE), one kernel a line:
 *     # comment
 *     KERNEL_NAME ops=OPS_PER_WORK_ITEM bytes=BYTES_PER_WORK_ITEM
 * W = ops x work-items, Q = bytes x work-items of every enqueue. */
#ifndef COLLECTOR_REPORT_WORK_MODEL_H
#define COLLECTOR_REPORT_WORK_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* What one counter contributes. */
struct work_event {
	double flops_per_count; /* > 0: a floating-point event */
	double lines_per_count; /* > 0: a traffic event (x line size) */
	int priority;		/* traffic: lower wins (only the best kind is summed) */
};
/* Classify an event by name (case-insensitive, '-' = '_'); false if it is neither. */
bool work_event_classify(const char *name, struct work_event *out);

struct work_cpu {
	double W, Q, seconds;
	bool have_flops, have_bytes;
	char flops_from[128], bytes_from[128]; /* event names used */
};
/* Accumulate one event's total into w (call for every event, then work_cpu_finish). */
void work_cpu_add(struct work_cpu *w, const char *name, uint64_t total, int *best_priority);
/* Q = lines x line_bytes. */
void work_cpu_finish(struct work_cpu *w, double line_bytes);

#include "kernel_model.h" /* the per-kernel model file (common/) */

#endif
