/* On-device instruction-trace windows: attach to one thread with ptrace
 * (PTRACE_SEIZE + PTRACE_INTERRUPT), single-step N instructions reading the
 * registers at each step, decode each instruction once per pc (decode.h),
 * compute the effective addresses of its memory operands, then detach. The
 * tracee keeps running afterwards: signals that arrive during the window are
 * re-delivered, a thread that exits ends the window cleanly, a thread blocked
 * in a system call ends it at the time limit. Native architecture only
 * (x86_64, aarch64, arm). */
#ifndef AGENT_TRACE_WINDOW_H
#define AGENT_TRACE_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "decode.h"

#define TRACE_WINDOW_MAX 1000000u
#define TRACE_REC_MAX_REGS 16 /* per direction: what TraceWindow and the native formats carry */

struct trace_rec {
	uint64_t pc;
	uint8_t iclass, nread, nwrite, nmem;
	uint8_t read[TRACE_REC_MAX_REGS];    /* the decoder gives up to TRACE_MAX_READ */
	uint8_t written[TRACE_REC_MAX_REGS]; /* up to TRACE_MAX_WRITE */
	uint16_t size[TRACE_MAX_MEM];        /* bytes, 1..4096 (0: unknown, sent as 1) */
	uint8_t rw[TRACE_MAX_MEM]; /* bit 0 read, bit 1 write */
	uint64_t addr[TRACE_MAX_MEM];
};

enum trace_end {
	TRACE_END_COMPLETE, /* N instructions traced */
	TRACE_END_EXITED,   /* the thread exited */
	TRACE_END_BLOCKED,  /* the time limit passed while the thread slept in a system call */
	TRACE_END_ERROR,
	/* replay windows (replay.h) */
	TRACE_END_SYSCALL,     /* the next instruction enters the kernel: the emulator stops there */
	TRACE_END_UNSUPPORTED, /* an instruction the emulator cannot execute (e.g. AVX in Unicorn 2) */
	TRACE_END_FAULT,       /* an access to memory the process does not have readable */
	TRACE_END_TIME,        /* the stop-time limit (duty budget) passed */
	TRACE_END_IN_SYSCALL,  /* stopped inside a system call: nothing to replay */
};

/* How a window was taken (TraceWindow.capture). */
enum trace_capture { TRACE_CAPTURE_STEP = 1, TRACE_CAPTURE_REPLAY = 2, TRACE_CAPTURE_FULL = 3 };

/* Why a window ended, in words. */
const char *trace_end_name(enum trace_end e);

/* Where a snapshot window's time went (ns; replay.c, snapshot.c), for the agent's debug
 * log. In the stop: attach (PTRACE_SEIZE + INTERRUPT until the thread stopped), regs (its
 * registers read), clone (the injected clone until the thread stopped after it), restore
 * (its registers put back, to the detach). Off the stop: checks (before the attach: may a
 * snapshot be taken, where the vDSO's syscall is) and child (after the detach: the
 * snapshot's first stop awaited). */
struct trace_stop_parts {
	uint64_t attach, regs, clone, restore, checks, child;
	bool boosted; /* the thread ran the clone at real-time priority (replay.h, boost) */
};

struct trace_window {
	pid_t tid;
	uint64_t start_ns; /* CLOCK_MONOTONIC at attach */
	uint64_t stop_ns;  /* how long the thread was stopped (attach to detach) */
	uint64_t steps_ns; /* single steps: of stop_ns, the time stepping (attach and detach excluded) */
	size_t n, cap;
	struct trace_rec *rec;
	enum trace_end end;
	unsigned signals_redelivered;
	unsigned undecodable; /* steps whose bytes Capstone did not decode */
	int exit_status;      /* TRACE_END_EXITED: waitpid status */
	bool reaped;          /* exit_status was collected here: the thread's parent will not see it */
	uint8_t capture;      /* enum trace_capture */
	/* replay windows: the instructions run before the recorded ones only to warm
	 * the caches, summarised as their distinct lines (common/trace/warm.h) */
	uint64_t warm_insns;
	uint64_t emulated;    /* replay: instructions run in the emulator, warm-up included (even when lost) */
	uint64_t *warm_lines; /* line << 2 | mode, oldest last access first (malloc'd) */
	size_t nwarm;
	uint32_t warm_line_bytes;
	unsigned dropped_accesses; /* a third access of one instruction (not carried) */
	bool rec_borrowed;	   /* rec is the caller's buffer: trace_window_free leaves it */
	/* replay from a snapshot (snapshot.h): stop_ns is then the snapshot's stop only */
	bool snapshot;
	uint64_t replay_ns;   /* replay: time spent emulating (with a snapshot, after the thread went on) */
	char snap_why[160];   /* asked for a snapshot and none was taken: why */
	struct trace_stop_parts parts; /* where the stop went (snapshot windows) */
};

/* The architecture this agent was built for (what it can ptrace). */
enum trace_arch trace_native_arch(void);

/* Trace up to n (<= TRACE_WINDOW_MAX) instructions of thread tid, for at most
 * max_ns from the attach: past it the window ends at TRACE_END_TIME (a step
 * still running is let finish), or TRACE_END_BLOCKED when the thread sleeps in
 * a system call. Returns 0 (see w->end), or -errno with a reason in err
 * (-EPERM: not allowed to ptrace; -ESRCH: no such thread; -ENOTSUP: the kernel
 * cannot single-step, e.g. 32-bit ARM Linux). */
int trace_window_capture(struct trace_decoder *d, pid_t tid, size_t n, uint64_t max_ns, struct trace_window *w,
			 char *err, size_t errlen);
void trace_window_free(struct trace_window *w);

/* Seize thread tid and stop it (PTRACE_SEIZE + PTRACE_INTERRUPT), waiting up
 * to deadline + 1 s. 0: stopped, *sig is a signal that arrived first (pass it
 * on with PTRACE_DETACH); 1: the thread exited instead (w->end, exit_status,
 * reaped, stop_ns set; nothing to detach from); -errno with the reason in err
 * (it is not attached then). w->start_ns must be set. */
int trace_seize(pid_t tid, uint64_t deadline, struct trace_window *w, int *sig, char *err, size_t errlen);

#endif
