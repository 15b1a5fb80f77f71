#include "calib_run.h"
#include "generated/config.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "net.h"

/* A static musl agent has no in-process OpenCL (no dlopen): it runs the OpenCL benchmarks in
 * prof-clhelper (calib_helper.c), so their code is left out of it (the board size cap). The
 * helper itself is built from the same (static) configuration for the board's C library: glibc,
 * or bionic on Android, where it keeps them. */
#if defined(CONFIG_STATIC) && !defined(__GLIBC__) && !defined(__BIONIC__)
#define CL_BENCH(fn) NULL
#define CALIB_INPROC_CL 0
#else
#define CL_BENCH(fn) fn
#define CALIB_INPROC_CL 1
#endif

#if CALIB_INPROC_CL
static int bench_device(struct calib_ctx *c, struct calib_result *r)
{
	const struct cl_dev_info *d = c->dev;
	if (d->is_cpu && c->clock_mhz != d->clock_mhz) {
		/* PoCL reports the base clock; its work-items run on cores at the running clock */
		cr_param(r, "clock_mhz", c->clock_mhz, "MHz", c->clock_method, c->clock_spread, 1);
		cr_param(r, "clock_base_mhz", d->clock_mhz, "MHz",
			 "clGetDeviceInfo(CL_DEVICE_MAX_CLOCK_FREQUENCY): the base clock, not the one the cores run", 0, 1);
	} else {
		cr_param(r, "clock_mhz", d->clock_mhz, "MHz", "clGetDeviceInfo(CL_DEVICE_MAX_CLOCK_FREQUENCY)", 0, 1);
	}
	cr_param(r, "max_work_group_size", (double)d->max_wg, "work-items", "clGetDeviceInfo(CL_DEVICE_MAX_WORK_GROUP_SIZE)", 0, 1);
	cr_param(r, "global_mem_bytes", (double)d->global_mem, "bytes", "clGetDeviceInfo(CL_DEVICE_GLOBAL_MEM_SIZE)", 0, 1);
	return 0;
}
#endif

struct bench {
	const char *name;
	const char *what;
	bool opencl;
	int (*run)(struct calib_ctx *c, struct calib_result *r);
};

static const struct bench benches[] = {
	{"device", "device queries", true, CL_BENCH(bench_device)},
	{"arith", "arithmetic latency and throughput per op and type", true, CL_BENCH(bench_arith)},
	{"compute_units", "compute units (work-group staircase)", true, CL_BENCH(bench_compute_units)},
	{"registers", "registers per work-item and per CU (spill cliffs)", true, CL_BENCH(bench_registers)},
	{"granularity", "minimum parallel granularity (branch-order test)", true, CL_BENCH(bench_granularity)},
	{"cache", "cache line, sizes, latencies, associativity (pointer chase)", true, CL_BENCH(bench_cache)},
	{"peak", "device roofline: peak GFLOP/s and GB/s", true, CL_BENCH(bench_peak)},
	{"cpu_peak", "CPU roofline: FMA chains and STREAM triad (pthreads)", false, bench_cpu_peak},
	{"mem_slots", "CPU memory latency alpha0 and issue slots m (EDAN)", false, bench_mem_slots},
};
#define NBENCH (sizeof(benches) / sizeof(benches[0]))

const char *const calib_bench_names[] = {"device", "arith", "compute_units", "registers", "granularity",
					 "cache", "peak", "cpu_peak", "mem_slots", NULL};

int calib_bench_is_opencl(const char *name)
{
	for (size_t i = 0; i < NBENCH; i++)
		if (strcmp(benches[i].name, name) == 0)
			return benches[i].opencl;
	return -1;
}

static bool selected(const char *only, const char *name)
{
	if (!only)
		return true;
	size_t n = strlen(name);
	for (const char *s = only; *s;) {
		const char *e = strchr(s, ',');
		size_t len = e ? (size_t)(e - s) : strlen(s);
		if (len == n && strncmp(s, name, n) == 0)
			return true;
		s += len + (e ? 1 : 0);
	}
	return false;
}

static double cpu_mhz(void)
{
	static const char *const files[] = {"/sys/devices/system/cpu/cpu0/cpufreq/base_frequency",
					    "/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq"};
	FILE *f;
	for (size_t i = 0; i < 2; i++) {
		double khz = 0;
		if (!(f = fopen(files[i], "r")))
			continue;
		if (fscanf(f, "%lf", &khz) != 1)
			khz = 0;
		fclose(f);
		if (khz > 0)
			return khz / 1e3;
	}
	f = fopen("/proc/cpuinfo", "r");
	char line[256];
	double mhz = NAN;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "cpu MHz", 7) == 0) {
			const char *colon = strchr(line, ':');
			if (colon)
				mhz = strtod(colon + 1, NULL);
			break;
		}
	if (f)
		fclose(f);
	return mhz > 0 ? mhz : NAN;
}

int calib_run_all(const struct calib_run_opts *o, struct calib_model *model, calib_sink_fn sink, void *arg)
{
	FILE *pg = o->progress;
	struct calib_ctx c = {.quick = o->quick, .reps = o->reps ? o->reps : o->quick ? 3 : 5, .known = model};
	if (c.reps > CR_MAX_REPS)
		c.reps = CR_MAX_REPS;
	c.cpu_base_mhz = cpu_mhz();
	struct phys_clock clk;
	phys_measure_clock(&clk);
	c.cpu_mhz = isfinite(clk.best) ? clk.best : c.cpu_base_mhz;
	c.clock_spread = isfinite(clk.best) ? clk.spread : 0;
	snprintf(c.clock_method, sizeof(c.clock_method),
		 "running clock: dependent integer add chain (1 add/cycle) against CLOCK_MONOTONIC, best of %u bursts"
		 " of 1 M adds (median burst %.0f MHz)",
		 clk.bursts, clk.median);
	long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
	c.cpus = ncpu > 0 ? (unsigned)ncpu : 1;
	char err[512] = "";
	bool want_cl = false;
	for (size_t i = 0; i < NBENCH; i++)
		want_cl |= benches[i].opencl && selected(o->only, benches[i].name);
	int via_helper = 0; /* > 0: the helper ran the OpenCL benchmarks (that many results) */
	/* the helper path only where OpenCL is compiled in (the minimal agent has no OpenCL code at all) */
#ifdef CONFIG_AGENT_OPENCL
	if (want_cl && !o->in_helper && calib_helper_wanted()) {
		via_helper = calib_helper_run(o, model, sink, arg, err, sizeof(err));
		if (via_helper < 0) {
			log_warn("OpenCL benchmarks skipped: %s", err);
			snprintf(model->device, sizeof(model->device), "cpu");
		}
		want_cl = false;
	}
#endif
	if (CALIB_INPROC_CL && want_cl && cl_env_open(o->device, &c.cl, err, sizeof(err)) == 0) {
		c.dev = cl_env_info(c.cl);
		c.clock_mhz = c.dev->is_cpu && isfinite(clk.best) ? c.cpu_mhz : c.dev->clock_mhz;
		snprintf(model->device, sizeof(model->device), "%s", c.dev->name);
		if (pg)
			fprintf(pg, "calibrate: OpenCL device \"%s\" (%s, %u compute units, %u MHz), %s, %u repetitions\n",
				c.dev->name, c.dev->is_cpu ? "CPU" : "GPU or accelerator", c.dev->compute_units,
				c.dev->clock_mhz, o->quick ? "quick" : "full", c.reps);
	} else if (want_cl) {
		log_warn("OpenCL benchmarks skipped: %s", err);
		snprintf(model->device, sizeof(model->device), "cpu");
	}
	struct calib_result *r = malloc(sizeof(*r));
	if (!r) {
		cl_env_close(c.cl);
		return -ENOMEM;
	}
	unsigned total = 0, k = 0, done = via_helper > 0 ? (unsigned)via_helper : 0;
	for (size_t i = 0; i < NBENCH; i++)
		total += selected(o->only, benches[i].name) && !(via_helper > 0 && benches[i].opencl);
	if (via_helper > 0 && pg)
		fprintf(pg, "calibrate: %d OpenCL benchmark(s) ran in prof-clhelper%s\n", via_helper,
			total ? "; the CPU ones run here" : "");
	for (size_t i = 0; i < NBENCH; i++) {
		const struct bench *b = &benches[i];
		if (!selected(o->only, b->name) || (via_helper > 0 && b->opencl))
			continue;
		k++;
		memset(r, 0, sizeof(*r));
		snprintf(r->benchmark, sizeof(r->benchmark), "%s", b->name);
		r->quick = o->quick;
		if (b->opencl) {
			snprintf(r->device, sizeof(r->device), "%s", c.dev ? c.dev->name : "");
			r->clock_mhz = c.dev ? c.clock_mhz : 0;
		} else {
			snprintf(r->device, sizeof(r->device), "cpu");
			r->clock_mhz = isfinite(c.cpu_mhz) ? c.cpu_mhz : 0;
		}
		if (pg)
			fprintf(pg, "[%u/%u] %s: %s ...\n", k, total, b->name, b->what);
		if (b->opencl && (!c.cl || !b->run)) {
			if (pg)
				fprintf(pg, "  skipped: no OpenCL device (%s)\n", err);
			continue;
		}
		uint64_t t0 = clock_mono_ns();
		int rc = b->run(&c, r);
		r->seconds = (double)(clock_mono_ns() - t0) / 1e9;
		if (b->opencl == false && isfinite(c.cpu_mhz) && strcmp(b->name, "cpu_peak") == 0) {
			cr_param(r, "cpu_clock_mhz", c.cpu_mhz, "MHz", c.clock_method, c.clock_spread, 1);
			if (isfinite(c.cpu_base_mhz))
				cr_param(r, "cpu_clock_base_mhz", c.cpu_base_mhz, "MHz",
					 "base: cpufreq base_frequency, else cpuinfo_max_freq, else /proc/cpuinfo cpu MHz", 0, 1);
		}
		if (rc == 0)
			phys_annotate(&c, r);
		if (pg) {
			for (size_t j = 0; j < r->nparams; j++) {
				const struct calib_param *p = &r->params[j];
				fprintf(pg, "  %-30s %12.6g %-12s spread %5.1f%%  confidence %.2f%s\n", p->name, p->value,
					p->unit, isfinite(p->spread) ? p->spread * 100 : 999.9, p->confidence,
					p->flagged ? "  FLAGGED" : "");
			}
			if (r->note[0])
				fprintf(pg, "  note: %s\n", r->note);
			if (rc < 0 || r->skipped[0])
				fprintf(pg, "  %s: %s\n", rc < 0 ? "failed" : "partly failed", r->skipped);
			fprintf(pg, "  (%.1f s)\n", r->seconds);
		}
		if (r->nparams == 0)
			continue;
		for (size_t j = 0; j < r->nparams; j++)
			calib_model_set(model, &r->params[j]);
		done++;
		if (sink)
			sink(arg, r);
	}
	free(r);
	cl_env_close(c.cl);
	return done > 0 ? (int)done : -ENODATA;
}

