#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) || defined(CONFIG_AGENT_TRACE_IMPORT)

#include "encode.h"
#include "trace/window_codec.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* A decoded record as the codec's instruction: one access per instruction on
 * the wire, the first operand (a second one — string moves — is not
 * carried); sizes the decoder could not tell (0) count as one byte (the wire
 * allows 1..4096). */
static void rec_get(void *arg, size_t i, struct edag_insn *in)
{
	const struct trace_rec *r = &((const struct trace_window *)arg)->rec[i];
	memset(in, 0, sizeof(*in));
	in->pc = r->pc;
	in->cls = r->iclass & 7;
	in->mem = r->nmem ? r->rw[0] & 3 : 0;
	in->nread = r->nread;
	in->nwrite = r->nwrite;
	memcpy(in->rd, r->read, r->nread);
	memcpy(in->wr, r->written, r->nwrite);
	if (r->nmem) {
		in->addr = r->addr[0];
		in->size = r->size[0] ? r->size[0] : 1;
	}
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
	tw->capture = w->capture;
	tw->end_reason = (uint32_t)w->end;
	int rc = trace_window_encode_cols(w->n, rec_get, (void *)w, tw);
	if (rc == 0 && w->nwarm) {
		tw->warm_insns = w->warm_insns;
		rc = trace_window_encode_warm(tw, w->warm_lines, w->nwarm, w->warm_line_bytes);
		if (rc < 0)
			edag_window_encode_free(tw);
	}
	return rc;
}

void trace_encode_free(Prof__TraceWindow *tw)
{
	edag_window_encode_free(tw);
	prof__trace_window__init(tw);
}

#endif /* CONFIG_AGENT_TRACER || CONFIG_AGENT_TRACE_IMPORT */
