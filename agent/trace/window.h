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
	TRACE_END_BLOCKED,  /* the time limit passed (thread blocked in a system call) */
	TRACE_END_ERROR,
};

struct trace_window {
	pid_t tid;
	uint64_t start_ns; /* CLOCK_MONOTONIC at attach */
	uint64_t stop_ns;  /* how long the thread was stopped (attach to detach) */
	size_t n, cap;
	struct trace_rec *rec;
	enum trace_end end;
	unsigned signals_redelivered;
	unsigned undecodable; /* steps whose bytes Capstone did not decode */
	int exit_status;      /* TRACE_END_EXITED: waitpid status */
	bool reaped;          /* exit_status was collected here: the thread's parent will not see it */
};

/* The architecture this agent was built for (what it can ptrace). */
enum trace_arch trace_native_arch(void);

/* Trace up to n (<= TRACE_WINDOW_MAX) instructions of thread tid, for at most
 * max_ns. Returns 0 (see w->end), or -errno with a reason in err (-EPERM:
 * not allowed to ptrace; -ESRCH: no such thread). */
int trace_window_capture(struct trace_decoder *d, pid_t tid, size_t n, uint64_t max_ns, struct trace_window *w,
			 char *err, size_t errlen);
void trace_window_free(struct trace_window *w);

#endif
