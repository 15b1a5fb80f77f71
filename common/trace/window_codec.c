/* TraceWindow records <-> instructions (window_codec.h). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "trace/window_codec.h"

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

struct insn_array {
	const struct edag_insn *ins;
};

static void array_get(void *arg, size_t i, struct edag_insn *out)
{
	*out = ((const struct insn_array *)arg)->ins[i];
}

int edag_window_encode(const struct edag_insn *ins, size_t n, Prof__TraceWindow *tw)
{
	struct insn_array a = {ins};
	return trace_window_encode_cols(n, array_get, &a, tw);
}

int trace_window_encode_cols(size_t n, trace_insn_get_fn get, void *arg, Prof__TraceWindow *tw)
{
	size_t nr = 0, nw = 0, nm = 0;
	struct edag_insn in;
	for (size_t i = 0; i < n; i++) {
		get(arg, i, &in);
		if (in.cls >= EDAG_NCLASS || in.nread > EDAG_MAX_REGS || in.nwrite > EDAG_MAX_REGS)
			return -EINVAL;
		nr += in.nread;
		nw += in.nwrite;
		nm += in.mem != 0;
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
		get(arg, i, &in);
		tw->pc_delta[i] = (int64_t)(in.pc - pc);
		pc = in.pc;
		uint32_t c = in.cls;
		if (in.mem != edag_default_mem(in.cls))
			c |= 0x20u | ((uint32_t)in.mem << 3);
		tw->iclass[i] = c;
		tw->nreads[i] = in.nread;
		tw->nwrites[i] = in.nwrite;
		for (unsigned k = 0; k < in.nread; k++)
			tw->regs_read[ir++] = in.rd[k];
		for (unsigned k = 0; k < in.nwrite; k++)
			tw->regs_written[iw++] = in.wr[k];
		if (in.mem) {
			tw->addr_delta[im] = (int64_t)(in.addr - addr);
			tw->size[im] = in.size;
			addr = in.addr;
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
	free(tw->warm_lines);
	tw->warm_lines = NULL;
	tw->n_warm_lines = 0;
	tw->pc_delta = tw->addr_delta = NULL;
	tw->iclass = tw->nreads = tw->nwrites = tw->regs_read = tw->regs_written = tw->size = NULL;
	tw->n_pc_delta = tw->n_iclass = tw->n_nreads = tw->n_nwrites = 0;
	tw->n_regs_read = tw->n_regs_written = tw->n_addr_delta = tw->n_size = 0;
}

int trace_window_encode_warm(Prof__TraceWindow *tw, const uint64_t *lines, size_t n, uint32_t line_bytes)
{
	free(tw->warm_lines);
	tw->warm_lines = NULL;
	tw->n_warm_lines = 0;
	if (n == 0)
		return 0;
	tw->warm_lines = malloc(n * sizeof(*tw->warm_lines));
	if (!tw->warm_lines)
		return -ENOMEM;
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t line = lines[i] >> 2;
		/* (line - prev) * 4 + mode, as a signed difference (two's complement) */
		tw->warm_lines[i] = (int64_t)(((line - prev) << 2) | (lines[i] & 3));
		prev = line;
	}
	tw->n_warm_lines = n;
	tw->warm_line_bytes = line_bytes;
	return 0;
}
