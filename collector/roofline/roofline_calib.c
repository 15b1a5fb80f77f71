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

/* A calibrated ceiling above the physical peak of its kind (common/calib/calib_phys.h)
 * comes from a wrong benchmark: it is left out. */
static const char *phys_param(bool cpu, enum roofline_ceiling_kind kind)
{
	return kind == ROOFLINE_COMPUTE ? (cpu ? "cpu_phys_peak_gflops" : "phys_peak_gflops")
					: (cpu ? "cpu_phys_peak_gbps" : "phys_peak_gbps");
}

static bool possible(const struct calib_model *m, bool cpu, enum roofline_ceiling_kind kind, double v)
{
	double p = calib_model_value(m, phys_param(cpu, kind), NAN);
	return !(isfinite(p) && p > 0 && v > p);
}

/* Add a ceiling unless it is impossible; counts into *added. */
static void add(struct roofline *r, const struct calib_model *m, bool cpu, enum roofline_ceiling_kind kind,
		const char *name, double v, const char *param, int *added, int *impossible)
{
	if (!isfinite(v) || v <= 0)
		return;
	if (!possible(m, cpu, kind, v)) {
		(*impossible)++;
		return;
	}
	if (roofline_add(r, kind, name, v, param) == 0)
		(*added)++;
}

int roofline_from_calib(const struct calib_model *m, bool cpu, struct roofline *r)
{
	const struct map *mp = cpu ? cpu_map : gpu_map;
	size_t n = cpu ? sizeof(cpu_map) / sizeof(cpu_map[0]) : sizeof(gpu_map) / sizeof(gpu_map[0]);
	r->n = 0;
	snprintf(r->device, sizeof(r->device), "%s%s%.*s", cpu ? "CPU" : "GPU", m->device[0] && !cpu ? ": " : "",
		 cpu ? 0 : 40, m->device);
	int added = 0, impossible = 0;
	for (size_t i = 0; i < n; i++)
		add(r, m, cpu, mp[i].kind, mp[i].name, calib_model_value(m, mp[i].param, NAN), mp[i].param, &added,
		    &impossible);
	if (!cpu) {
		/* per precision, from the arithmetic throughput benchmarks: ops/cycle/CU x CUs x clock */
		double cus = calib_model_value(m, "compute_units", NAN), mhz = calib_model_value(m, "clock_mhz", NAN);
		for (size_t i = 0; i < sizeof(tput_map) / sizeof(tput_map[0]); i++) {
			double t = calib_model_value(m, tput_map[i].param, NAN);
			add(r, m, cpu, ROOFLINE_COMPUTE, tput_map[i].name, t * tput_map[i].flops * cus * mhz / 1e3,
			    tput_map[i].param, &added, &impossible);
		}
	}
	/* every measured peak of a kind impossible: the physical peak is the roof */
	for (int k = 0; impossible && k < 2; k++) {
		enum roofline_ceiling_kind kind = k ? ROOFLINE_BANDWIDTH : ROOFLINE_COMPUTE;
		bool have = false;
		for (size_t i = 0; i < r->n; i++)
			have |= r->c[i].kind == kind;
		const char *phys = phys_param(cpu, kind);
		double p = calib_model_value(m, phys, NAN);
		if (!have && isfinite(p) && p > 0 &&
		    roofline_add(r, kind, "physical peak (calibrated one impossible)", p, phys) == 0)
			added++;
	}
	return added;
}
