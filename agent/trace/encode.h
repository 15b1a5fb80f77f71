/* A captured window as a TraceWindow record (proto/trace.proto): column-wise,
 * delta-encoded pcs and addresses, register numbers as decoded. The agent's
 * one TraceWindow encoder: ptrace windows (agent trace) and imported full
 * traces (agent trace-import) both go through it; the column codec itself is
 * common/trace/window_codec.c, shared with the collector. */
#ifndef AGENT_TRACE_ENCODE_H
#define AGENT_TRACE_ENCODE_H

#include <stdint.h>

#include "profiler.pb-c.h"
#include "window.h"

struct trace_encode_info {
	enum trace_arch arch;
	int32_t pid;
	uint64_t t_ns; /* window start relative to Hello.base_ns */
	uint32_t window_index;
	double sampled_share;
	uint64_t represented_insns;
	uint64_t trace_pos; /* pieces of a continuous run: its first instruction's position from 1; else 0 */
};

/* Fill tw (initialised here) from w; arrays are malloc'd: free with
 * trace_encode_free. Returns 0 or -ENOMEM. */
int trace_encode_window(const struct trace_window *w, const struct trace_encode_info *info, Prof__TraceWindow *tw);
void trace_encode_free(Prof__TraceWindow *tw);

#endif
