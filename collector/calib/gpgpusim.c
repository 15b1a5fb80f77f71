/* GPGPU-sim configuration from a machine model (calib_io.h). Every option
 * that matters is written, with a comment saying whether it was measured
 * or is a fallback and why; values are mapped onto what GPGPU-sim means by
 * them (collector/calib/README.md) and checked against the version's limits
 * (gpgpusim_limits.c) before anything is written. */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "calib/calib_io.h"
#include "calib/gpgpusim_limits.h"

#define DEFAULT_ICNT "config_calib_islip.icnt"

/* Modelled memory path, in core cycles (all four clock domains are the
 * core clock when it is measured): ROP queue (-rop_latency), the one-stage
 * butterfly both ways (1-flit request, 5-flit 136 B reply, one router each
 * way), and a DRAM row miss of the timing written (tRP + tRCD + CL + BL/2). */
#define ROP_LATENCY 85
#define DRAM_TIMING                                                                                              \
	"4:2:8:12:21:13:34:9:4:5:13:1:0:0" /* nbk:tCCD:tRRD:tRCD:tRAS:tRP:tRC:CL:WL:tCDLR:tWR:nbkgrp:tCCDL:tRTPL \
					    */
#define DRAM_BURST 4
#define ICNT_ROUND_TRIP 8
#define DRAM_ROW_MISS (13 + 12 + 9 + DRAM_BURST / 2)

struct em {
	const struct calib_model *m;
	struct calib_gpgpusim_opts *o;
	FILE *f;
	char *err;
	size_t errlen;
	int rc;
	char written[64][64];
	size_t nwritten;
	char flagged[32][CALIB_NAME_MAX]; /* FLAGGED parameters met, each counted once */
	size_t nflagged;
	double warp; /* W of -gpgpu_shader_core_pipeline */
};

static void opt(struct em *e, const char *name, const char *value, const char *fmt, ...)
{
	char why[1600];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(why, sizeof(why), fmt, ap);
	va_end(ap);
	fprintf(e->f, "\n# %s\n%s %s\n", why, name, value);
	if (e->nwritten < 64)
		snprintf(e->written[e->nwritten++], 64, "%s", name);
}

/* A parameter that may be used: present, finite, > 0, and not FLAGGED
 * (unless use_flagged). note gets what happened to a FLAGGED one. */
static const struct calib_param *param(struct em *e, const char *name, char *note, size_t nlen)
{
	const struct calib_param *p = calib_model_get(e->m, name);
	if (!p || !isfinite(p->value) || p->value <= 0)
		return NULL;
	if (p->flagged && strstr(p->method, "lower bound")) {
		/* not a measurement: never an option, even with --use-flagged (issue 37) */
		snprintf(note, nlen, "; %s = %g %s is a FLAGGED lower bound (%s): never used", name, p->value, p->unit,
			 p->method);
		return NULL;
	}
	if (p->flagged) {
		bool seen = false;
		for (size_t i = 0; i < e->nflagged && !seen; i++)
			seen = strcmp(e->flagged[i], name) == 0;
		if (!seen && e->nflagged < 32) {
			snprintf(e->flagged[e->nflagged++], CALIB_NAME_MAX, "%s", name);
			e->o->flagged_out++;
		}
		if (!e->o->use_flagged) {
			char sp[48];
			if (isfinite(p->spread))
				snprintf(sp, sizeof(sp), "spread %.0f%%", p->spread * 100);
			else
				snprintf(sp, sizeof(sp), "repetitions disagree");
			snprintf(note, nlen, "; %s = %g %s is FLAGGED (%s, confidence %.2f): not used", name,
				 p->value, p->unit, sp, p->confidence);
			return NULL;
		}
		snprintf(note, nlen,
			 "; FLAGGED (spread %.0f%%, confidence %.2f), used because of --use-flagged",
			 p->spread * 100, p->confidence);
	}
	return p;
}

/* Why a parameter is not used: its FLAGGED note, or "NAME not measured". */
static const char *missing(const char *name, const char *note, char *buf, size_t len)
{
	if (note[0])
		snprintf(buf, len, "%s", note + 2);
	else
		snprintf(buf, len, "%s not measured", name);
	return buf;
}

/* A model whose source says "published" (the seed's Mali-T628 values) was not measured here. */
static const char *label(const struct em *e)
{
	return strncmp(e->m->source, "published", 9) == 0 ? "published" : "measured";
}

static void src(const struct em *e, char *buf, size_t len, const struct calib_param *p)
{
	snprintf(buf, len, "%s: %s = %g %s (%s)", label(e), p->name, p->value, p->unit, p->method);
}

/* Hold v to a limit: *v > max (or < min when is_min). Refuse with the limit
 * named, or clamp and say so in note. */
static int hold(struct em *e, enum gs_limit_id id, double *v, double bound, bool is_min, const char *what,
		char *note, size_t nlen)
{
	if (is_min ? *v >= bound : *v <= bound)
		return 0;
	const struct gs_limit *l = gs_limit(id);
	const char *source = e->o->version == 4 ? l->source4 : l->source3;
	if (!e->o->clamp) {
		snprintf(e->err, e->errlen, "%s %s %g: GPGPU-sim %s allows %s %g (%s: %s); --clamp writes %g",
			 l->option, what, *v, gs_version_name(e->o->version), is_min ? "at least" : "at most",
			 bound, l->rule, source, bound);
		e->rc = -ERANGE;
		return -ERANGE;
	}
	size_t used = strlen(note);
	snprintf(note + used, nlen - used, "; CLAMPED: measured %s %g, GPGPU-sim %s allows %s %g (%s)", what,
		 *v, gs_version_name(e->o->version), is_min ? "at least" : "at most", bound, source);
	*v = bound;
	e->o->clamped_out++;
	return 0;
}

static unsigned pow2_round(double v)
{
	if (!(v >= 1))
		return 1;
	return 1u << (unsigned)lround(log2(v));
}

static unsigned pow2_up(double v)
{
	unsigned p = 1;
	while (p < v && p < (1u << 30))
		p <<= 1;
	return p;
}

/* pol: the four policy letters rp:wp:ap:wap. 3.2.2 as released:
 * "S:L:A,rp:wp:ap:wap,mshr" (its GTX480 config: 32:128:4,L:L:m:N,A:32:8,8);
 * 4.0: "N:S:L:A,rp:wp:ap:wap:sif,mshr" with the linear set index L. */
static void cache_str(char *buf, size_t len, int version, unsigned sets, unsigned line, unsigned assoc,
		      const char *pol, const char *rest)
{
	snprintf(buf, len, "%s%u:%u:%u,%s%s,%s", version == 4 ? "N:" : "", sets, line, assoc, pol,
		 version == 4 ? ":L" : "", rest);
}

static const char *base_value(const char *base, const char *name, char *buf, size_t len)
{
	if (!base)
		return NULL;
	size_t nl = strlen(name);
	for (const char *s = base; *s;) {
		size_t ll = strcspn(s, "\n");
		const char *p = s;
		while (*p == ' ' || *p == '\t')
			p++;
		if ((size_t)(p - s) + nl < ll && strncmp(p, name, nl) == 0 &&
		    (p[nl] == ' ' || p[nl] == '\t')) {
			p += nl;
			while (*p == ' ' || *p == '\t')
				p++;
			size_t vl = strcspn(p, "#\n \t\r");
			snprintf(buf, len, "%.*s", (int)vl, p);
			return buf;
		}
		s += ll + (s[ll] ? 1 : 0);
	}
	return NULL;
}

static bool is_cpu_device(const struct calib_model *m)
{
	/* agent/calib/bench_cu.c records host_parallel_speedup on CPU devices only */
	return calib_model_get(m, "host_parallel_speedup") != NULL;
}

static bool is_midgard(const struct calib_model *m)
{
	return strstr(m->device, "Mali-T") != NULL;
}

static void emit_cores(struct em *e, unsigned *clusters)
{
	char note[400] = "", why[1200], v[64];
	const struct calib_param *cu = param(e, "compute_units", note, sizeof(note));
	const struct calib_param *rep = calib_model_get(e->m, "compute_units_reported");
	if (cu) {
		*clusters = (unsigned)lround(cu->value);
		src(e, why, sizeof(why), cu);
		strncat(why, note, sizeof(why) - strlen(why) - 1);
	} else if (rep && rep->value >= 1) {
		*clusters = (unsigned)lround(rep->value);
		snprintf(why, sizeof(why), "fallback: compute_units_reported = %g (clGetDeviceInfo)%s",
			 rep->value, note);
	} else {
		*clusters = 1;
		char mb[400];
		snprintf(why, sizeof(why), "fallback: 1 (%s)",
			 missing("compute_units", note, mb, sizeof(mb)));
	}
	snprintf(v, sizeof(v), "%u", *clusters);
	opt(e, "-gpgpu_n_clusters", v, "%s; one cluster per OpenCL compute unit", why);
	opt(e, "-gpgpu_n_cores_per_cluster", "1",
	    "mapping: one SIMT core per cluster, each OpenCL compute unit is one core");
	note[0] = 0;
	const struct calib_param *r = param(e, "regs_per_cu", note, sizeof(note));
	if (r) {
		snprintf(v, sizeof(v), "%.0f", r->value);
		src(e, why, sizeof(why), r);
		opt(e, "-gpgpu_shader_registers", v, "%s; GPGPU-sim: 32-bit registers per core", why);
	} else {
		char mb[400];
		opt(e, "-gpgpu_shader_registers", "16384", "fallback: 16384 (the QuadroFX5800 example's); %s",
		    missing("regs_per_cu", note, mb, sizeof(mb)));
	}
}

static void emit_pipeline(struct em *e)
{
	char note[600] = "", wn[400] = "", why[1400], v[64];
	double warps_max = gs_limit_bound(GS_WARPS_MAX, e->o->version);
	/* W: GPGPU-sim's warp is a SIMT width, lanes that share one PC */
	double w;
	char wwhy[700];
	const struct calib_param *gr = param(e, "granularity", wn, sizeof(wn));
	if (is_cpu_device(e->m)) {
		w = 32;
		snprintf(wwhy, sizeof(wwhy),
			 "W = 32, fallback: a CPU device has no SIMT width; its granularity (%g) is PoCL's "
			 "serial loop"
			 " over a work-group, not lanes sharing a PC. 32 is the warp of every shipped "
			 "GPGPU-sim config",
			 gr ? gr->value : NAN);
	} else if (is_midgard(e->m)) {
		const struct calib_param *vb = calib_model_get(e->m, "vector_width_bits");
		double bits = vb && vb->value >= 32 ? vb->value : 128;
		w = floor(bits / 32);
		snprintf(wwhy, sizeof(wwhy),
			 "W = %.0f, mapped as the seed did: Midgard threads have their own program counters "
			 "(granularity"
			 " %g), and the seed's instruction detector gives each instruction the width of the "
			 "%.0f-bit"
			 " vector core (%s) for its data type; stock GPGPU-sim has one width, so %.0f / "
			 "32-bit = %.0f lanes"
			 " (fp16 would be twice, 64-bit half: not expressible without the seed's patch)",
			 w, gr ? gr->value : NAN, bits, vb ? vb->method : "Midgard's, not in the model", bits,
			 w);
	} else if (gr) {
		w = round(gr->value);
		snprintf(wwhy, sizeof(wwhy), "W = granularity = %g (%s)%s", gr->value, gr->method, wn);
		if (hold(e, GS_WARP_MAX, &w, gs_limit_bound(GS_WARP_MAX, e->o->version), false, "warp size",
			 note, sizeof(note)) < 0)
			return;
	} else {
		w = 32;
		char mb[400];
		snprintf(wwhy, sizeof(wwhy), "W = 32, fallback (%s)",
			 missing("granularity", wn, mb, sizeof(mb)));
	}
	/* T: threads resident on one core */
	char tn[400] = "", twhy[600];
	const struct calib_param *tpc = param(e, "threads_per_cu", tn, sizeof(tn));
	const struct calib_param *rcu = param(e, "regs_per_cu", tn, sizeof(tn));
	const struct calib_param *rwi = param(e, "regs_per_work_item", tn, sizeof(tn));
	double threads;
	if (tpc) {
		threads = tpc->value;
		snprintf(twhy, sizeof(twhy), "%s: T from threads_per_cu = %g (%s)", label(e), tpc->value,
			 tpc->method);
	} else if (rcu && rwi) {
		threads = round(rcu->value / rwi->value);
		snprintf(twhy, sizeof(twhy), "%s: T from regs_per_cu / regs_per_work_item = %g / %g", label(e),
			 rcu->value, rwi->value);
	} else {
		threads = w * fmin(warps_max, 2048 / w);
		char mb[400];
		snprintf(
		    twhy, sizeof(twhy), "fallback: T = %g, the most the version allows (%s)", threads,
		    missing("threads_per_cu (or regs_per_cu and regs_per_work_item)", tn, mb, sizeof(mb)));
	}
	if (hold(e, GS_THREADS_MAX, &threads, gs_limit_bound(GS_THREADS_MAX, e->o->version), false,
		 "threads per core", note, sizeof(note)) < 0)
		return;
	double t = floor(threads / w) * w;
	if (t < w) {
		size_t used = strlen(note);
		snprintf(note + used, sizeof(note) - used, "; %g threads are less than one warp: one warp",
			 threads);
		t = w;
	}
	double warps = t / w;
	if (hold(e, GS_WARPS_MAX, &warps, warps_max, false, "warps per core", note, sizeof(note)) < 0)
		return;
	t = warps * w;
	e->warp = w;
	snprintf(v, sizeof(v), "%.0f:%.0f", t, w);
	snprintf(why, sizeof(why), "%s, rounded down to a multiple of W; %s%s", twhy, wwhy, note);
	opt(e, "-gpgpu_shader_core_pipeline", v, "%s", why);
	opt(e, "-gpgpu_shmem_warp_parts", "1",
	    "mapping: the whole warp in one memory pass; W / parts must be >= 1 or no access is generated");
	opt(e, "-gpgpu_shader_cta", "8",
	    "fallback: 8 work-groups per core at most (not measured; GPGPU-sim allows <= 32)");
	opt(e, "-gpgpu_simd_model", "1", "GPGPU-sim implements only 1 (post-dominator reconvergence)");
}

/* -ptx_opcode_latency_<type> and -ptx_opcode_initiation_<type>: <ADD,MAX,MUL,MAD,DIV>
 * (4.0's int adds SHFL). Latency: lat_<type>_<op>_cycles; initiation interval:
 * cycles between two warp instructions on the core's one SP unit = W / measured
 * ops per cycle per CU (tput_<type>_<op>_per_cycle_cu), at least 1. Positions
 * not measured (MAX, SHFL, double) keep the values of GPGPU-sim's shipped
 * configs (GTX480 for 3.2.2, SM7_QV100's SHFL for 4.0), said so. */
static void emit_opcodes(struct em *e)
{
	static const struct {
		const char *type, *cl;
		const char *def_lat, *def_init; /* the shipped configs' five values */
	} ty[] = {{"int", "int", "4,13,4,5,145", "1,2,2,1,8"},
		  {"fp", "float", "4,13,4,5,39", "1,2,1,1,4"},
		  {"dp", NULL, "8,19,8,8,330", "8,16,8,8,130"}};
	static const char *const ops[5] = {"add", NULL, "mul", "mad", "div"}; /* MAX not measured */
	for (size_t t = 0; t < 3; t++) {
		unsigned dl[5], di[5];
		if (sscanf(ty[t].def_lat, "%u,%u,%u,%u,%u", &dl[0], &dl[1], &dl[2], &dl[3], &dl[4]) != 5 ||
		    sscanf(ty[t].def_init, "%u,%u,%u,%u,%u", &di[0], &di[1], &di[2], &di[3], &di[4]) != 5)
			return;
		char lat[64] = "", init[64] = "", lwhy[1400] = "", iwhy[1400] = "";
		unsigned nmeas = 0, ntp = 0;
		for (int k = 0; k < 5; k++) {
			unsigned l = dl[k], in = di[k];
			char name[CALIB_NAME_MAX], tn[CALIB_NAME_MAX], note[400] = "";
			const struct calib_param *lp = NULL, *tp = NULL;
			if (ty[t].cl && ops[k]) {
				snprintf(name, sizeof(name), "lat_%s_%s_cycles", ty[t].cl, ops[k]);
				snprintf(tn, sizeof(tn), "tput_%s_%s_per_cycle_cu", ty[t].cl, ops[k]);
				lp = param(e, name, note, sizeof(note));
				tp = param(e, tn, note, sizeof(note));
			}
			if (lp) {
				l = lp->value < 1 ? 1 : (unsigned)lround(lp->value);
				nmeas++;
			}
			if (tp) {
				double ii = e->warp / tp->value;
				ntp++;
				in = ii < 1 ? 1 : (unsigned)lround(ii);
			}
			size_t ll = strlen(lat), il = strlen(init), lw = strlen(lwhy), iw = strlen(iwhy);
			snprintf(lat + ll, sizeof(lat) - ll, "%s%u", k ? "," : "", l);
			snprintf(init + il, sizeof(init) - il, "%s%u", k ? "," : "", in);
			const char *opn[5] = {"ADD", "MAX", "MUL", "MAD", "DIV"};
			if (lp)
				snprintf(lwhy + lw, sizeof(lwhy) - lw, "%s %s %g cycles", k ? ";" : "", opn[k], lp->value);
			else
				snprintf(lwhy + lw, sizeof(lwhy) - lw, "%s %s %u (shipped config%s)", k ? ";" : "", opn[k],
					 l, note[0] ? ", measured one FLAGGED" : ", not measured");
			if (tp)
				snprintf(iwhy + iw, sizeof(iwhy) - iw, "%s %s %.0f / %g ops/cycle/CU", k ? ";" : "",
					 opn[k], e->warp, tp->value);
			else
				snprintf(iwhy + iw, sizeof(iwhy) - iw, "%s %s %u (shipped config)", k ? ";" : "", opn[k],
					 in);
		}
		bool v4int = e->o->version == 4 && t == 0;
		if (v4int) { /* 4.0: SHFL, not measured */
			strncat(lat, ",21", sizeof(lat) - strlen(lat) - 1);
			strncat(init, ",4", sizeof(init) - strlen(init) - 1);
		}
		char name[64];
		snprintf(name, sizeof(name), "-ptx_opcode_latency_%s", ty[t].type);
		opt(e, name, lat, "%s: <ADD,MAX,MUL,MAD,DIV%s> latencies in core cycles:%s%s",
		    nmeas ? (nmeas == 4 ? label(e) : "partly measured") : "fallback", v4int ? ",SHFL" : "", lwhy,
		    v4int ? "; SHFL 21 (SM7_QV100's, not measured)" : "");
		snprintf(name, sizeof(name), "-ptx_opcode_initiation_%s", ty[t].type);
		opt(e, name, init,
		    "%s: <ADD,MAX,MUL,MAD,DIV%s> initiation intervals = warp size / measured ops per cycle per CU,"
		    " at least 1 (one SP unit per core):%s%s",
		    ntp ? "derived from measured" : "fallback", v4int ? ",SHFL" : "", iwhy,
		    v4int ? "; SHFL 4 (SM7_QV100's, not measured)" : "");
	}
}

#define N_MEM 2 /* -gpgpu_n_mem written below */

/* dl2: GPGPU-sim's L2 is split over the memory sub-partitions (N_MEM x 1). */
static void emit_dl2(struct em *e)
{
	int ver = e->o->version;
	char note[400] = "", why[1600], v[128], an[400] = "";
	const struct calib_param *l2 = param(e, "l2_size_bytes", note, sizeof(note));
	if (!l2) {
		char mb[400];
		opt(e, "-gpgpu_cache:dl2", "none",
		    "no L2 modelled: %s; the measured memory latency (-dram_latency below) includes what an L2 would"
		    " add",
		    missing("l2_size_bytes", note, mb, sizeof(mb)));
		return;
	}
	const struct calib_param *cu = calib_model_get(e->m, "compute_units_reported");
	bool cpu = is_cpu_device(e->m);
	double per = cpu && cu && cu->value >= 1 ? cu->value : 1; /* a CPU's L2 is per core */
	const struct calib_param *w = param(e, "cpu_cache_l2_ways", an, sizeof(an));
	double assoc = cpu && w ? round(w->value) : 8;
	double total = l2->value * per, exact = total / N_MEM / (128 * assoc);
	unsigned sets = pow2_round(exact);
	cache_str(v, sizeof(v), ver, sets, 128, (unsigned)assoc, "L:B:m:W", "A:32:4,4");
	snprintf(why, sizeof(why),
		 "%s: l2_size_bytes = %g B (%s)%s = %.0f B in all, over %d memory sub-partitions of %u sets x 128 B"
		 " x %.0f ways (sets rounded to a power of two from %g: %.0f B modelled); line 128 B: the L2 takes"
		 " the dl1's 128 B requests; ways: %s; policy L:B:m:W (LRU, write-back, allocate on miss,"
		 " write-allocate) and MSHRs A:32:4,4 are GPGPU-sim's usual L2 values, not measured%s",
		 label(e), l2->value, l2->method, per > 1 ? " per core x compute_units_reported (a CPU's L2 is per core)" : "",
		 total, N_MEM, sets, assoc, exact, (double)sets * 128 * assoc * N_MEM,
		 cpu && w ? "cpu_cache_l2_ways, as the system states it (sysfs)" : "fallback 8 (not measured)", note);
	opt(e, "-gpgpu_cache:dl2", v, "%s", why);
}

static void emit_caches(struct em *e)
{
	int ver = e->o->version;
	char note[900] = "", why[1600], v[128];
	const struct calib_param *lp = param(e, "l1_line_bytes", note, sizeof(note));
	const struct calib_param *sp = param(e, "l1_size_bytes", note, sizeof(note));
	const struct calib_param *ap = param(e, "l1_assoc", note, sizeof(note));
	const struct calib_param *setp = param(e, "l1_set_bytes", note, sizeof(note));
	double line = lp ? lp->value : 128;
	double mline = line;
	double assoc = ap ? round(ap->value) : (setp && lp) ? round(setp->value / lp->value) : 4;
	double size = sp ? sp->value : 16384;
	if (!gs_pow2((unsigned long)line) || line != floor(line)) {
		double up = pow2_up(line);
		if (hold(e, GS_CACHE_LINE_POW2, &line, up, true, "dl1 line (not a power of two)", note,
			 sizeof(note)) < 0)
			return;
		line = up;
	}
	if (hold(e, GS_DL1_LINE_MIN, &line, gs_limit_bound(GS_DL1_LINE_MIN, ver), true, "dl1 line bytes",
		 note, sizeof(note)) < 0)
		return;
	if (assoc < 1)
		assoc = 1;
	double exact = size / (line * assoc);
	unsigned sets = pow2_round(exact);
	cache_str(v, sizeof(v), ver, sets, (unsigned)line, (unsigned)assoc, "L:L:m:N", "A:32:8,8");
	snprintf(why, sizeof(why),
		 "%s: dl1 line %s, assoc %s, size %s; sets = size / (line x assoc) = %g rounded to the power "
		 "of two %u"
		 " (GPGPU-sim indexes sets with a mask): %u x %.0f x %.0f = %.0f B modelled vs %g B %s;"
		 " policy L:L:m:N (LRU, local write-back/global write-through, allocate on miss, no write"
		 " allocate%s) and MSHRs A:32:8,8 are GPGPU-sim's usual dl1 values, not measured%s",
		 lp && sp   ? label(e)
		 : lp || sp ? (strcmp(label(e), "published") == 0 ? "partly published" : "partly measured")
			    : "fallback",
		 lp ? label(e) : "fallback 128",
		 ap		? "l1_assoc"
		 : (setp && lp) ? "= l1_set_bytes / line"
				: "fallback 4",
		 sp ? label(e) : "fallback 16 KiB", exact, sets, sets, line, assoc, sets * line * assoc,
		 size, sp ? label(e) : "(fallback)", ver == 4 ? "; 4.0's fifth letter L: linear set index" : "",
		 note);
	(void)mline;
	opt(e, "-gpgpu_cache:dl1", v, "%s", why);
	emit_dl2(e);
	cache_str(v, sizeof(v), ver, 4, 128, 4, "L:R:f:N", "A:2:32,4");
	opt(e, "-gpgpu_cache:il1", v,
	    "fallback: instruction cache not measured (GPGPU-sim's usual il1, %s syntax)",
	    gs_version_name(ver));
	cache_str(v, sizeof(v), ver, 8, 128, 4, "L:R:m:N", "F:128:4,128:2");
	opt(e, "-gpgpu_tex_cache:l1", v,
	    "fallback: texture cache not measured (GPGPU-sim's usual, %s syntax)", gs_version_name(ver));
	cache_str(v, sizeof(v), ver, 64, 64, 2, "L:R:f:N", "A:2:32,4");
	opt(e, "-gpgpu_const_cache:l1", v,
	    "fallback: constant cache not measured (GPGPU-sim's usual, %s syntax)", gs_version_name(ver));
}

static void emit_memory(struct em *e, unsigned clusters, FILE *icnt)
{
	char note[400] = "", why[1400], v[128], b[128];
	opt(e, "-gpgpu_n_mem", "2",
	    "fallback: 2 memory channels (not measured%s; a power of two, as the address decoder needs)",
	    is_midgard(e->m) ? "; the Arndale Octa's Exynos 5420 has dual-channel LPDDR3" : "");
	opt(e, "-gpgpu_n_sub_partition_per_mchannel", "1", "one L2/ROP sub-partition per channel");
	opt(e, "-gpgpu_n_mem_per_ctrlr", "1", "one DRAM chip per controller");
	opt(e, "-gpgpu_dram_buswidth", "4", "GPGPU-sim's default 4 B bus per chip, written out");
	snprintf(v, sizeof(v), "%d", DRAM_BURST);
	opt(e, "-gpgpu_dram_burst_length", v, "GPGPU-sim's default burst, written out");
	opt(e, "-gpgpu_dram_timing_opt", DRAM_TIMING,
	    "GPGPU-sim's compiled-in default timing, written out "
	    "(nbk:tCCD:tRRD:tRCD:tRAS:tRP:tRC:CL:WL:tCDLR:tWR:"
	    "nbkgrp:tCCDL:tRTPL, DRAM cycles); a row miss costs tRP + tRCD + CL + BL/2 = %d",
	    DRAM_ROW_MISS);
	/* clocks: one measured clock for all four domains, or the base's four, or a stated set */
	const struct calib_param *clk = param(e, "clock_mhz", note, sizeof(note));
	double core = 0, dram = 0;
	if (clk) {
		core = clk->value;
		/* the DRAM clock from the measured bandwidth: GPGPU-sim moves n_mem x chips x bus width x 2
		 * (DDR) bytes per DRAM cycle (its GTX480: 6 x 2 x 4 B x 2 x 924 MHz = 177 GB/s) */
		char bn[400] = "", bwhy[700];
		const struct calib_param *bw = param(e, "peak_gbps", bn, sizeof(bn));
		if (!bw && is_cpu_device(e->m))
			bw = param(e, "cpu_peak_gbps", bn, sizeof(bn));
		dram = bw ? bw->value * 1e3 / (N_MEM * 1 * 4 * 2) : core;
		if (bw)
			snprintf(bwhy, sizeof(bwhy),
				 "; DRAM at %.1f MHz, derived from %s %s = %g GB/s (%s): GPGPU-sim moves 2 channels x 1"
				 " chip x 4 B x 2 (DDR) = 16 B per DRAM cycle, so its peak is the measured one",
				 dram, label(e), bw->name, bw->value, bw->method);
		else
			snprintf(bwhy, sizeof(bwhy), "; DRAM at the core clock too (%s)",
				 bn[0] ? bn + 2 : "peak_gbps not measured");
		snprintf(v, sizeof(v), "%.1f:%.1f:%.1f:%.1f", core, core, core, dram);
		src(e, why, sizeof(why), clk);
		opt(e, "-gpgpu_clock_domains", v,
		    "%s; core, interconnect and L2 at this one clock (not measured apart; a base's would not"
		    " belong with it), so the latencies below are in its cycles%s",
		    why, bwhy);
	} else if (base_value(e->o->base, "-gpgpu_clock_domains", b, sizeof(b))) {
		char mb[400];
		opt(e, "-gpgpu_clock_domains", b, "fallback: all four clocks from the --base file (%s)",
		    missing("clock_mhz", note, mb, sizeof(mb)));
	} else {
		char mb[400];
		opt(e, "-gpgpu_clock_domains", "325.0:650.0:650.0:800.0",
		    "fallback: all four clocks of GPGPU-sim's QuadroFX5800 example (%s)",
		    missing("clock_mhz", note, mb, sizeof(mb)));
	}
	/* the L2 hit path: interconnect both ways + the ROP queue (+ the L2 access) */
	char ln[400] = "";
	const struct calib_param *l2l = core > 0 ? param(e, "l2_latency_cycles", ln, sizeof(ln)) : NULL;
	int rop = ROP_LATENCY;
	if (l2l && l2l->value > ICNT_ROUND_TRIP + 1) {
		rop = (int)lround(l2l->value) - ICNT_ROUND_TRIP;
		snprintf(v, sizeof(v), "%d", rop);
		opt(e, gs_rop_option(e->o->version), v,
		    "derived from %s: l2_latency_cycles = %g (%s) - interconnect round trip %d: the L2 hit path%s",
		    label(e), l2l->value, l2l->method, ICNT_ROUND_TRIP,
		    e->o->version == 4 ? "; 4.0 renamed -rop_latency to -gpgpu_l2_rop_latency" : "");
	} else {
		char mb[400];
		snprintf(v, sizeof(v), "%d", rop);
		opt(e, gs_rop_option(e->o->version), v,
		    "fallback: GPGPU-sim's default ROP queue latency, written out (%s; part of the modelled path"
		    " below)%s",
		    missing("l2_latency_cycles", ln, mb, sizeof(mb)),
		    e->o->version == 4 ? "; 4.0 renamed -rop_latency to -gpgpu_l2_rop_latency" : "");
	}
	/* GPGPU-sim counts -rop_latency and -dram_latency in core cycles (gpu_sim_cycle); the row
	 * miss is DRAM cycles of the timing above */
	const int row = dram > 0 ? (int)lround(DRAM_ROW_MISS * core / dram) : DRAM_ROW_MISS;
	const int path = rop + ICNT_ROUND_TRIP + row;
	/* -dram_latency is an extra delay on top of the modelled path */
	char dn[400] = "";
	const struct calib_param *ns = NULL;
	if (is_cpu_device(e->m)) /* PoCL: the CPU's random page chase (mem_slots), the DRAM miss itself */
		ns = param(e, "mem_latency_ns", dn, sizeof(dn));
	if (!ns)
		ns = param(e, "dram_latency_ns", dn, sizeof(dn));
	const struct calib_param *cy = param(e, "dram_latency_cycles", dn, sizeof(dn));
	double meas = NAN;
	char mwhy[700] = "";
	if (ns && core > 0) {
		meas = ns->value * core / 1000;
		snprintf(mwhy, sizeof(mwhy), "%s = %g ns x %.1f MHz = %.0f core cycles (%s)", ns->name,
			 ns->value, core, meas, ns->method);
	} else if (cy && core > 0) {
		meas = cy->value;
		snprintf(mwhy, sizeof(mwhy), "dram_latency_cycles = %g at clock_mhz (%s)", cy->value,
			 cy->method);
	}
	if (isfinite(meas)) {
		double extra = meas - path;
		snprintf(v, sizeof(v), "%.0f", extra > 0 ? extra : 0);
		opt(e, "-dram_latency", v,
		    "derived from %s: load latency minus the modelled path: %s - (rop %d + "
		    "interconnect round trip %d + DRAM"
		    " row miss %d DRAM cycles = %d core cycles; in all %d) = %.0f%s; GPGPU-sim adds -dram_latency"
		    " (core cycles) on top of that path",
		    label(e), mwhy, rop, ICNT_ROUND_TRIP, DRAM_ROW_MISS, row, path, extra,
		    extra < 0 ? " (below the modelled path: 0)" : "");
	} else {
		char mb[400];
		opt(e, "-dram_latency", "30",
		    "fallback: GPGPU-sim's default 30, written out (%s%s); the modelled path is %d core "
		    "cycles before it",
		    missing("dram_latency_ns", dn, mb, sizeof(mb)),
		    core > 0 ? "" : "; core clock not measured", path);
	}
	const char *name = e->o->icnt_name ? e->o->icnt_name : DEFAULT_ICNT;
	unsigned nodes = clusters + 2 * 1;
	opt(e, "-network_mode", "1", "intersim2, configured by the file below");
	opt(e, "-inter_config_file", name,
	    "written beside this file by collector calibrate: a one-stage butterfly of k = %u nodes (%u "
	    "clusters +"
	    " 2 memory sub-partitions), as the shipped configs; GPGPU-sim opens it relative to the run "
	    "directory",
	    nodes, clusters);
	fprintf(
	    icnt,
	    "// interconnect for %s, written by collector calibrate with gpgpusim.config\n"
	    "// a one-stage butterfly (fly, n = 1) with k = clusters + memory sub-partitions = %u + 2\n"
	    "use_map = 0;\nflit_size = 32;\nnetwork_count = 2;\n\ntopology = fly;\nk = %u;\nn = 1;\n\n"
	    "routing_function = dest_tag;\n\nnum_vcs = 1;\nvc_buf_size = 8;\nwait_for_tail_credit = 0;\n\n"
	    "vc_allocator = islip;\nsw_allocator = islip;\nalloc_iters = 1;\n\n"
	    "credit_delay = 0;\nrouting_delay = 0;\nvc_alloc_delay = 1;\nsw_alloc_delay = 1;\n\n"
	    "input_speedup = 1;\noutput_speedup = 1;\ninternal_speedup = 1.0;\n\n"
	    "traffic = uniform;\npacket_size = {{1}};\npacket_size_rate = {{1}};\n\n"
	    "sim_type = gpgpusim;\ninjection_rate = 0.1;\n\nsubnets = 2;\n\n"
	    "read_request_subnet = 0;\nread_reply_subnet = 1;\nwrite_request_subnet = 0;\nwrite_reply_subnet "
	    "= 1;\n\n"
	    "read_request_begin_vc = 0;\nread_request_end_vc = 0;\nwrite_request_begin_vc = 0;\n"
	    "write_request_end_vc = 0;\nread_reply_begin_vc = 0;\nread_reply_end_vc = 0;\n"
	    "write_reply_begin_vc = 0;\nwrite_reply_end_vc = 0;\n",
	    e->m->device[0] ? e->m->device : "(unnamed device)", clusters, nodes);
}

/* Options of the --base file that were not written: kept, with a comment. */
static void emit_base_rest(struct em *e)
{
	const char *s = e->o->base;
	while (s && *s) {
		size_t ll = strcspn(s, "\n");
		char line[512];
		snprintf(line, sizeof(line), "%.*s", (int)(ll < sizeof(line) ? ll : sizeof(line) - 1), s);
		s += ll + (s[ll] ? 1 : 0);
		char *hash = strchr(line, '#');
		if (hash)
			*hash = 0;
		char name[64], value[400];
		if (sscanf(line, " %63s %399[^\r]", name, value) != 2 || name[0] != '-')
			continue;
		bool done = false;
		for (size_t i = 0; i < e->nwritten && !done; i++)
			done = strcmp(e->written[i], name) == 0;
		if (done)
			continue;
		size_t vl = strlen(value);
		while (vl && (value[vl - 1] == ' ' || value[vl - 1] == '\t'))
			value[--vl] = 0;
		opt(e, name, value, "from the --base file (not mapped from the model)");
	}
}

int calib_gpgpusim_write(const struct calib_model *m, struct calib_gpgpusim_opts *o, FILE *cfg, FILE *icnt,
			 char *err, size_t errlen)
{
	if (o->version != 3 && o->version != 4) {
		snprintf(err, errlen, "GPGPU-sim version %d: 3 (3.2.2) or 4 (4.0)", o->version);
		return -EINVAL;
	}
	o->flagged_out = o->clamped_out = 0;
	char *text = NULL, *itext = NULL;
	size_t tlen = 0, ilen = 0;
	struct em e = {.m = m, .o = o, .err = err, .errlen = errlen};
	e.f = open_memstream(&text, &tlen);
	FILE *fi = open_memstream(&itext, &ilen);
	if (!e.f || !fi) {
		if (e.f)
			fclose(e.f);
		if (fi)
			fclose(fi);
		free(text);
		free(itext);
		return -ENOMEM;
	}
	fprintf(e.f, "# GPGPU-sim %s configuration for %s\n", gs_version_name(o->version),
		m->device[0] ? m->device : "(unnamed device)");
	fprintf(e.f, "# target: %s\n", gs_version_target(o->version));
	fprintf(e.f, "# generated by `collector calibrate` from the machine model (%s)\n",
		m->source[0] ? m->source : "no source given");
	fprintf(
	    e.f,
	    "# every option below is measured or a stated fallback; options not written take GPGPU-sim's\n"
	    "# compiled-in defaults%s. Checked against the %s limits (collector/calib/README.md)%s.\n",
	    o->base ? " unless the --base file sets them" : "", gs_version_name(o->version),
	    o->clamp ? "; --clamp: out-of-range values are written clamped, marked CLAMPED" : "");
	unsigned clusters = 1;
	emit_cores(&e, &clusters);
	if (e.rc == 0)
		emit_pipeline(&e);
	if (e.rc == 0)
		emit_opcodes(&e);
	if (e.rc == 0)
		emit_caches(&e);
	if (e.rc == 0)
		emit_memory(&e, clusters, fi);
	if (e.rc == 0)
		emit_base_rest(&e);
	fclose(e.f);
	fclose(fi);
	int rc = e.rc;
	if (rc == 0) {
		enum gs_limit_id which;
		char why[1024];
		rc = gs_check_config(text, itext, o->version, &which, why, sizeof(why));
		if (rc < 0)
			snprintf(err, errlen, "%s%s", o->base ? "with the --base file's options: " : "", why);
	}
	if (rc == 0) {
		fwrite(text, 1, tlen, cfg);
		if (icnt)
			fwrite(itext, 1, ilen, icnt);
		if (ferror(cfg) || (icnt && ferror(icnt)))
			rc = -EIO;
	}
	free(text);
	free(itext);
	return rc;
}
