/* TraceWindow records <-> instructions, and the approximate eDAG: whole-run
 * estimates combined from sampled windows. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "edag/edag.h"

/* ---------------------------------------------------------------- decode */

void edag_window_iter_init(struct edag_window_iter *it, const Prof__TraceWindow *tw)
{
	memset(it, 0, sizeof(*it));
	it->tw = tw;
}

static int wbad(struct edag_window_iter *it, int rc, const char *why)
{
	it->why = why;
	return rc;
}

int edag_window_next(struct edag_window_iter *it, struct edag_insn *in)
{
	const Prof__TraceWindow *tw = it->tw;
	size_t i = it->i;
	it->why = NULL;
	if (i >= tw->n_pc_delta)
		return 0;
	if (i >= tw->n_iclass || i >= tw->n_nreads || i >= tw->n_nwrites)
		return wbad(it, -EINVAL, "the iclass/nreads/nwrites columns are shorter than pc_delta");
	memset(in, 0, sizeof(*in));
	/* the columns this instruction takes: consumed even when it is bad, so
	 * that the next one is read from the right place */
	uint32_t c = tw->iclass[i];
	uint32_t nr = tw->nreads[i], nw = tw->nwrites[i];
	if (nr > EDAG_MAX_REGS || nw > EDAG_MAX_REGS)
		return wbad(it, -EINVAL, "more than 16 registers read or written");
	if (it->ir + nr > tw->n_regs_read || it->iw + nw > tw->n_regs_written)
		return wbad(it, -EINVAL, "the register columns are shorter than nreads/nwrites say");
	unsigned cls = c & 7;
	unsigned mem = (c & 0x20) ? (c >> 3) & 3 : (cls < EDAG_NCLASS ? edag_default_mem(cls) : 0);
	if (mem && (it->im >= tw->n_addr_delta || it->im >= tw->n_size))
		return wbad(it, -EINVAL, "the addr_delta/size columns are shorter than the memory instructions");
	it->pc += (uint64_t)tw->pc_delta[i];
	in->pc = it->pc;
	const char *why = NULL;
	if (cls >= EDAG_NCLASS || c > 0x3f)
		why = "bad iclass (class 0..5, memory mode bits 3..5)";
	in->cls = (uint8_t)cls;
	in->mem = (uint8_t)mem;
	for (uint32_t k = 0; k < nr; k++) {
		uint32_t r = tw->regs_read[it->ir++];
		if (r >= EDAG_NREGS)
			why = "register number over 255";
		in->rd[k] = (uint8_t)r;
	}
	for (uint32_t k = 0; k < nw; k++) {
		uint32_t r = tw->regs_written[it->iw++];
		if (r >= EDAG_NREGS)
			why = "register number over 255";
		in->wr[k] = (uint8_t)r;
	}
	in->nread = (uint8_t)nr;
	in->nwrite = (uint8_t)nw;
	if (in->mem) {
		it->addr += (uint64_t)tw->addr_delta[it->im];
		in->addr = it->addr;
		in->size = tw->size[it->im];
		it->im++;
		if (in->size == 0 || in->size > 4096)
			why = "access size outside 1..4096";
	}
	it->i++;
	if (why)
		return wbad(it, -EBADMSG, why);
	return 1;
}

/* ---------------------------------------------------------------- encode */

int edag_window_encode(const struct edag_insn *ins, size_t n, Prof__TraceWindow *tw)
{
	size_t nr = 0, nw = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		if (ins[i].cls >= EDAG_NCLASS || ins[i].nread > EDAG_MAX_REGS ||
		    ins[i].nwrite > EDAG_MAX_REGS)
			return -EINVAL;
		nr += ins[i].nread;
		nw += ins[i].nwrite;
		nm += ins[i].mem != 0;
	}
	tw->pc_delta = malloc((n ? n : 1) * sizeof(int64_t));
	tw->iclass = malloc((n ? n : 1) * sizeof(uint32_t));
	tw->nreads = malloc((n ? n : 1) * sizeof(uint32_t));
	tw->nwrites = malloc((n ? n : 1) * sizeof(uint32_t));
	tw->regs_read = malloc((nr ? nr : 1) * sizeof(uint32_t));
	tw->regs_written = malloc((nw ? nw : 1) * sizeof(uint32_t));
	tw->addr_delta = malloc((nm ? nm : 1) * sizeof(int64_t));
	tw->size = malloc((nm ? nm : 1) * sizeof(uint32_t));
	if (!tw->pc_delta || !tw->iclass || !tw->nreads || !tw->nwrites || !tw->regs_read ||
	    !tw->regs_written || !tw->addr_delta || !tw->size) {
		edag_window_encode_free(tw);
		return -ENOMEM;
	}
	tw->n_pc_delta = tw->n_iclass = tw->n_nreads = tw->n_nwrites = n;
	tw->n_regs_read = nr;
	tw->n_regs_written = nw;
	tw->n_addr_delta = tw->n_size = nm;
	uint64_t pc = 0, addr = 0;
	size_t ir = 0, iw = 0, im = 0;
	for (size_t i = 0; i < n; i++) {
		const struct edag_insn *in = &ins[i];
		tw->pc_delta[i] = (int64_t)(in->pc - pc);
		pc = in->pc;
		uint32_t c = in->cls;
		if (in->mem != edag_default_mem(in->cls))
			c |= 0x20u | ((uint32_t)in->mem << 3);
		tw->iclass[i] = c;
		tw->nreads[i] = in->nread;
		tw->nwrites[i] = in->nwrite;
		for (unsigned k = 0; k < in->nread; k++)
			tw->regs_read[ir++] = in->rd[k];
		for (unsigned k = 0; k < in->nwrite; k++)
			tw->regs_written[iw++] = in->wr[k];
		if (in->mem) {
			tw->addr_delta[im] = (int64_t)(in->addr - addr);
			tw->size[im] = in->size;
			addr = in->addr;
			im++;
		}
	}
	return 0;
}

void edag_window_encode_free(Prof__TraceWindow *tw)
{
	free(tw->pc_delta);
	free(tw->iclass);
	free(tw->nreads);
	free(tw->nwrites);
	free(tw->regs_read);
	free(tw->regs_written);
	free(tw->addr_delta);
	free(tw->size);
	tw->pc_delta = tw->addr_delta = NULL;
	tw->iclass = tw->nreads = tw->nwrites = tw->regs_read = tw->regs_written = tw->size = NULL;
	tw->n_pc_delta = tw->n_iclass = tw->n_nreads = tw->n_nwrites = 0;
	tw->n_regs_read = tw->n_regs_written = tw->n_addr_delta = tw->n_size = 0;
}

/* ---------------------------------------------------------------- approximate eDAG */

/* Student t quantile 0.975 for df degrees of freedom. */
static double t975(size_t df)
{
	static const double t[31] = {0,	    12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365,
				     2.306, 2.262,  2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
				     2.120, 2.110,  2.101, 2.093, 2.086, 2.080, 2.074, 2.069,
				     2.064, 2.060,  2.056, 2.052, 2.048, 2.045, 2.042};
	return df <= 30 ? t[df] : df <= 60 ? 2.0 : 1.96;
}

/* Weighted mean of the per-instruction rates x[i] and its 95% interval,
 * scaled to total. */
static void estimate(const double *x, const double *w, size_t n, double total, struct edag_estimate *out)
{
	double sw = 0, sx = 0;
	for (size_t i = 0; i < n; i++) {
		sw += w[i];
		sx += w[i] * x[i];
	}
	double mean = sw > 0 ? sx / sw : 0;
	out->value = mean * total;
	if (n < 2 || sw <= 0) {
		out->lo = out->hi = out->value;
		return;
	}
	double v = 0;
	for (size_t i = 0; i < n; i++) {
		double wi = w[i] / sw;
		v += wi * wi * (x[i] - mean) * (x[i] - mean);
	}
	v *= (double)n / (double)(n - 1);
	double half = t975(n - 1) * sqrt(v) * total;
	out->lo = fmax(0, out->value - half);
	out->hi = out->value + half;
}

int edag_approx_combine(const struct edag_window_result *w, size_t n, double m, double alpha0,
			struct edag_approx *out)
{
	memset(out, 0, sizeof(*out));
	if (n == 0)
		return -EINVAL;
	if (!(m >= 1))
		m = 1;
	double *x = calloc(n * 7, sizeof(double));
	if (!x)
		return -ENOMEM;
	double *wt = x + n * 6;
	out->windows = n;
	out->coverage_known = true;
	out->D_min = INFINITY;
	size_t used = 0;
	for (size_t i = 0; i < n; i++) {
		const struct edag_window_result *r = &w[i];
		if (r->n_insns == 0)
			continue;
		double ni = (double)r->n_insns;
		out->sampled_insns += r->n_insns;
		if (r->info.represented_insns >= r->n_insns) {
			out->represented_insns += (double)r->info.represented_insns;
		} else {
			out->represented_insns += ni;
			out->coverage_known = false;
		}
		double lambda = ((double)r->mt.W - (double)r->mt.D) / m + (double)r->mt.D;
		x[0 * n + used] = (double)r->mt.vertices / ni;
		x[1 * n + used] = (double)r->mt.W / ni;
		x[2 * n + used] = (double)r->mt.D / ni;
		x[3 * n + used] = (double)r->mt.cp_vertices / ni;
		x[4 * n + used] = (double)r->mt.cp_compute / ni;
		x[5 * n + used] = lambda / ni;
		wt[used] = r->info.share > 0 ? r->info.share : 1;
		double d = (double)r->mt.D;
		out->D_min = fmin(out->D_min, d);
		out->D_max = fmax(out->D_max, d);
		out->D_mean += d;
		used++;
	}
	if (used == 0) {
		free(x);
		memset(out, 0, sizeof(*out));
		return -EINVAL;
	}
	out->D_mean /= (double)used;
	/* rates live in the first `used` slots of each row of n */
	double R = out->represented_insns;
	estimate(x + 0 * n, wt, used, R, &out->V);
	estimate(x + 1 * n, wt, used, R, &out->W);
	estimate(x + 2 * n, wt, used, R, &out->D);
	estimate(x + 3 * n, wt, used, R, &out->cp_vertices);
	estimate(x + 4 * n, wt, used, R, &out->cp_compute);
	estimate(x + 5 * n, wt, used, R, &out->lambda);
	out->coverage = R > 0 ? (double)out->sampled_insns / R : 0;
	double C = out->cp_compute.value;
	struct edag_estimate *L = &out->Lambda;
	double lv[3] = {out->lambda.value, out->lambda.lo, out->lambda.hi};
	double Lv[3];
	for (int k = 0; k < 3; k++) {
		double den = lv[k] * alpha0 + C;
		Lv[k] = den > 0 ? lv[k] / den : 0;
	}
	L->value = Lv[0];
	L->lo = Lv[1];
	L->hi = Lv[2];
	free(x);
	return 0;
}
