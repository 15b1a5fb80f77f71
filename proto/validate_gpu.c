#include "validate_gpu.h"
#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static int str_ok(const char *s, size_t max)
{
	return s && strlen(s) <= max;
}

int validate_gpu_counters(const Prof__GpuCounters *g, char *err, size_t errlen)
{
	size_t cols = g->n_counter_ids, rows = g->n_t_ns;
	if (cols > VALIDATE_GPU_MAX_COLS)
		return fail(err, errlen, "gpu_counters: %zu columns (max %u)", cols, VALIDATE_GPU_MAX_COLS);
	if (rows > VALIDATE_GPU_MAX_ROWS)
		return fail(err, errlen, "gpu_counters: %zu rows (max %u)", rows, VALIDATE_GPU_MAX_ROWS);
	if (g->n_values != rows * cols)
		return fail(err, errlen, "gpu_counters: %zu values for %zu rows x %zu columns", g->n_values,
			    rows, cols);
	for (size_t i = 0; i < cols; i++) {
		if (g->counter_ids[i] == 0)
			return fail(err, errlen, "gpu_counters: column id 0");
		for (size_t j = 0; j < i; j++)
			if (g->counter_ids[j] == g->counter_ids[i])
				return fail(err, errlen, "gpu_counters: column %u twice", g->counter_ids[i]);
	}
	uint64_t t = g->t0_ns;
	if (t > (uint64_t)INT64_MAX)
		return fail(err, errlen, "gpu_counters: t0 out of range");
	for (size_t r = 0; r < rows; r++) {
		if (g->t_ns[r] == 0)
			return fail(err, errlen, "gpu_counters: row %zu has length 0", r);
		if (g->t_ns[r] > (uint64_t)INT64_MAX - t)
			return fail(err, errlen, "gpu_counters: row %zu ends past the clock's range", r);
		t += g->t_ns[r];
	}
	for (size_t i = 0; i < g->n_values; i++)
		if (g->values[i] > (uint64_t)INT64_MAX)
			return fail(err, errlen, "gpu_counters: value out of range");
	if (g->n_new_counters > VALIDATE_GPU_MAX_COLS)
		return fail(err, errlen, "gpu_counters: %zu declarations (max %u)", g->n_new_counters,
			    VALIDATE_GPU_MAX_COLS);
	for (size_t i = 0; i < g->n_new_counters; i++) {
		const Prof__GpuCounterDesc *d = g->new_counters[i];
		if (d->id == 0 || !d->name || !d->name[0] || !str_ok(d->name, VALIDATE_GPU_MAX_NAME))
			return fail(err, errlen,
				    "gpu_counters: declaration %zu without id or with a bad name", i);
		if (d->block > 3 || d->index < 4 || d->index > 63 || d->role > 31)
			return fail(err, errlen, "gpu_counters: counter %u at block %u word %u role %u",
				    d->id, d->block, d->index, d->role);
		for (size_t j = 0; j < i; j++)
			if (g->new_counters[j]->id == d->id)
				return fail(err, errlen, "gpu_counters: counter %u declared twice", d->id);
	}
	if (g->n_new_counters && !g->info)
		return fail(err, errlen, "gpu_counters: declarations without gpu info");
	if (g->info) {
		const Prof__GpuInfo *in = g->info;
		if (!str_ok(in->family, VALIDATE_GPU_MAX_NAME) || !str_ok(in->arch, VALIDATE_GPU_MAX_NAME) ||
		    !str_ok(in->interface, VALIDATE_GPU_MAX_NAME))
			return fail(err, errlen, "gpu_counters: gpu info strings too long");
		if (in->bus_bytes == 0 || in->bus_bytes > 1024)
			return fail(err, errlen, "gpu_counters: bus width %u bytes", in->bus_bytes);
	}
	if (g->late_dumps > g->dumps)
		return fail(err, errlen, "gpu_counters: %u late of %u dumps", g->late_dumps, g->dumps);
	return 0;
}
