/* What the machine says about itself for the physical peaks
 * (common/calib/calib_phys.h): the widest FP SIMD from the ISA flags, and the
 * clock the cores really run at, measured with a chain of dependent integer
 * adds (one add per cycle on every core we target), in thread CPU time so that
 * being descheduled does not lower it. */
#include <math.h>
#include <stdint.h>
#include <time.h>
#include <stdio.h>
#include <string.h>
#if defined(__aarch64__) || defined(__arm__)
#include <sys/auxv.h>
#include <sys/prctl.h>
#endif

#include "calib_bench.h"

static double thread_cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

#define ADD8(x, i)                                                                                           \
	do {                                                                                                 \
		for (int k_ = 0; k_ < 8; k_++) {                                                             \
			x += i;                                                                              \
			__asm__ volatile("" : "+r"(x)); /* no folding: each add waits for the last */        \
		}                                                                                            \
	} while (0)

__attribute__((no_sanitize("address", "undefined"))) double phys_measure_mhz(void)
{
	double best = 0;
	for (int rep = 0; rep < 3; rep++) {
		uint64_t x = (uint64_t)rep;
		const long n = 4000000; /* 32 M adds: about 12 ms at 2.6 GHz */
		double t0 = thread_cpu_s();
		for (long i = 0; i < n; i++)
			ADD8(x, (uint64_t)i);
		double s = thread_cpu_s() - t0;
		__asm__ volatile("" ::"r"(x));
		if (s > 0 && 8.0 * n / s / 1e6 > best)
			best = 8.0 * n / s / 1e6;
	}
	return best > 0 ? best : NAN;
}

void phys_cpu_probe(unsigned cores, double fallback_mhz, struct calib_phys_cpu *out)
{
	*out = (struct calib_phys_cpu){.cores = cores, .mhz = phys_measure_mhz()};
	if (!(out->mhz > 0))
		out->mhz = fallback_mhz;
#if defined(__x86_64__) || defined(__i386__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("avx512f"))
		out->isa = "avx512f", out->fp32_lanes = 16;
	else if (__builtin_cpu_supports("avx2") || __builtin_cpu_supports("avx"))
		out->isa = __builtin_cpu_supports("fma") ? "avx2+fma" : "avx", out->fp32_lanes = 8;
	else
		out->isa = "sse", out->fp32_lanes = 4;
#elif defined(__aarch64__)
	out->isa = "neon (asimd)", out->fp32_lanes = 4;
	if (getauxval(AT_HWCAP) & (1ul << 22)) { /* HWCAP_SVE: lanes from this thread's vector length */
		int vl = prctl(51 /* PR_SVE_GET_VL */, 0, 0, 0, 0);
		if (vl > 0 && (vl & 0xffff) / 4 > 4)
			out->isa = "sve", out->fp32_lanes = (unsigned)(vl & 0xffff) / 4;
	}
#elif defined(__arm__)
	unsigned long hw = getauxval(AT_HWCAP);
	if (hw & (1ul << 12)) /* HWCAP_NEON */
		out->isa = "neon", out->fp32_lanes = 4;
	else
		out->isa = "vfp (scalar)", out->fp32_lanes = 1;
#else
	out->isa = "scalar", out->fp32_lanes = 1;
#endif
}

/* Bound the measured parameters named in meas[] (those present) by the
 * physical value phys (skipped when unknown): add the physical parameter and
 * one "<name>_of_physical" ratio per measured one; a measured value above the
 * physical peak is flagged and said to be impossible (roofline_from_calib()
 * then does not use it). */
static void bound(struct calib_result *r, const char *phys_name, double phys, const char *unit, const char *method,
		  const char *const *meas)
{
	if (!isfinite(phys) || phys <= 0) {
		snprintf(r->note, sizeof(r->note), "%s %s", phys_name, method);
		return;
	}
	cr_param(r, phys_name, phys, unit, method, 0, 1);
	for (; *meas; meas++)
		for (size_t i = 0; i < r->nparams; i++) {
			struct calib_param *p = &r->params[i];
			if (strcmp(p->name, *meas) != 0)
				continue;
			char name[CALIB_NAME_MAX];
			snprintf(name, sizeof(name), "%s_of_physical", p->name);
			if (p->value > phys) {
				p->flagged = true;
				size_t len = strlen(p->method);
				snprintf(p->method + len, sizeof(p->method) - len,
					 "; IMPOSSIBLE: above the physical %.4g %s, not used as a ceiling", phys, unit);
			}
			cr_param(r, name, p->value / phys, "ratio", phys_name, 0, 1);
			break;
		}
}

void phys_annotate(const struct calib_ctx *c, struct calib_result *r)
{
	char method[CALIB_METHOD_MAX];
	struct calib_phys_cpu cpu;
	static const char *const dev_flops[] = {"peak_gflops", "gflops_float1", "gflops_float2", "gflops_float4",
						"gflops_float8", "gflops_float16", NULL};
	static const char *const dev_bytes[] = {"peak_gbps", "bw_copy_gbps", "bw_scale_gbps", "bw_triad_gbps",
						"bw_read_gbps", NULL};
	static const char *const cpu_flops[] = {"cpu_peak_gflops", NULL};
	static const char *const cpu_bytes[] = {"cpu_peak_gbps", "cpu_triad_gbps", "cpu_copy_gbps", NULL};
	if (strcmp(r->benchmark, "peak") == 0 && c->dev) {
		if (c->dev->is_cpu) { /* an OpenCL CPU device (PoCL): the CPU's peak over its compute units */
			phys_cpu_probe(c->dev->compute_units, c->dev->clock_mhz, &cpu);
			bound(r, "phys_peak_gflops", calib_phys_cpu_gflops(&cpu, method, sizeof(method)), "GFLOP/s",
			      method, dev_flops);
			bound(r, "phys_peak_gbps", calib_phys_cpu_gbps(&cpu, method, sizeof(method)), "GB/s", method,
			      dev_bytes);
		} else {
			double v = calib_phys_gpu_gflops(c->dev->name, c->dev->compute_units, c->dev->clock_mhz, method,
							 sizeof(method));
			bound(r, "phys_peak_gflops", v, "GFLOP/s", method, dev_flops);
		}
	} else if (strcmp(r->benchmark, "cpu_peak") == 0) {
		phys_cpu_probe(c->cpus, c->cpu_mhz, &cpu);
		if (isfinite(cpu.mhz))
			cr_param(r, "cpu_clock_measured_mhz", cpu.mhz, "MHz",
				 "dependent integer add chain, 1 add/cycle, thread CPU time (best of 3)", 0, 1);
		bound(r, "cpu_phys_peak_gflops", calib_phys_cpu_gflops(&cpu, method, sizeof(method)), "GFLOP/s", method,
		      cpu_flops);
		bound(r, "cpu_phys_peak_gbps", calib_phys_cpu_gbps(&cpu, method, sizeof(method)), "GB/s", method,
		      cpu_bytes);
	}
}
