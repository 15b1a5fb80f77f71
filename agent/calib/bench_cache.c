/* Caches (seed 2.5). One work-item chases pointers X[i] -> X[X[i]]:
 *  - line size: blocks visited in random order, two dependent loads per
 *    block, the second d bytes below the first (the first is the last word of
 *    an aligned 512 B block, so it ends a line of every size <= 512): time
 *    steps up once d reaches the line size (a second line is touched);
 *  - sizes and latencies: the seed's X[i] = (p + i) % L sweep with growing L,
 *    with the order of the nodes (256 B apart, one line each) shuffled so
 *    that prefetchers cannot hide the misses, over huge pages where the
 *    system gives them (TLB misses would make false levels): plateaus of
 *    time per access, one per level; a level's size is the last L on its
 *    plateau (nodes 256 B apart use one set in 256/line, so the cache holds
 *    C/256 of them: L = C still); the line size is measured next, in a
 *    region 4x the first level so that its first loads miss L1 only;
 *  - associativity (set size): k lines that map to one set; time per access
 *    jumps at k = ways + 1. On CPU devices the lines are one page apart: every
 *    L1 we target is virtually indexed with size / ways <= the page (its index
 *    bits lie in the page offset), so a page stride isolates one set, and the
 *    lines fall in different L2 sets; a larger power of two (the L1 size,
 *    used before) also aliases in the L2 and in way predictors (AMD's
 *    linear-address utags): it read 6 ways on a 12-way L1. GPUs: the seed's
 *    stride, a power of two >= the L1 size. */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "calib/calib_detect.h"
#include "calib_bench.h"

#define LINE_JUMP 1.3
#define LEVEL_JUMP 2.0
#define WAYS_JUMP 1.3

static const char chase_src[] = "__kernel void chase(__global const uint *next, uint start, int steps, __global uint *out)\n"
				"{\n"
				"	uint p = start;\n"
				"	for (int i = 0; i < steps; i += 4) {\n"
				"		p = next[p]; p = next[p]; p = next[p]; p = next[p];\n"
				"	}\n"
				"	out[0] = p;\n"
				"}\n";

struct chase {
	struct calib_ctx *c;
	struct cl_prog *p;
	cl_buf *next, *out;
	unsigned start;
	int steps;
};

static int chase_once(void *arg, double *s)
{
	struct chase *ch = arg;
	struct cl_arg args[] = {CL_ARG_BUF(ch->next), CL_ARG_VAL(ch->start), CL_ARG_VAL(ch->steps), CL_ARG_BUF(ch->out)};
	return cl_run(ch->p, "chase", args, 4, 1, 1, s);
}

#define HUGE_PAGE (2u << 20)

/* Memory for chase arrays, on huge pages where the system gives them. */
static unsigned *hp_alloc(size_t bytes)
{
	size_t len = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *p = aligned_alloc(HUGE_PAGE, len);
	if (p) {
#ifdef MADV_HUGEPAGE
		madvise(p, len, MADV_HUGEPAGE);
#endif
		memset(p, 0, len);
	}
	return p;
}

/* Chase over next[0..elems) (host memory used in place) and time `steps`
 * accesses; v gets seconds per access. */
static int chase_measure(struct chase *ch, unsigned *next, size_t elems, unsigned start, long steps, double *v)
{
	cl_buf_free(ch->c->cl, ch->next);
	ch->next = NULL;
	int rc = cl_buf_create_host(ch->c->cl, elems * sizeof(unsigned), next, &ch->next);
	if (rc < 0)
		return rc;
	ch->start = start;
	ch->steps = (int)((steps + 3) / 4 * 4);
	if ((rc = cr_repeat(ch->c->reps, chase_once, ch, v)) < 0)
		return rc;
	for (unsigned k = 0; k < ch->c->reps; k++)
		v[k] /= ch->steps;
	return 0;
}

/* Drop the device buffer over host memory, then the memory. */
static void release(struct chase *ch, unsigned *host)
{
	cl_buf_free(ch->c->cl, ch->next);
	ch->next = NULL;
	free(host);
}

static unsigned rnd(unsigned *s)
{
	*s ^= *s << 13;
	*s ^= *s >> 17;
	*s ^= *s << 5;
	return *s;
}

static double to_cycles(double seconds, double mhz)
{
	return seconds * mhz * 1e6;
}

/* The spread over the repetitions of where the cliff (a step up by jump)
 * is: its aux (the x of the step) or its value; INFINITY unless every
 * repetition shows one. */
static double cliff_spread(const struct calib_curve *cv, double jump, bool use_aux)
{
	double per[CR_MAX_REPS], y[CR_MAX_POINTS];
	unsigned np = 0;
	for (unsigned k = 0; k < cv->reps; k++) {
		struct calib_detect dk;
		cr_rep_y(cv, k, y);
		if (calib_detect_cliff(cv->x, y, cv->n, jump, &dk) == 0)
			per[np++] = use_aux ? dk.aux : dk.value;
	}
	struct calib_stat st;
	return np == cv->reps && calib_stat(per, np, &st) == 0 ? st.spread : INFINITY;
}

static int line_size(struct chase *ch, struct calib_result *r, double region, double *line)
{
	struct calib_ctx *c = ch->c;
	const size_t block = 128; /* uints: 512 B */
	size_t nblocks = (size_t)region / (block * 4);
	if (nblocks < 64)
		nblocks = 64;
	unsigned *next = hp_alloc(nblocks * block * sizeof(unsigned));
	size_t *perm = malloc(nblocks * sizeof(size_t));
	if (!next || !perm) {
		release(ch, next);
		free(perm);
		return -ENOMEM;
	}
	unsigned seed = 12345;
	for (size_t i = 0; i < nblocks; i++)
		perm[i] = i;
	for (size_t i = nblocks; i > 1; i--) {
		size_t j = rnd(&seed) % i, t = perm[i - 1];
		perm[i - 1] = perm[j];
		perm[j] = t;
	}
	static const unsigned ds[] = {4, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256};
	struct calib_curve *cv = cr_curve(r, "pair_time_vs_offset", "bytes", "cycles");
	int rc = 0;
	for (size_t di = 0; di < sizeof(ds) / sizeof(ds[0]); di++) {
		size_t d = ds[di] / 4;
		memset(next, 0, nblocks * block * sizeof(unsigned));
		for (size_t i = 0; i < nblocks; i++) {
			size_t first = perm[i] * block + block - 1, second = first - d;
			next[first] = (unsigned)second;
			next[second] = (unsigned)(perm[(i + 1) % nblocks] * block + block - 1);
		}
		double v[CR_MAX_REPS];
		long steps = (long)(8 * nblocks) < 400000 ? 400000 : (long)(8 * nblocks);
		if ((rc = chase_measure(ch, next, nblocks * block, (unsigned)(perm[0] * block + block - 1), steps, v)) < 0)
			break;
		for (unsigned k = 0; k < c->reps; k++)
			v[k] = to_cycles(v[k], c->clock_mhz);
		cr_point(cv, ds[di], v, c->reps);
	}
	release(ch, next);
	free(perm);
	if (rc < 0)
		return rc;
	struct calib_detect d;
	int drc = calib_detect_cliff(cv->x, cv->y, cv->n, LINE_JUMP, &d);
	double spread = cliff_spread(cv, LINE_JUMP, true);
	*line = drc == 0 ? d.aux : 64;
	char method[CALIB_METHOD_MAX];
	snprintf(method, sizeof(method),
		 "%s: two dependent loads per random 512 B block of %zu KiB, d bytes apart; first d where time steps up x%.1f",
		 drc == 0 ? "pair test" : "pair test found no step, assumed 64", nblocks / 2, LINE_JUMP);
	cr_param(r, "l1_line_bytes", *line, "bytes", method, spread, drc == 0 ? d.confidence : 0);
	return 0;
}

#define SPACING 256.0 /* bytes between chase nodes: one line each for lines up to 256 B */

static int sizes(struct chase *ch, struct calib_result *r, struct calib_level *lv, size_t *nlv)
{
	struct calib_ctx *c = ch->c;
	size_t le = (size_t)SPACING / 4; /* uints per node */
	double line = SPACING;
	size_t maxb = (c->quick ? 32u : 128u) << 20;
	if (c->dev->max_alloc && maxb > c->dev->max_alloc / 2)
		maxb = (size_t)(c->dev->max_alloc / 2);
	unsigned *next = hp_alloc(maxb);
	if (!next)
		return -ENOMEM;
	struct calib_curve *cv = cr_curve(r, "latency_vs_working_set", "bytes", "cycles");
	int rc = 0;
	for (double b = 4096; b <= (double)maxb * 1.0001; b *= M_SQRT2) {
		size_t bytes = (size_t)(b / line) * (size_t)line;
		size_t nodes = bytes / (size_t)line;
		cr_chase_cycle(next, nodes, le, nodes, 777); /* one "page": fully random */
		long steps = (long)(2 * nodes);
		if (steps < (c->quick ? 300000 : 1000000))
			steps = c->quick ? 300000 : 1000000;
		double v[CR_MAX_REPS];
		if ((rc = chase_measure(ch, next, nodes * le, 0, steps, v)) < 0)
			break;
		for (unsigned k = 0; k < c->reps; k++)
			v[k] = to_cycles(v[k], c->clock_mhz);
		cr_point(cv, (double)bytes, v, c->reps);
	}
	release(ch, next);
	if (rc < 0)
		return rc;
	calib_detect_levels(cv->x, cv->y, cv->n, LEVEL_JUMP, lv, 6, nlv);
	return *nlv > 1 ? 0 : -ENOENT;
}

/* Report the levels found by the size sweep. */
static void report_levels(struct calib_ctx *c, struct calib_result *r, const struct calib_curve *cv,
			  const struct calib_level *lv, size_t nlv, size_t maxb)
{
	char name[CALIB_NAME_MAX], method[CALIB_METHOD_MAX];
	unsigned level = 0;
	for (size_t i = 0; i < nlv; i++) {
		if (lv[i].open) {
			snprintf(method, sizeof(method),
				 "pointer chase: plateau beyond the last cache level seen, sweep up to %zu MiB (DRAM unless a "
				 "bigger cache hides it)",
				 maxb >> 20);
			double conf = maxb >= (64u << 20) ? lv[i].confidence : lv[i].confidence * 0.5;
			cr_param(r, "dram_latency_cycles", lv[i].latency, "cycles", method, cv->spread[lv[i].last], conf);
			cr_param(r, "dram_latency_ns", lv[i].latency / c->clock_mhz * 1e3, "ns", method,
				 cv->spread[lv[i].last], conf);
			continue;
		}
		level++;
		snprintf(method, sizeof(method),
			 "random chase, nodes %.0f B apart, 4 KiB..%zu MiB: last size on plateau %u (rise x%.1f)", SPACING,
			 maxb >> 20, level, LEVEL_JUMP);
		snprintf(name, sizeof(name), "l%u_size_bytes", level);
		cr_param(r, name, lv[i].size, "bytes", method, cv->spread[lv[i].last], lv[i].confidence);
		snprintf(name, sizeof(name), "l%u_latency_cycles", level);
		cr_param(r, name, lv[i].latency, "cycles", "median time per access on the plateau x device clock",
			 cv->spread[lv[i].last], lv[i].confidence);
	}
}

static int ways(struct chase *ch, struct calib_result *r, double line, double l1size)
{
	struct calib_ctx *c = ch->c;
	size_t stride = 1;
	while ((double)stride < l1size)
		stride *= 2;
	long page = sysconf(_SC_PAGESIZE);
	if (c->dev->is_cpu && page > 0 && (size_t)page < stride)
		stride = (size_t)page;
	size_t se = stride / 4, kmax = c->quick ? 24 : 32;
	/* not set 0: page-aligned data of the runtime (kernel arguments, the out buffer, stacks) sits
	 * there and takes ways of it (the chase measured 8 of 12). Other data of the runtime can sit
	 * in any set and only ever takes ways: the sweep runs in three sets (the 37th, 13th and 57th
	 * line of the stride) and the most ways found is the figure (the CI host's 12-way L1 read 8
	 * in the 37th line's set three times in a row, 12 elsewhere) */
	static const unsigned set_lines[] = {37, 13, 57};
	unsigned *next = hp_alloc(kmax * se * sizeof(unsigned));
	if (!next)
		return -ENOMEM;
	int rc = 0, drc = -1;
	struct calib_detect d = {0};
	double spread = INFINITY;
	size_t off = 0;
	for (size_t si = 0; si < sizeof(set_lines) / sizeof(set_lines[0]) && rc >= 0; si++) {
		size_t o = (size_t)(set_lines[si] * line) % stride / 4;
		char cname[64];
		snprintf(cname, sizeof(cname), si ? "latency_vs_same_set_lines_%zu" : "latency_vs_same_set_lines", o * 4);
		struct calib_curve *cv = cr_curve(r, cname, "lines", "cycles");
		if (!cv)
			break;
		for (size_t k = 1; k <= kmax; k++) {
			for (size_t i = 0; i < k; i++)
				next[o + i * se] = (unsigned)(o + ((i + 1) % k) * se);
			double v[CR_MAX_REPS];
			if ((rc = chase_measure(ch, next, kmax * se, (unsigned)o, c->quick ? 200000 : 1000000, v)) < 0)
				break;
			for (unsigned j = 0; j < c->reps; j++)
				v[j] = to_cycles(v[j], c->clock_mhz);
			cr_point(cv, (double)k, v, c->reps);
		}
		struct calib_detect dd;
		if (rc >= 0 && calib_detect_cliff(cv->x, cv->y, cv->n, WAYS_JUMP, &dd) == 0 && (drc != 0 || dd.value > d.value)) {
			d = dd;
			drc = 0;
			off = o;
			spread = cliff_spread(cv, WAYS_JUMP, false);
		}
	}
	release(ch, next);
	if (rc < 0)
		return rc;
	char method[CALIB_METHOD_MAX];
	snprintf(method, sizeof(method),
		 "k lines %zu B apart (%s: one set, %zu B into it; the most of 3 sets): last k before time per access jumps x%.1f",
		 stride, c->dev->is_cpu && (double)stride < l1size ? "the page" : "a power of two >= the L1 size", off * 4,
		 WAYS_JUMP);
	if (drc == 0) {
		cr_param(r, "l1_assoc", d.value, "ways", method, spread, d.confidence);
		cr_param(r, "l1_set_bytes", d.value * line, "bytes", "l1_assoc x l1_line_bytes (the set size)", spread,
			 d.confidence);
	} else {
		cr_param(r, "l1_assoc", (double)kmax, "ways", "no jump up to the sweep's end: lower bound", INFINITY, 0);
	}
	return 0;
}

int bench_cache(struct calib_ctx *c, struct calib_result *r)
{
	char err[1024];
	struct chase ch = {.c = c};
	int rc = cl_prog_build(c->cl, chase_src, NULL, &ch.p, err, sizeof(err));
	if (rc < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "%s", err);
		return rc;
	}
	if ((rc = cl_buf_create(c->cl, 64, NULL, &ch.out)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "cannot allocate a buffer");
		goto out;
	}
	struct calib_level lv[6];
	size_t nlv = 0;
	double line = 64;
	if ((rc = sizes(&ch, r, lv, &nlv)) < 0 || lv[0].open) {
		snprintf(r->skipped, sizeof(r->skipped), "size sweep failed or found no cache level (%d)", rc);
		rc = rc < 0 ? rc : -ENOENT;
		goto out;
	}
	const struct calib_curve *scv = &r->curves[r->ncurves - 1];
	size_t maxb = (size_t)scv->x[scv->n - 1];
	if ((rc = line_size(&ch, r, 4 * lv[0].size, &line)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "line-size sweep failed (%d)", rc);
		goto out;
	}
	report_levels(c, r, scv, lv, nlv, maxb);
	if ((rc = ways(&ch, r, line, lv[0].size)) < 0) {
		snprintf(r->skipped, sizeof(r->skipped), "associativity sweep failed (%d)", rc);
		goto out;
	}
	rc = 0;
out:
	cl_buf_free(c->cl, ch.next);
	cl_buf_free(c->cl, ch.out);
	cl_prog_free(ch.p);
	return rc;
}
