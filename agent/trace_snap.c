/* Board trace windows as snapshots the collector replays (trace_snap.h). */
#include "trace_snap.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "net.h"
#include "trace/snapshot.h"
#include "trace/snapshot_priv.h"

#if defined(__aarch64__) || defined(__arm__)
#include <sys/ptrace.h>
#include <sys/wait.h>

static int pages(void *ctx, const Prof__PageRequest *req, Prof__Pages *out)
{
	return snap_serve_answer(&((struct trace_snap *)ctx)->srv, req, out);
}

static void done(void *ctx, uint32_t id)
{
	struct trace_snap *b = ctx;
	if (snap_serve_done(&b->srv, id) == 0) /* killed and reaped */
		b->done++;
}

static unsigned live(void *ctx)
{
	struct trace_snap *b = ctx;
	snap_serve_expire(&b->srv, clock_mono_ns());
	return b->srv.n;
}

int trace_snap_open(struct trace_snap *b, struct session *s)
{
	memset(b, 0, sizeof(*b));
	long ps = sysconf(_SC_PAGESIZE);
	/* no session cap: a board profiles for days (pages are bounded per snapshot and by the live ones) */
	int rc = snap_serve_init(&b->srv, TRACE_SNAP_LIVE, UINT64_MAX, (uint32_t)(ps > 0 ? ps : 4096));
	if (rc < 0)
		return rc;
	b->s = s;
	session_set_snapshots(s, pages, done, live, b);
	return 0;
}

unsigned trace_snap_expire(struct trace_snap *b, uint64_t now)
{
	return b->s ? snap_serve_expire(&b->srv, now) : 0;
}

void trace_snap_close(struct trace_snap *b)
{
	if (!b->s)
		return;
	snap_serve_free(&b->srv); /* every snapshot still live killed and reaped */
	b->s = NULL;
}

int trace_snap_window(struct trace_snap *b, struct trace_snap_req *r, uint64_t *stop_ns, char *why,
		      size_t whylen)
{
	*stop_ns = 0;
	if (!session_streaming(b->s))
		return snprintf(why, whylen, "no collector connection"), -ENOTCONN;
	if (b->srv.n >= b->srv.max_live)
		return snprintf(why, whylen, "%u snapshots still being replayed", b->srv.n), -EBUSY;
	struct trace_snapshot_plan plan;
	int rc = trace_snapshot_plan(r->tid, &plan, why, whylen); /* before the stop */
	if (rc < 0)
		return rc;
	uint64_t t0 = clock_mono_ns();
	if (ptrace(PTRACE_SEIZE, r->tid, NULL, NULL) < 0) {
		rc = -errno;
		return snprintf(why, whylen, "ptrace(SEIZE): %s", strerror(-rc)), rc;
	}
	int status = 0, sig = 0;
	ptrace(PTRACE_INTERRUPT, r->tid, NULL, NULL);
	rc = trace_snapshot_wait(r->tid, t0 + 2000000000ull, &status);
	if (rc == 0 && !WIFSTOPPED(status)) { /* its end, taken here: the target is told */
		r->reaped = true;
		r->exit_status = status;
		*stop_ns = clock_mono_ns() - t0;
		return snprintf(why, whylen, "the thread exited"), -ESRCH;
	}
	if (rc < 0) {
		ptrace(PTRACE_DETACH, r->tid, NULL, NULL);
		return snprintf(why, whylen, "the thread did not stop: %s", strerror(-rc)), rc;
	}
	if ((status >> 16) == 0 && WSTOPSIG(status) != SIGTRAP)
		sig = WSTOPSIG(status); /* the program's signal came first: passed on */
	uint64_t regs[34];
	size_t nregs = 0;
	uint32_t arch = 0;
	pid_t child = 0;
	int ssig = 0;
	uint64_t clone_ns = 0;
	bool took = false;
	uint64_t tls = 0;
	if (trace_snapshot_tls(r->tid, &tls) < 0)
		tls = 0; /* not known: the collector's replay reads 0 */
	rc = trace_snapshot_regs(r->tid, regs, 34, &nregs, &arch);
	if (rc < 0)
		snprintf(why, whylen, "reading its registers: %s", strerror(-rc));
	else
		took = true, rc = trace_snapshot_take(r->tid, &plan, t0 + 2000000000ull, &child, &ssig, &clone_ns, why,
						      whylen);
	if (took && rc == -ESRCH && child == -1) { /* exited during the clone, reaped there: nothing to detach from */
		r->reaped = true;
		r->exit_status = ssig;
		*stop_ns = clock_mono_ns() - t0;
		return rc;
	}
	ptrace(PTRACE_DETACH, r->tid, NULL, (void *)(long)(sig ? sig : ssig));
	*stop_ns = clock_mono_ns() - t0;
	if (rc < 0)
		return rc;
	if ((rc = trace_snapshot_ready(child, &plan, why, whylen)) < 0)
		return rc; /* dropped */
	uint32_t id = 0;
	rc = snap_serve_add(&b->srv, child, TRACE_SNAP_PAGES, (uint64_t)TRACE_SNAP_TTL_MS * 1000000u, clock_mono_ns(),
			    &id);
	if (rc < 0) {
		trace_snapshot_drop(child);
		return snprintf(why, whylen, "serving its pages: %s", strerror(-rc)), rc;
	}
	struct snap_desc d;
	rc = snap_describe(&d, child, id, arch, regs, nregs, b->srv.page_size, TRACE_SNAP_PAGES, TRACE_SNAP_TTL_MS);
	if (rc == 0) {
		d.msg.pid = r->pid;
		d.msg.tid = r->tid;
		d.msg.window_index = r->window_index;
		d.msg.warmup_insns = r->warmup;
		d.msg.record_insns = r->record;
		d.msg.t_ns = r->t_ns;
		d.msg.stop_ns = *stop_ns;
		d.msg.tls = tls;
		rc = session_send_snapshot(b->s, &d.msg);
		if (rc < 0)
			snprintf(why, whylen, "sending its TraceSnapshot: %s", strerror(-rc));
	} else {
		snprintf(why, whylen, "describing it: %s", strerror(-rc));
	}
	snap_desc_free(&d);
	if (rc < 0) {
		snap_serve_done(&b->srv, id);
		return rc;
	}
	b->sent++;
	log_debug("trace: window %u of thread %d: snapshot %u sent (seq %llu), stop %.2f ms (clone %.2f ms)",
		  r->window_index, (int)r->tid, id, (unsigned long long)d.msg.window_seq, (double)*stop_ns / 1e6,
		  (double)clone_ns / 1e6);
	return 0;
}

#else /* no snapshot for the collector to replay on this architecture */

int trace_snap_open(struct trace_snap *b, struct session *s)
{
	(void)s;
	memset(b, 0, sizeof(*b));
	return -ENOTSUP;
}

int trace_snap_window(struct trace_snap *b, struct trace_snap_req *r, uint64_t *stop_ns, char *why,
		      size_t whylen)
{
	(void)b, (void)r;
	*stop_ns = 0;
	return snprintf(why, whylen, "board snapshots are built for arm64 and 32-bit ARM only"), -ENOTSUP;
}

unsigned trace_snap_expire(struct trace_snap *b, uint64_t now)
{
	(void)b, (void)now;
	return 0;
}

void trace_snap_close(struct trace_snap *b)
{
	(void)b;
}

#endif
