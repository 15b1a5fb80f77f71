#include "calib_phys.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

double calib_phys_cpu_gflops(const struct calib_phys_cpu *c, char *method, size_t n)
{
	if (!c->cores || !(c->mhz > 0) || !c->fp32_lanes) {
		snprintf(method, n, "unknown: %s", !c->cores ? "no CPU count" : !(c->mhz > 0) ? "no clock" : "no SIMD width");
		return NAN;
	}
	double v = c->cores * c->mhz * c->fp32_lanes * CALIB_PHYS_FMA_PIPES * 2.0 / 1e3;
	snprintf(method, n, "%u cores x %.0f MHz x %u fp32 lanes (%s) x %u FMA pipes (assumed upper bound) x 2", c->cores,
		 c->mhz, c->fp32_lanes, c->isa ? c->isa : "?", CALIB_PHYS_FMA_PIPES);
	return v;
}

double calib_phys_cpu_gbps(const struct calib_phys_cpu *c, char *method, size_t n)
{
	if (!(c->mem_mbps > 0)) {
		snprintf(method, n,
			 "unknown: the system does not state its memory channels and speed (no SMBIOS type 17"
			 " with a speed): no bound rather than a cache's figure");
		return NAN;
	}
	snprintf(method, n,
		 "%u memory devices (SMBIOS type 17): sum of configured MT/s x data width = %.0f MB/s"
		 " (channels x speed; a device sharing a channel only raises it: an upper bound)",
		 c->mem_devices, c->mem_mbps);
	return c->mem_mbps / 1e3;
}

static unsigned word_at(const unsigned char *raw, size_t len, size_t off)
{
	return off + 2 <= len ? (unsigned)raw[off] | (unsigned)raw[off + 1] << 8 : 0;
}

double calib_phys_smbios17_mbps(const unsigned char *raw, size_t len)
{
	if (len < 4 || raw[0] != 17 || raw[1] > len)
		return 0;
	size_t flen = raw[1]; /* the formatted area; strings follow it */
	unsigned size = word_at(raw, flen, 0x0C), width = word_at(raw, flen, 0x0A);
	unsigned speed = word_at(raw, flen, 0x20);
	if (!speed)
		speed = word_at(raw, flen, 0x15);
	if (!size || width == 0 || width == 0xffff || !speed || speed == 0xffff)
		return 0;
	return (double)speed * width / 8;
}

/* Published per-core FP32 rates. Midgard: arithmetic pipelines per core x 17
 * FP32 FLOPs per pipeline per clock (vec4 FMA + vec4 add + vec4 mul + scalar);
 * Bifrost/Valhall: execution-engine lanes x FMA. Sources: ARM's product pages
 * for the pipeline and engine counts; the 17 FLOPs/pipe figure as ARM gave it
 * in "ARM's Mali Midgard Architecture Explored" (AnandTech, July 2014). */
static const struct calib_phys_gpu gpus[] = {
	{"Mali-T604", 34, "ARM Midgard: 2 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T62", 34, "ARM Midgard (T622/T624/T628): 2 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T678", 68, "ARM Midgard: 4 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T720", 17, "ARM Midgard: 1 arithmetic pipeline x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T760", 34, "ARM Midgard: 2 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T820", 17, "ARM Midgard: 1 arithmetic pipeline x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T830", 34, "ARM Midgard: 2 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T860", 34, "ARM Midgard: 2 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-T880", 51, "ARM Midgard: 3 arithmetic pipelines x 17 FP32 FLOPs/cycle (ARM, via AnandTech 2014)"},
	{"Mali-G71", 24, "ARM Bifrost: 3 execution engines x 4 lanes x FMA (ARM product page)"},
	{"Mali-G72", 24, "ARM Bifrost: 3 execution engines x 4 lanes x FMA (ARM product page)"},
	{"Mali-G76", 48, "ARM Bifrost: 3 execution engines x 8 lanes x FMA (ARM product page)"},
	{"Mali-G77", 64, "ARM Valhall: 2 execution engines x 16 lanes x FMA (ARM product page)"},
	{"Mali-G78", 64, "ARM Valhall: 2 execution engines x 16 lanes x FMA (ARM product page)"},
};

const struct calib_phys_gpu *calib_phys_gpu_lookup(const char *device)
{
	for (size_t i = 0; device && i < sizeof(gpus) / sizeof(gpus[0]); i++)
		if (strstr(device, gpus[i].match))
			return &gpus[i];
	return NULL;
}

double calib_phys_gpu_gflops(const char *device, unsigned compute_units, double mhz, char *method, size_t n)
{
	const struct calib_phys_gpu *g = calib_phys_gpu_lookup(device);
	if (!g) {
		snprintf(method, n, "unknown: no published per-core rate for \"%.60s\" in common/calib/calib_phys.c",
			 device ? device : "");
		return NAN;
	}
	if (!compute_units || !(mhz > 0)) {
		snprintf(method, n, "unknown: the device reports no %s", compute_units ? "clock" : "compute units");
		return NAN;
	}
	snprintf(method, n, "%u cores x %.0f MHz x %g FLOPs/cycle/core: %s", compute_units, mhz,
		 g->fp32_flops_per_cycle_core, g->source);
	return compute_units * mhz * g->fp32_flops_per_cycle_core / 1e3;
}
