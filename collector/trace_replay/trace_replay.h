/* Replay of a board's trace window from its snapshot (issue 36), on the
 * collector: the board's agent carries no emulator, so it serves the
 * snapshot's registers and memory pages (proto/snapshot.proto) and the
 * collector replays a bounded warm-up and a recorded span in Unicorn 2
 * (AArch64; 32-bit ARM in ARM or Thumb-2 state from CPSR.T), decoding each
 * instruction with Capstone's ARM/AArch64 detail into the eDAG engine's
 * instruction records (struct edag_insn: registers read and written, memory
 * address, size and mode).
 *
 * Pure library: no I/O of its own, no logging, no global state. Pages come
 * from the caller's page source (the agent over the live connection, a file
 * or an ELF in tests), fetched on first touch, only inside the snapshot's
 * readable maps, within a page budget. */
#ifndef COLLECTOR_TRACE_REPLAY_H
#define COLLECTOR_TRACE_REPLAY_H

#include <stddef.h>
#include <stdint.h>

#include "profiler.pb-c.h"
#include "trace/native.h"

/* Fetch the page at addr (page-aligned, page_size bytes into buf): 0, or a
 * negative errno (-EFAULT unmapped/unreadable, -EDQUOT over the agent's
 * budget, -ESRCH snapshot gone; -EAGAIN: not here yet, the replay ends with
 * TRACE_REPLAY_END_PAGES and need_page = addr, so that a caller without a
 * blocking source asks the agent for it and replays again: the replay from a
 * snapshot is deterministic). */
typedef int (*trace_replay_fetch_fn)(void *arg, uint64_t addr, uint8_t *buf, uint32_t page_size);

/* The snapshot as the replay needs it (from a validated TraceSnapshot). */
struct trace_replay_map {
	uint64_t start, end; /* page-aligned */
	uint32_t prot;	     /* bit 0 readable, 1 writable, 2 executable */
};

struct trace_replay_snap {
	unsigned arch;	    /* EDAG_ARCH_AARCH64 or EDAG_ARCH_ARM */
	const uint64_t *regs; /* aarch64 x0..x30, sp, pc, pstate (34); arm r0..r15, cpsr (17) */
	size_t nregs;
	const struct trace_replay_map *maps;
	size_t nmaps;
	uint32_t page_size;
	uint64_t tls; /* tpidr_el0 (aarch64) / TPIDRURO (arm); 0: not known */
};

struct trace_replay_config {
	uint64_t warmup;    /* instructions run before recording */
	uint64_t record;    /* instructions recorded (the window), >= 1 */
	uint32_t max_pages; /* pages fetched at most (0: 16384, the wire's bound) */
	uint32_t warm_max_lines; /* the warm-up's cache summary keeps this many lines (0: 65536) */
	/* trace_replay_resume runs this many instructions at most, then returns 1 with need_page 0
	 * (resume again: the collector's event loop bounds a replay's CPU per turn); 0: no bound */
	uint64_t slice;
	/* memory regions in the emulator at most (0: Unicorn's limit less a margin, 960; larger
	 * values are taken as that): past it the window ends with TRACE_REPLAY_END_PAGES (page_runs.h) */
	uint32_t max_regions;
};

enum trace_replay_end {
	TRACE_REPLAY_END_LIMIT = 0,  /* warmup + record instructions run */
	TRACE_REPLAY_END_SYSCALL,    /* an svc: the kernel's part is not replayed */
	TRACE_REPLAY_END_UNMAPPED,   /* an access outside the snapshot's readable maps */
	TRACE_REPLAY_END_PAGES,	     /* the page source refused a page or the budget is spent */
	TRACE_REPLAY_END_FAULT,	     /* another exception (undefined instruction, protection, ...) */
};

struct trace_replay_result {
	struct edag_insn *ins; /* recorded instructions (malloc'd: trace_replay_result_free) */
	size_t n;
	uint64_t warm_done;	 /* warm-up instructions run */
	enum trace_replay_end end;
	char why[200];		 /* the end in words ("svc at 0x...", "read of unmapped 0x...") */
	uint32_t pages;		 /* pages fetched */
	uint64_t need_page;	 /* the page the source answered -EAGAIN for (0: none) */
	uint64_t undecoded;	 /* instructions Capstone could not decode (recorded as class other) */
	/* the warm-up's summary (common/trace/warm.h): its distinct 64-byte lines, oldest last
	 * access first, as line << 2 | mode (malloc'd; NULL when none) */
	uint64_t *warm_lines;
	size_t nwarm;
};

#define TRACE_REPLAY_WARM_LINE 64u

/* The window as an agent's replay window reaches the eDAG pipeline (proto/trace.proto
 * TraceWindow: capture 2, the warm-up summary, end_reason as agent/trace/window.h numbers
 * it); columns malloc'd (edag_window_encode_free). arch, pid, tid, window_index are the
 * snapshot's. 0, -EINVAL or -ENOMEM. */

int trace_replay_window(const struct trace_replay_snap *snap, const struct trace_replay_result *r, int32_t pid,
			int32_t tid, uint32_t window_index, Prof__TraceWindow *tw);

const char *trace_replay_end_name(enum trace_replay_end e);

/* Replay: 0 with *out filled (any end: out->end says why it stopped), or a
 * negative errno with a reason in out->why (-EINVAL bad snapshot, -ENOMEM,
 * -ELIBACC Unicorn/Capstone failed to start). */
int trace_replay_run(const struct trace_replay_snap *snap, trace_replay_fetch_fn fetch, void *arg,
		     const struct trace_replay_config *cfg, struct trace_replay_result *out);
void trace_replay_result_free(struct trace_replay_result *r);

/* The same in steps, for a page source that answers later (the agent over the
 * live connection): open, then resume until it returns 0. resume returns 1
 * when it stopped for out->need_page (the source said -EAGAIN): the emulator
 * is kept where it was (the instruction that touched the page runs again from
 * its start), the caller obtains the page so that the source has it and
 * resumes. With cfg->slice it also returns 1 with need_page 0 after that many
 * instructions (nothing to fetch: resume again). The snapshot, cfg and out must
 * live until close. */
struct trace_replay;
int trace_replay_open(const struct trace_replay_snap *snap, trace_replay_fetch_fn fetch, void *arg,
		      const struct trace_replay_config *cfg, struct trace_replay_result *out, struct trace_replay **t);
int trace_replay_resume(struct trace_replay *t);
void trace_replay_close(struct trace_replay *t);

/* ---------------------------------------------------------------- decoding (decode_arm.c) */
struct trace_replay_dec;
int trace_replay_dec_new(unsigned arch, struct trace_replay_dec **out);
void trace_replay_dec_free(struct trace_replay_dec *d);
/* Decode the instruction in code[0..len) at pc (thumb: 32-bit ARM's Thumb
 * state) into *in (registers and class; memory is the caller's); its length
 * in bytes, or 0 if it is no instruction Capstone knows. */
unsigned trace_replay_decode(struct trace_replay_dec *d, uint64_t pc, const uint8_t *code, size_t len, int thumb,
			     struct edag_insn *in);

#endif
