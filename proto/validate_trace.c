#include "validate_trace.h"
#include "fail.h"

#include "trace/window_codec.h"

#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>

/* The warm-up summary: a line size, modes 1..3, lines whose addresses fit 64 bits. */
static int validate_warm(const Prof__TraceWindow *tw, char *err, size_t errlen)
{
	if (tw->n_warm_lines == 0)
		return 0;
	uint32_t lb = tw->warm_line_bytes;
	if (lb < 4 || lb > 4096 || (lb & (lb - 1)))
		return fail(err, errlen, "trace_window: warm-up line size %u (a power of two in 4..4096)", lb);
	if (tw->n_warm_lines > VALIDATE_TRACE_MAX_WARM)
		return fail(err, errlen, "trace_window: %zu warm-up lines (max %u)", tw->n_warm_lines,
			    VALIDATE_TRACE_MAX_WARM);
	uint64_t line = 0, max = UINT64_MAX / lb;
	for (size_t i = 0; i < tw->n_warm_lines; i++) {
		if (trace_window_warm_next(tw, i, &line) == 0)
			return fail(err, errlen, "trace_window: warm-up line %zu without a mode", i);
		if (line > max)
			return fail(err, errlen, "trace_window: warm-up line %zu beyond the address space", i);
	}
	return 0;
}

int validate_trace_window(const Prof__TraceWindow *tw, char *err, size_t errlen)
{
	size_t n = tw->n_pc_delta;
	if (tw->arch > 4)
		return fail(err, errlen, "trace_window: unknown arch %u", tw->arch);
	if (!isfinite(tw->sampled_share) || tw->sampled_share < 0 || tw->sampled_share > 1)
		return fail(err, errlen, "trace_window: sampled_share %g outside [0,1]", tw->sampled_share);
	if (n > VALIDATE_TRACE_MAX_INSNS)
		return fail(err, errlen, "trace_window: %zu instructions (max %u)", n,
			    VALIDATE_TRACE_MAX_INSNS);
	if (tw->n_iclass != n || tw->n_nreads != n || tw->n_nwrites != n)
		return fail(err, errlen,
			    "trace_window: columns of different lengths (%zu pcs, %zu classes, %zu nreads, "
			    "%zu nwrites)",
			    n, tw->n_iclass, tw->n_nreads, tw->n_nwrites);
	size_t reads = 0, writes = 0, mems = 0;
	for (size_t i = 0; i < n; i++) {
		uint32_t c = tw->iclass[i];
		if ((c & 7) > 5 || c > 0x3f)
			return fail(err, errlen, "trace_window: instruction %zu: bad class 0x%x", i, c);
		/* memory mode, as in collector/edag (edag_default_mem) */
		unsigned mem = (c & 0x20) ? (c >> 3) & 3 : (c & 7) == 1 ? 1 : (c & 7) == 2 ? 2 : 0;
		mems += mem != 0;
		if (tw->nreads[i] > VALIDATE_TRACE_MAX_REGS || tw->nwrites[i] > VALIDATE_TRACE_MAX_REGS)
			return fail(err, errlen, "trace_window: instruction %zu: more than %u registers", i,
				    VALIDATE_TRACE_MAX_REGS);
		reads += tw->nreads[i];
		writes += tw->nwrites[i];
	}
	if (reads != tw->n_regs_read || writes != tw->n_regs_written)
		return fail(err, errlen, "trace_window: %zu/%zu registers read/written for counts %zu/%zu",
			    tw->n_regs_read, tw->n_regs_written, reads, writes);
	for (size_t i = 0; i < tw->n_regs_read; i++)
		if (tw->regs_read[i] > 255)
			return fail(err, errlen, "trace_window: register number %u above 255",
				    tw->regs_read[i]);
	for (size_t i = 0; i < tw->n_regs_written; i++)
		if (tw->regs_written[i] > 255)
			return fail(err, errlen, "trace_window: register number %u above 255",
				    tw->regs_written[i]);
	if (tw->n_addr_delta != mems || tw->n_size != mems)
		return fail(err, errlen,
			    "trace_window: %zu memory instructions but %zu addresses and %zu sizes", mems,
			    tw->n_addr_delta, tw->n_size);
	for (size_t i = 0; i < tw->n_size; i++)
		if (tw->size[i] == 0 || tw->size[i] > VALIDATE_TRACE_MAX_ACCESS)
			return fail(err, errlen, "trace_window: access size %u outside 1..%u", tw->size[i],
				    VALIDATE_TRACE_MAX_ACCESS);
	if (tw->capture > 3)
		return fail(err, errlen, "trace_window: unknown capture %u", tw->capture);
	return validate_warm(tw, err, errlen);
}
