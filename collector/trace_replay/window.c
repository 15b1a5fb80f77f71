/* A replayed window as the TraceWindow record an agent's replay window is
 * (trace_replay.h): the shared codec (common/trace/window_codec.h). */
#include "trace_replay.h"

#include <errno.h>

#include "profiler.pb-c.h"
#include "trace/window_codec.h"

/* agent/trace/window.h enum trace_end, as TraceWindow.end_reason carries it */
enum { END_COMPLETE = 0, END_ERROR = 3, END_SYSCALL = 4, END_FAULT = 6 };

int trace_replay_window(const struct trace_replay_snap *snap, const struct trace_replay_result *r, int32_t pid,
			int32_t tid, uint32_t window_index, Prof__TraceWindow *tw)
{
	if (snap->arch != EDAG_ARCH_AARCH64 && snap->arch != EDAG_ARCH_ARM)
		return -EINVAL;
	prof__trace_window__init(tw);
	int rc = edag_window_encode(r->ins, r->n, tw);
	if (rc < 0)
		return rc;
	if (r->nwarm && (rc = trace_window_encode_warm(tw, r->warm_lines, r->nwarm, TRACE_REPLAY_WARM_LINE)) < 0) {
		edag_window_encode_free(tw);
		return rc;
	}
	tw->arch = snap->arch;
	tw->pid = pid;
	tw->tid = tid;
	tw->window_index = window_index;
	tw->capture = 2; /* replayed in an emulator */
	tw->warm_insns = r->warm_done;
	switch (r->end) {
	case TRACE_REPLAY_END_LIMIT: tw->end_reason = END_COMPLETE; break;
	case TRACE_REPLAY_END_SYSCALL: tw->end_reason = END_SYSCALL; break;
	case TRACE_REPLAY_END_UNMAPPED:
	case TRACE_REPLAY_END_PAGES: tw->end_reason = END_FAULT; break;
	case TRACE_REPLAY_END_FAULT: tw->end_reason = END_ERROR; break;
	}
	return 0;
}
