#include "store_kinds.h"

#include <stddef.h>

extern const struct store_kind store_kind_counters;
extern const struct store_kind store_kind_heartbeat;
extern const struct store_kind store_kind_samples;
extern const struct store_kind store_kind_cl_command;
extern const struct store_kind store_kind_cl_batch;
extern const struct store_kind store_kind_target_end;
extern const struct store_kind store_kind_calibration;
extern const struct store_kind store_kind_trace_window;
extern const struct store_kind store_kind_gpu_counters;
extern const struct store_kind store_kind_kernel_symbols;
extern const struct store_kind store_kind_vdso;
extern const struct store_kind store_kind_perf_map;

const struct store_kind *const store_kinds[] = {
	&store_kind_counters,
	&store_kind_heartbeat,
	&store_kind_samples,
	&store_kind_cl_command,
	&store_kind_cl_batch,
	&store_kind_target_end,
	&store_kind_calibration,
	&store_kind_trace_window,
	&store_kind_gpu_counters,
	&store_kind_kernel_symbols,
	&store_kind_vdso,
	&store_kind_perf_map,
	NULL,
};

const struct store_kind *store_kind_find(Prof__Envelope__BodyCase body_case)
{
	for (size_t i = 0; store_kinds[i]; i++)
		if (store_kinds[i]->body_case == body_case)
			return store_kinds[i];
	return NULL;
}
