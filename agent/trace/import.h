/* Full traces in the native format (collector/edag/README.md: the binary
 * records tools/qemu-plugin writes, or the text form), read as a stream of
 * bytes and cut into pieces of at most N instructions, each ready for the
 * TraceWindow encoder (encode.h). Pure: bytes in, pieces out through a
 * callback; memory is one piece plus one partial input record or line,
 * whatever the trace's length. The codec itself is common/trace/native.c
 * (edag_bin_decode, edag_parse_native_line), shared with the collector.
 *
 * Pieces of one continuous run carry trace_pos (position of their first
 * instruction in the run, from 1), so the collector joins them back into one
 * stream. Without `window` directives the whole input is one run of one
 * thread, a full trace: sampled share 1, represented_insns = the piece's
 * length. A text `window` directive starts a new run with its own pid, tid,
 * t_ns, share; its represented_insns goes on the run's first piece. */
#ifndef AGENT_TRACE_IMPORT_H
#define AGENT_TRACE_IMPORT_H

#include <stddef.h>
#include <stdint.h>

#include "encode.h"
#include "window.h"

/* Receives each piece (w->rec[0..w->n), w->tid) with its metadata; window_index
 * is left to the receiver. Return 0 or a negative errno to stop the import. */
typedef int (*trace_import_emit_fn)(void *ctx, const struct trace_window *w, const struct trace_encode_info *info);

struct trace_import_stats {
	uint64_t insns;	 /* instructions read */
	uint64_t pieces; /* pieces emitted */
	uint64_t runs;	 /* continuous runs (1 + window directives that started one) */
	uint64_t bytes;	 /* input bytes */
};

struct trace_import;

/* piece: instructions per piece (1..TRACE_WINDOW_MAX). default_arch: register
 * names of a text trace without an `arch` line (0: such a trace is an error). */
int trace_import_new(struct trace_import **out, size_t piece, unsigned default_arch, trace_import_emit_fn emit,
		     void *ctx);
void trace_import_free(struct trace_import *ti);
/* Feed the next bytes of the input. Returns 0, -EINVAL (err says which record
 * or line is malformed), or the emit callback's error. */
int trace_import_feed(struct trace_import *ti, const uint8_t *buf, size_t len, char *err, size_t errlen);
/* End of input: emits the last piece. -EINVAL for a truncated record or an
 * input too short to be a trace. */
int trace_import_finish(struct trace_import *ti, char *err, size_t errlen);
/* The traced architecture (enum trace_arch), 0 until the header / `arch` line was read. */
unsigned trace_import_arch(const struct trace_import *ti);
/* "binary", "text", or NULL while undecided (fewer than 8 bytes seen). */
const char *trace_import_format(const struct trace_import *ti);
const struct trace_import_stats *trace_import_stats(const struct trace_import *ti);

#endif
