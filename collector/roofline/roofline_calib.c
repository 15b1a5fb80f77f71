/* Roofline ceilings from a calibrated machine model (parameter names of
 * collector/calib/README.md; names not present are skipped). */
#include <math.h>
#include <stdio.h>

#include "calib/calib_model.h"
#include "roofline.h"

struct map {
	enum roofline_ceiling_kind kind;
	const char *param, *name;
};

static const struct map gpu_map[] = {
	{ROOFLINE_COMPUTE, "peak_gflops", "peak (best vector width)"},
	{ROOFLINE_COMPUTE, "gflops_nofma", "no FMA"},
	{ROOFLINE_COMPUTE, "gflops_float1", "scalar float (no SIMD)"},
	{ROOFLINE_BANDWIDTH, "peak_gbps", "DRAM (best kernel)"},
	{ROOFLINE_BANDWIDTH, "bw_copy_gbps", "DRAM copy"},
	{ROOFLINE_BANDWIDTH, "bw_scale_gbps", "DRAM scale"},
	{ROOFLINE_BANDWIDTH, "bw_triad_gbps", "DRAM triad"},
	{ROOFLINE_BANDWIDTH, "bw_read_gbps", "DRAM read"},
	{ROOFLINE_BANDWIDTH, "l1_gbps", "L1"},
	{ROOFLINE_BANDWIDTH, "l2_gbps", "L2"},
	{ROOFLINE_BANDWIDTH, "l3_gbps", "L3"},
	{ROOFLINE_BANDWIDTH, "l4_gbps", "L4"},
};

static const struct map cpu_map[] = {
	{ROOFLINE_COMPUTE, "cpu_peak_gflops", "peak"},
	{ROOFLINE_COMPUTE, "cpu_nofma_gflops", "no FMA"},
	{ROOFLINE_COMPUTE, "cpu_scalar_gflops", "scalar (no SIMD)"},
	{ROOFLINE_BANDWIDTH, "cpu_peak_gbps", "DRAM (best kernel)"},
	{ROOFLINE_BANDWIDTH, "cpu_triad_gbps", "DRAM triad"},
	{ROOFLINE_BANDWIDTH, "cpu_copy_gbps", "DRAM copy"},
	{ROOFLINE_BANDWIDTH, "cpu_l1_gbps", "L1"},
	{ROOFLINE_BANDWIDTH, "cpu_l2_gbps", "L2"},
	{ROOFLINE_BANDWIDTH, "cpu_l3_gbps", "L3"},
	{ROOFLINE_BANDWIDTH, "cpu_l4_gbps", "L4"},
};

/* GFLOP/s = ops/cycle/CU x flops per op x compute_units x clock_mhz / 1000 */
static const struct {
	const char *param, *name;
	double flops;
} tput_map[] = {
	{"tput_float_mad_per_cycle_cu", "float mad", 2},
	{"tput_float_add_per_cycle_cu", "float add (no FMA)", 1},
	{"tput_half_mad_per_cycle_cu", "half mad", 2},
	{"tput_half_add_per_cycle_cu", "half add (no FMA)", 1},
};

int roofline_from_calib(const struct calib_model *m, bool cpu, struct roofline *r)
{
	const struct map *mp = cpu ? cpu_map : gpu_map;
	size_t n = cpu ? sizeof(cpu_map) / sizeof(cpu_map[0]) : sizeof(gpu_map) / sizeof(gpu_map[0]);
	r->n = 0;
	snprintf(r->device, sizeof(r->device), "%s%s%.*s", cpu ? "CPU" : "GPU", m->device[0] && !cpu ? ": " : "",
		 cpu ? 0 : 40, m->device);
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		double v = calib_model_value(m, mp[i].param, NAN);
		if (!isfinite(v) || v <= 0)
			continue;
		if (roofline_add(r, mp[i].kind, mp[i].name, v, mp[i].param) == 0)
			added++;
	}
	if (cpu)
		return added;
	/* per precision, from the arithmetic throughput benchmarks: ops/cycle/CU x CUs x clock */
	double cus = calib_model_value(m, "compute_units", NAN), mhz = calib_model_value(m, "clock_mhz", NAN);
	for (size_t i = 0; i < sizeof(tput_map) / sizeof(tput_map[0]); i++) {
		double t = calib_model_value(m, tput_map[i].param, NAN);
		double v = t * tput_map[i].flops * cus * mhz / 1e3;
		if (isfinite(v) && v > 0 && roofline_add(r, ROOFLINE_COMPUTE, tput_map[i].name, v, tput_map[i].param) == 0)
			added++;
	}
	return added;
}
