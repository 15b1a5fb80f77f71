/* TraceWindow records (proto/trace.proto) <-> instructions: the one encoder
 * and decoder of the column-wise, delta-encoded instruction windows. The
 * agent encodes ptrace windows and imported traces with it
 * (agent/trace/encode.c); the collector reads them back
 * (collector/edag, store, report). Pure: no I/O.
 *
 * Wire form of one instruction: pc_delta (from the previous pc, the first from
 * 0), iclass (bits 0-2 the class; when the memory mode differs from what the
 * class implies — loads read, stores write, others nothing — bit 5 and the
 * mode in bits 3-4), nreads/nwrites and that many register numbers, and for
 * an instruction that accesses memory one addr_delta and one size. */
#ifndef COMMON_TRACE_WINDOW_CODEC_H
#define COMMON_TRACE_WINDOW_CODEC_H

#include <stddef.h>

#include "profiler.pb-c.h"
#include "trace/native.h"

/* Iterate the instructions of a (validated) TraceWindow. */
struct edag_window_iter {
	const Prof__TraceWindow *tw;
	size_t i, ir, iw, im;
	uint64_t pc, addr;
	const char *why; /* after an error: what is wrong */
};
void edag_window_iter_init(struct edag_window_iter *it, const Prof__TraceWindow *tw);
/* 1 and *in filled, 0 at the end, -EBADMSG for a bad instruction (class,
 * register or size out of range: skipped, the next call goes on after it),
 * -EINVAL if the columns are inconsistent (nothing more can be read). */
int edag_window_next(struct edag_window_iter *it, struct edag_insn *in);

/* Fills *out with instruction i of the caller's sequence (called twice per
 * instruction, in order). */
typedef void (*trace_insn_get_fn)(void *arg, size_t i, struct edag_insn *out);

/* Encode the columns of n instructions given by get into tw (columns
 * malloc'd; free with edag_window_encode_free). Metadata (arch, tid, share,
 * ...) is left to the caller. -EINVAL for an instruction with a class or
 * register count out of range, -ENOMEM. */
int trace_window_encode_cols(size_t n, trace_insn_get_fn get, void *arg, Prof__TraceWindow *tw);
/* The same from an array. */
int edag_window_encode(const struct edag_insn *ins, size_t n, Prof__TraceWindow *tw);
/* Free the columns and zero their counts (metadata kept). */
void edag_window_encode_free(Prof__TraceWindow *tw);

/* The warm-up summary (lines as common/trace/warm.h gives them: line << 2 |
 * mode, oldest last access first) into tw's warm_lines and warm_line_bytes
 * (freed by edag_window_encode_free). 0 or -ENOMEM. */
int trace_window_encode_warm(Prof__TraceWindow *tw, const uint64_t *lines, size_t n, uint32_t line_bytes);
/* Entry i of a validated window's warm_lines, decoded in order: *line starts
 * at 0 and follows the entries; the entry's mode (1 read, 2 written, 3 both). */
static inline unsigned trace_window_warm_next(const Prof__TraceWindow *tw, size_t i, uint64_t *line)
{
	int64_t v = tw->warm_lines[i];
	*line += (uint64_t)v >> 2 | ((uint64_t)(v < 0) << 62 | (uint64_t)(v < 0) << 63);
	return (unsigned)(v & 3);
}

#endif
