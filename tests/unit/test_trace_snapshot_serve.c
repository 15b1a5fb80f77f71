/* A snapshot's pages served on demand (agent/trace/snapshot_serve.h, issue 36): a real
 * copy-on-write snapshot of a program that goes on writing, its pages read through
 * /proc/SNAP/mem as they were at the stop; the budgets per snapshot and per session, the
 * bound on live snapshots, unreadable pages, unknown snapshots, SnapshotDone and expiry
 * (the snapshot killed and reaped), and the snapshot's TraceSnapshot (its maps). Where this kernel or build takes no snapshot: skipped,
 * saying why. */
#include "generated/config.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include <cmocka.h>

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <unistd.h>

#include "net.h"
#include "trace/snapshot.h"
#include "trace/snapshot_serve.h"
#include "validate_snapshot.h"

#define NPAGES 16

#if defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__)
/* The program: pages of known bytes (page i: byte i + 1), then page 0's first word counts
 * up until killed. */
static volatile uint64_t *region;

static void program(void)
{
	for (;;)
		region[0]++;
}

/* Seize, snapshot, let go: the snapshot (0 with why when none). *at_stop: page 0's word then. */
static pid_t snap_of(pid_t pid, uint64_t *at_stop, char *why, size_t whylen)
{
	struct trace_snapshot_plan plan;
	if (trace_snapshot_plan(pid, &plan, why, whylen) < 0)
		return 0;
	int status = 0;
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0 || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0 ||
	    waitpid(pid, &status, __WALL) != pid) {
		snprintf(why, whylen, "seize: %s", strerror(errno));
		return 0;
	}
	errno = 0;
	long w = ptrace(PTRACE_PEEKDATA, pid, (void *)region, NULL);
	*at_stop = (uint64_t)(unsigned long)w; /* 64-bit hosts: the whole word */
	pid_t snap = 0;
	int sig = 0;
	uint64_t clone_ns = 0;
	int rc = trace_snapshot_take(pid, &plan, clock_mono_ns() + 2000000000ull, &snap, &sig, &clone_ns, why,
				     whylen);
	ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)sig);
	if (rc < 0 || trace_snapshot_ready(snap, &plan, why, whylen) < 0)
		return 0;
	return snap;
}

struct world {
	pid_t pid;
	long ps;
};

static int setup(void **state)
{
	static struct world w;
	w.ps = sysconf(_SC_PAGESIZE);
	region = mmap(NULL, NPAGES * (size_t)w.ps, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (region == MAP_FAILED)
		return -1;
	for (int i = 0; i < NPAGES; i++)
		memset((uint8_t *)region + (size_t)i * w.ps, i + 1, (size_t)w.ps);
	region[0] = 0;
	w.pid = fork();
	if (w.pid == 0) {
		program();
		_exit(0);
	}
	*state = &w;
	return w.pid > 0 ? 0 : -1;
}

static int teardown(void **state)
{
	struct world *w = *state;
	kill(w->pid, SIGKILL);
	waitpid(w->pid, NULL, 0);
	munmap((void *)region, NPAGES * (size_t)w->ps);
	return 0;
}

static bool gone(pid_t p)
{
	char path[32];
	snprintf(path, sizeof(path), "/proc/%d", (int)p);
	return access(path, F_OK) != 0;
}

static void test_trace_snapshot_serve_pages_as_at_the_stop(void **state)
{
	struct world *w = *state;
	char why[256] = "";
	uint64_t at_stop = 0;
	pid_t snap = snap_of(w->pid, &at_stop, why, sizeof(why));
	if (!snap) {
		fprintf(stderr, "skipped: no snapshot here: %s\n", why);
		skip();
	}
	struct snap_serve s;
	assert_int_equal(snap_serve_init(&s, 2, 12, (uint32_t)w->ps), 0);
	uint32_t id = 0;
	uint64_t now = clock_mono_ns();
	assert_int_equal(snap_serve_add(&s, snap, 10, 60000000000ull, now, &id), 0);
	assert_int_not_equal(id, 0);
	/* the program runs on: its page 0 moves past the stop's value, the snapshot's does not */
	char mem[40];
	snprintf(mem, sizeof(mem), "/proc/%d/mem", (int)w->pid);
	int pfd = open(mem, O_RDONLY | O_CLOEXEC);
	assert_true(pfd >= 0);
	uint64_t prog = 0;
	for (int i = 0; i < 1000 && prog <= at_stop; i++) {
		usleep(1000);
		assert_int_equal(pread(pfd, &prog, sizeof(prog), (off_t)(uintptr_t)region), sizeof(prog));
	}
	close(pfd);
	assert_true(prog > at_stop);
	uint64_t a[NPAGES + 1];
	for (int i = 0; i < NPAGES; i++)
		a[i] = (uint64_t)(uintptr_t)region + (uint64_t)i * (uint64_t)w->ps;
	a[NPAGES] = 0; /* page 0: never mapped */
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	r.snapshot_id = id;
	r.addr = a;
	r.n_addr = 8;
	Prof__Pages out;
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	char err[200];
	assert_int_equal(validate_pages(&out, (uint32_t)w->ps, err, sizeof(err)), 0);
	assert_int_equal(out.n_status, 8);
	assert_int_equal(out.data.len, 8 * (size_t)w->ps);
	uint64_t word0;
	memcpy(&word0, out.data.data, sizeof(word0));
	assert_int_equal(word0, at_stop); /* as at the stop */
	for (int i = 1; i < 8; i++) {
		assert_int_equal(out.status[i], 0);
		assert_int_equal(out.data.data[(size_t)i * w->ps], i + 1);
		assert_int_equal(out.data.data[(size_t)i * w->ps + (size_t)w->ps - 1], i + 1);
	}
	/* the unmapped page, then the snapshot's budget (10): 2 more served, the rest EDQUOT */
	a[8] = 0;
	r.addr = a + 8;
	r.n_addr = NPAGES + 1 - 8;
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	assert_int_equal(out.status[0], EFAULT);
	assert_int_equal(out.status[1], 0);
	assert_int_equal(out.status[2], 0);
	for (size_t i = 3; i < out.n_status; i++)
		assert_int_equal(out.status[i], EDQUOT);
	assert_int_equal(out.data.len, 2 * (size_t)w->ps);
	assert_int_equal(out.data.data[0], 10); /* page 9 */
	assert_int_equal(validate_pages(&out, (uint32_t)w->ps, err, sizeof(err)), 0);
	assert_true(s.refused_budget >= 6);
	/* malformed: refused without an answer; an unknown snapshot: ESRCH */
	uint64_t odd = a[1] + 1;
	r.addr = &odd;
	r.n_addr = 1;
	assert_int_equal(snap_serve_answer(&s, &r, &out), -EINVAL);
	r.addr = a;
	r.snapshot_id = id + 100;
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	assert_int_equal(out.status[0], ESRCH);
	/* its TraceSnapshot: the snapshot's maps (the region among them, rw), registers as given (an
	 * aarch64 set here, pc at the program's code: the checks are the wire's, not the host's) */
	struct snap_desc d;
	uint64_t regs[34] = {0};
	regs[32] = (uint64_t)(uintptr_t)program;
	assert_int_equal(snap_describe(&d, snap, id, 2, regs, 34, (uint32_t)w->ps, 10, 5000), 0);
	assert_int_equal(validate_trace_snapshot(&d.msg, err, sizeof(err)), 0);
	bool region_seen = false;
	for (size_t i = 0; i < d.msg.n_maps; i++)
		region_seen |= d.msg.maps[i]->start <= a[0] && a[0] < d.msg.maps[i]->end && d.msg.maps[i]->prot == 3;
	assert_true(region_seen);
	snap_desc_free(&d);
	assert_int_equal(snap_describe(&d, snap, id, 2, regs, 35, (uint32_t)w->ps, 10, 5000), -EINVAL);
	snap_desc_free(&d);
	/* done: killed and reaped, its id gone */
	assert_int_equal(snap_serve_done(&s, id), 0);
	assert_true(gone(snap));
	assert_int_equal(snap_serve_done(&s, id), -ENOENT);
	r.snapshot_id = id;
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	assert_int_equal(out.status[0], ESRCH);
	snap_serve_free(&s);
}

static void test_trace_snapshot_serve_bounds_live_and_session(void **state)
{
	struct world *w = *state;
	char why[256] = "";
	uint64_t at[3];
	pid_t snaps[3];
	for (int i = 0; i < 3; i++) {
		snaps[i] = snap_of(w->pid, &at[i], why, sizeof(why));
		if (!snaps[i]) {
			for (int j = 0; j < i; j++)
				trace_snapshot_drop(snaps[j]);
			fprintf(stderr, "skipped: no snapshot here: %s\n", why);
			skip();
		}
	}
	struct snap_serve s;
	assert_int_equal(snap_serve_init(&s, 2, 3, (uint32_t)w->ps), 0); /* 2 live, 3 pages a session */
	uint32_t id[3];
	uint64_t now = clock_mono_ns();
	assert_int_equal(snap_serve_add(&s, snaps[0], 100, 1000000000ull, now, &id[0]), 0);
	assert_int_equal(snap_serve_add(&s, snaps[1], 100, 5000000000ull, now, &id[1]), 0);
	assert_int_equal(snap_serve_add(&s, snaps[2], 100, 5000000000ull, now, &id[2]), -EBUSY);
	assert_int_equal(s.refused_full, 1);
	trace_snapshot_drop(snaps[2]); /* not taken: the caller's */
	assert_true(gone(snaps[2]));
	/* the session's budget across snapshots */
	uint64_t a[2] = {(uint64_t)(uintptr_t)region + (uint64_t)w->ps, (uint64_t)(uintptr_t)region};
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	Prof__Pages out;
	r.addr = a;
	r.n_addr = 2;
	r.snapshot_id = id[0];
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	assert_int_equal(out.status[0] + out.status[1], 0);
	uint64_t w0;
	memcpy(&w0, out.data.data + w->ps, sizeof(w0));
	assert_int_equal(w0, at[0]); /* each snapshot its own stop */
	r.snapshot_id = id[1];
	assert_int_equal(snap_serve_answer(&s, &r, &out), 0);
	assert_int_equal(out.status[0], 0);
	assert_int_equal(out.status[1], EDQUOT);
	/* expiry: the first (1 s) goes, the second (5 s) stays; then free drops it */
	assert_int_equal(snap_serve_expire(&s, now + 2000000000ull), 1);
	assert_true(gone(snaps[0]));
	assert_false(gone(snaps[1]));
	assert_int_equal(s.expired, 1);
	snap_serve_free(&s);
	assert_true(gone(snaps[1]));
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#if defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__)
	    cmocka_unit_test(test_trace_snapshot_serve_pages_as_at_the_stop),
	    cmocka_unit_test(test_trace_snapshot_serve_bounds_live_and_session),
#endif
	};
#if defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__)
	return cmocka_run_group_tests(tests, setup, teardown);
#else
	return cmocka_run_group_tests(tests, NULL, NULL);
#endif
}
