#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) || defined(CONFIG_AGENT_TRACE_IMPORT)

#include "encode.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The class a TraceWindow carries: bits 0-2 the class; when the memory mode
 * differs from what the class implies (loads read, stores write, others
 * nothing), bit 5 and the mode in bits 3-4. */
static uint32_t class_word(const struct trace_rec *r)
{
	unsigned mode = r->nmem ? r->rw[0] & 3 : 0;
	unsigned implied = r->iclass == TRACE_LOAD ? 1 : r->iclass == TRACE_STORE ? 2 : 0;
	uint32_t w = r->iclass & 7;
	if (mode != implied)
		w |= 0x20 | (mode << 3);
	return w;
}

int trace_encode_window(const struct trace_window *w, const struct trace_encode_info *info, Prof__TraceWindow *tw)
{
	prof__trace_window__init(tw);
	tw->arch = (uint32_t)info->arch;
	tw->pid = info->pid;
	tw->tid = (int32_t)w->tid;
	tw->t_ns = info->t_ns;
	tw->sampled_share = info->sampled_share;
	tw->window_index = info->window_index;
	tw->stop_ns = w->stop_ns;
	tw->represented_insns = info->represented_insns;
	tw->trace_pos = info->trace_pos;
	size_t n = w->n, nr = 0, nw = 0, nm = 0;
	for (size_t i = 0; i < n; i++) {
		nr += w->rec[i].nread;
		nw += w->rec[i].nwrite;
		nm += w->rec[i].nmem ? 1 : 0;
	}
	tw->pc_delta = malloc((n ? n : 1) * sizeof(*tw->pc_delta));
	tw->iclass = malloc((n ? n : 1) * sizeof(*tw->iclass));
	tw->nreads = malloc((n ? n : 1) * sizeof(*tw->nreads));
	tw->nwrites = malloc((n ? n : 1) * sizeof(*tw->nwrites));
	tw->regs_read = malloc((nr ? nr : 1) * sizeof(*tw->regs_read));
	tw->regs_written = malloc((nw ? nw : 1) * sizeof(*tw->regs_written));
	tw->addr_delta = malloc((nm ? nm : 1) * sizeof(*tw->addr_delta));
	tw->size = malloc((nm ? nm : 1) * sizeof(*tw->size));
	if (!tw->pc_delta || !tw->iclass || !tw->nreads || !tw->nwrites || !tw->regs_read || !tw->regs_written ||
	    !tw->addr_delta || !tw->size) {
		trace_encode_free(tw);
		return -ENOMEM;
	}
	uint64_t pc = 0, addr = 0;
	for (size_t i = 0; i < n; i++) {
		const struct trace_rec *r = &w->rec[i];
		tw->pc_delta[i] = (int64_t)(r->pc - pc);
		pc = r->pc;
		tw->iclass[i] = class_word(r);
		tw->nreads[i] = r->nread;
		tw->nwrites[i] = r->nwrite;
		for (uint8_t k = 0; k < r->nread; k++)
			tw->regs_read[tw->n_regs_read++] = r->read[k];
		for (uint8_t k = 0; k < r->nwrite; k++)
			tw->regs_written[tw->n_regs_written++] = r->written[k];
		/* One access per instruction on the wire: the first operand (a second one — string
		 * moves — is not carried). */
		if (r->nmem) {
			tw->addr_delta[tw->n_addr_delta++] = (int64_t)(r->addr[0] - addr);
			addr = r->addr[0];
			/* sizes the decoder could not tell (0) count as one byte; the wire allows 1..4096 */
			tw->size[tw->n_size++] = r->size[0] ? r->size[0] : 1;
		}
	}
	tw->n_pc_delta = tw->n_iclass = tw->n_nreads = tw->n_nwrites = n;
	return 0;
}

void trace_encode_free(Prof__TraceWindow *tw)
{
	free(tw->pc_delta);
	free(tw->iclass);
	free(tw->nreads);
	free(tw->nwrites);
	free(tw->regs_read);
	free(tw->regs_written);
	free(tw->addr_delta);
	free(tw->size);
	prof__trace_window__init(tw);
}

#endif /* CONFIG_AGENT_TRACER || CONFIG_AGENT_TRACE_IMPORT */
