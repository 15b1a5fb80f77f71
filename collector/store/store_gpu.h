/* Mali GPU counter records in the store (store_gpu.c): gpu_info (the GPU
 * of a session), gpu_counters (interned counter names with block, word and
 * role), gpu_samples (non-zero increments per dump interval and counter),
 * gpu_records (rows and dumps per record), and loading a session's series. */
#ifndef COLLECTOR_STORE_GPU_H
#define COLLECTOR_STORE_GPU_H

#include <stddef.h>
#include <stdint.h>

#include "store.h"

struct store_gpu_col {
	uint32_t id, block, index, role;
	char name[64];
};

struct store_gpu_series {
	char family[32], arch[32], iface[32];
	uint32_t gpu_id, bus_bytes, interval_ns, num_l2;
	uint64_t shader_present;
	uint64_t dumps, late_dumps, records;
	size_t ncols, nrows;
	struct store_gpu_col *cols;
	uint64_t *t0, *t1; /* nrows intervals (ns after Hello.base_ns), ordered */
	uint64_t *values;  /* nrows * ncols */
};

/* 0 with the series (nrows 0 / ncols 0 when the session has no GPU
 * counters), or -errno. */
int store_gpu_load(struct store *s, int64_t sid, struct store_gpu_series *g);
void store_gpu_free(struct store_gpu_series *g);
/* Column of the first counter with that role (enum mali_role values), or -1. */
int store_gpu_col_role(const struct store_gpu_series *g, uint32_t role);

#endif
