/* Replay windows: stop one thread (PTRACE_SEIZE + PTRACE_INTERRUPT), take its
 * registers, and run its next instructions in Unicorn 2 (uc_api.h) on copies
 * of the process's memory read on demand (process_vm_readv, 64 KiB at a time,
 * from the emulator's unmapped-access hook), then let the thread go: it then
 * runs those same instructions for real. Nothing the emulator writes reaches
 * the process. A window is `warm` instructions whose memory accesses are only
 * summarised as distinct cache lines (common/trace/warm.h: they warm the
 * collector's cache model) followed by `n` instructions recorded as the
 * single-step windows record them (pc, class and registers from the decoder,
 * the accesses the emulator performed). The warm-up ends before `warm` once
 * its summary holds TRACE_REPLAY_WARM_LINES lines (it keeps no more: the most
 * recent lines before the recorded part are then what it holds). It ends early, honestly, at a system
 * call, an instruction the emulator cannot execute (Unicorn 2 is QEMU 5: no
 * AVX), memory the process does not have, or the stop-time limit. A thread
 * stopped inside a system call is not replayed (what the call returns is not
 * known yet). Other threads of the process keep running: memory they change
 * while the window runs may be read before or after the change.
 *
 * x86_64 only: the registers of aarch64 and arm threads are not loaded into
 * the emulator yet (trace_replay_supported says so; windows are then
 * single-stepped). */
#ifndef AGENT_TRACE_REPLAY_H
#define AGENT_TRACE_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "decode.h"
#include "window.h"

#define TRACE_REPLAY_LINE 64		      /* bytes per line of the warm-up summary */
#define TRACE_REPLAY_WARM_MAX 4000000u	      /* warm-up instructions at most */
#define TRACE_REPLAY_WARM_LINES (1u << 16)    /* the most recent distinct lines summarised (4 MiB of data) */
#define TRACE_REPLAY_MAX_BYTES (256u << 20)   /* process memory copied per window at most */
/* from a snapshot: the program runs on meanwhile, so its working set may be copied whole */
#define TRACE_REPLAY_SNAP_MAX_BYTES (1024u << 20)

struct trace_replay_opts {
	size_t warm;	 /* instructions run first, summarised (0: none) */
	size_t n;	 /* instructions recorded after them, 1..TRACE_WINDOW_MAX */
	uint64_t max_ns; /* the thread is stopped at most this long (plus attach and detach) */
	/* optional: a buffer of buf_cap >= n records the window uses instead of its own
	 * (kept from window to window: no fresh pages to fault in while the thread waits) */
	struct trace_rec *buf;
	size_t buf_cap;
	/* snapshot (snapshot.h): the thread is stopped only to take a copy-on-write
	 * snapshot of its process, then runs on while the window replays from the
	 * snapshot for at most replay_max_ns (max_ns still bounds the stop). Where no
	 * snapshot can be taken the window replays in place (w->snap_why says why). */
	bool snapshot;
	uint64_t replay_max_ns;
	/* the thread and the agent at real-time priority for the snapshot's stop only
	 * (boost.h): a loaded machine's scheduling then no longer lengthens it */
	bool boost;
};

/* 0 when replay windows can be taken here (Unicorn 2 loadable, this
 * architecture supported); else -ELIBACC / -ENOTSUP with the reason in err. */
int trace_replay_supported(char *err, size_t errlen);

/* One replay window of thread tid. Returns 0 (w->end says how it ended; w->n
 * may be 0 when it ended in the warm-up), or -errno with the reason in err
 * (-EPERM: not allowed to ptrace; -ESRCH: no such thread). */
int trace_replay_capture(struct trace_decoder *d, pid_t tid, const struct trace_replay_opts *o,
			 struct trace_window *w, char *err, size_t errlen);

#endif
