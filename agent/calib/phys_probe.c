/* What the machine says about itself for the physical peaks
 * (common/calib/calib_phys.h): the widest FP SIMD from the ISA flags, and the
 * clock the cores really run at: a chain of dependent integer adds (one add
 * per cycle on every core we target) timed against the wall clock
 * (CLOCK_MONOTONIC) in short bursts; the best burst is the running (boost)
 * clock, since being descheduled or slowed only ever lowers a burst's rate.
 * Thread CPU time (the old way) is accounted in ticks and under a VM it
 * counts stolen time: it read 2.9-3.7 GHz where the cores ran 4.1. */
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

static double wall_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* One burst: 2^16 iterations x 16 dependent register-register adds = 1 M adds.
 * Written in assembly where we know the ISA, so the chain is the same whatever
 * the compiler does: a C chain compiled at -O1 (the sanitizer build) kept the
 * sum in a register pair moved back and forth each add and ran one taken
 * branch per add; on a CI host where move elimination or the loop buffer did
 * not help, that read 2.1 GHz where the cores ran 3.45 (CI of 0699953).
 * Register, not immediate, operands: some cores (Intel Golden Cove) fold
 * chains of small-immediate adds at rename, faster than one per cycle. */
#define PHYS_ADD16(op) op op op op op op op op op op op op op op op op

/* The whole loop in one asm statement where we know the ISA: no compiler
 * moves, spills or branch layout inside the chain. */
__attribute__((no_sanitize("address", "undefined"))) static uintptr_t add_burst(uintptr_t x, uintptr_t k)
{
	uintptr_t n = (uintptr_t)1 << 16;
#if defined(__x86_64__) || defined(__i386__)
	__asm__ volatile("1:\n\t" PHYS_ADD16("add %2, %0\n\t") "dec %1\n\tjnz 1b"
			 : "+r"(x), "+r"(n)
			 : "r"(k)
			 : "cc");
#elif defined(__aarch64__)
	__asm__ volatile("1:\n\t" PHYS_ADD16("add %0, %0, %2\n\t") "subs %1, %1, #1\n\tb.ne 1b"
			 : "+r"(x), "+r"(n)
			 : "r"(k)
			 : "cc");
#elif defined(__arm__)
	__asm__ volatile("1:\n\t" PHYS_ADD16("add %0, %0, %2\n\t") "subs %1, %1, #1\n\tbne 1b"
			 : "+r"(x), "+r"(n)
			 : "r"(k)
			 : "cc");
#else
	for (; n; n--)
		for (int j = 0; j < 16; j++) {
			x += k;
			__asm__ volatile("" : "+r"(x)); /* no folding: each add waits for the last */
		}
#endif
	return x;
}

__attribute__((no_sanitize("address", "undefined"))) void phys_measure_clock(struct phys_clock *out)
{
	/* 1 M adds a burst: 0.25 ms at 4 GHz, 2 ms at 500 MHz; at most
	 * PHYS_CLOCK_BURSTS bursts or 150 ms, whichever comes first */
	const double adds = 16.0 * (double)(1L << 16);
	double mhz[PHYS_CLOCK_BURSTS];
	unsigned k = 0;
	double end = wall_s() + 0.15;
	uintptr_t x = 1;
	while (k < PHYS_CLOCK_BURSTS && (k < 8 || wall_s() < end)) {
		double t0 = wall_s();
		x = add_burst(x, (uintptr_t)k | 1);
		double s = wall_s() - t0;
		if (s > 0)
			mhz[k++] = adds / s / 1e6;
	}
	__asm__ volatile("" ::"r"(x));
	*out = (struct phys_clock){.bursts = k, .best = NAN, .median = NAN};
	if (!k)
		return;
	struct calib_stat st;
	calib_stat(mhz, k, &st);
	double best = 0, second = 0;
	for (unsigned i = 0; i < k; i++)
		if (mhz[i] > best)
			second = best, best = mhz[i];
		else if (mhz[i] > second)
			second = mhz[i];
	out->best = best;
	out->median = st.median;
	/* the best two bursts agree when the best is the clock, not a timer glitch */
	out->spread = second > 0 ? (best - second) / 2 / best : 1;
}

double phys_measure_mhz(void)
{
	struct phys_clock c;
	phys_measure_clock(&c);
	return c.best;
}

void phys_cpu_probe(unsigned cores, double mhz, struct calib_phys_cpu *out)
{
	*out = (struct calib_phys_cpu){.cores = cores, .mhz = mhz > 0 ? mhz : phys_measure_mhz()};
	phys_mem_probe(out);
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
					 "; IMPOSSIBLE: above the physical bound %.4g %s: a bug in the bound (%s)"
					 " or the benchmark measured something else; not used as a ceiling",
					 phys, unit, phys_name);
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
			phys_cpu_probe(c->dev->compute_units, c->clock_mhz, &cpu);
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
		bound(r, "cpu_phys_peak_gflops", calib_phys_cpu_gflops(&cpu, method, sizeof(method)), "GFLOP/s", method,
		      cpu_flops);
		bound(r, "cpu_phys_peak_gbps", calib_phys_cpu_gbps(&cpu, method, sizeof(method)), "GB/s", method,
		      cpu_bytes);
	}
}
