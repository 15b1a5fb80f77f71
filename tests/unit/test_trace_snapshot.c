/* Replay windows from a copy-on-write snapshot (agent/trace/snapshot.h): the
 * thread stops only for the snapshot, the window replays from the snapshot
 * while the program runs on, and the program cannot tell: its results are
 * unchanged, it gets no SIGCHLD and wait() finds no child. */
#include "generated/config.h"

#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <stdatomic.h>

#include <cmocka.h>

#include "testproc.h"
#include "trace/decode.h"
#include "trace/window.h"
#ifdef CONFIG_AGENT_TRACE_REPLAY
#include "trace/replay.h"
#endif

#ifdef CONFIG_AGENT_TRACE_REPLAY
/* The chase: a[i] = LCG(i) over 2^26 words (256 MiB); an LCG modulo a power of two with
 * c odd and a = 1 mod 4 has full period, so the walk from 0 is one cycle through every
 * word, in an order no prefetcher follows. After k steps the walk is at LCG^k(0), which
 * the program checks without the array: a snapshot that disturbed its registers or
 * memory would show. */
#define CHASE_WORDS (1ull << 26)
#define LCG_A 6364136223846793005ull
#define LCG_C 1442695040888963407ull

static volatile sig_atomic_t stop_chase, sigchld_seen;

static void on_usr1(int s)
{
	(void)s;
	stop_chase = 1;
}

static void on_chld(int s)
{
	(void)s;
	sigchld_seen++;
}

/* The program: exit 0 when its walk, its signals and its children are as they would be
 * untraced; a line of what it saw on fd. */
static void chase_program(int ready, int out)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL); /* the test gone: no orphan left walking */
	signal(SIGUSR1, on_usr1);
	signal(SIGCHLD, on_chld);
	uint64_t *a = mmap(NULL, CHASE_WORDS * 8, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (a == MAP_FAILED)
		_exit(2);
	for (uint64_t i = 0; i < CHASE_WORDS; i++)
		a[i] = (LCG_A * i + LCG_C) & (CHASE_WORDS - 1);
	if (write(ready, "r", 1) != 1)
		_exit(2);
	uint64_t q = 0, k = 0;
	for (; k < 1000000000ull && !stop_chase; k++) /* bounded: stopped by SIGUSR1 long before */
		q = *(volatile uint64_t *)&a[q];
	uint64_t x = 0;
	for (uint64_t i = 0; i < k; i++)
		x = (LCG_A * x + LCG_C) & (CHASE_WORDS - 1);
	errno = 0;
	pid_t w = waitpid(-1, NULL, WNOHANG | __WALL);
	int wait_errno = errno;
	dprintf(out, "steps %llu walk %s sigchld %d wait %d %s\n", (unsigned long long)k, x == q ? "ok" : "WRONG",
		(int)sigchld_seen, (int)w, strerror(wait_errno));
	_exit(x == q && sigchld_seen == 0 && w < 0 && wait_errno == ECHILD ? 0 : 1);
}

/* What the snapshot holds apart while it lives: a thread polls the Private_Dirty
 * (smaps_rollup) of this process's children other than the program (the snapshot is
 * one: CLONE_PARENT) every 20 ms (a walk of its page tables each: not more often). Its pages are the program's, shared copy-on-write; one
 * the snapshot holds privately was copied (the program wrote it, or a read pinned it:
 * process_vm_readv copied each page it read, 256 MiB here). */
struct cow_watch {
	pid_t program;
	atomic_bool stop;
	long max_kib, samples;
};

static long private_dirty_kib(pid_t p)
{
	char path[64], line[128];
	snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)p);
	FILE *f = fopen(path, "re");
	long v = -1;
	while (f && fgets(line, sizeof(line), f))
		if (strncmp(line, "Private_Dirty:", 14) == 0)
			v = atol(line + 14);
	if (f)
		fclose(f);
	return v;
}

static void *cow_watch_run(void *arg)
{
	struct cow_watch *cw = arg;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/task/%d/children", (int)getpid(), (int)getpid());
	for (int i = 0; i < 15000 && !atomic_load(&cw->stop); i++) { /* 5 min at most */
		FILE *f = fopen(path, "re");
		int c;
		while (f && fscanf(f, "%d", &c) == 1) {
			long kib = c == cw->program ? -1 : private_dirty_kib(c);
			if (kib >= 0) {
				cw->samples++;
				if (kib > cw->max_kib)
					cw->max_kib = kib;
			}
		}
		if (f)
			fclose(f);
		usleep(20000);
	}
	return NULL;
}

/* A window of the 256 MiB chase (4000 + 4000 instructions: bounded work, every load
 * a miss of the emulator's TLB): complete, from a snapshot, the thread stopped only
 * for it (the stop-time limit given is the defaults' 20 ms, which an in-place replay of
 * it overruns);
 * the program then finishes with its walk intact, no SIGCHLD, no child to wait for.
 * The replay reads the whole 256 MiB array from the snapshot, and copies none of it there
 * (the walk writes nothing: the snapshot holds < 16 MiB privately). */
static void test_trace_snapshot_chase_windows_unseen(void **state)
{
	(void)state;
	if (trace_native_arch() != TRACE_ARCH_X86_64)
		skip();
	char err[320];
	if (trace_replay_supported(err, sizeof(err)) < 0) {
		fprintf(stderr, "skipping: %s\n", err);
		skip();
	}
	int ready[2], out[2];
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(out), 0);
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		close(ready[0]);
		close(out[0]);
		chase_program(ready[1], out[1]);
	}
	close(ready[1]);
	close(out[1]);
	char c;
	assert_int_equal(read(ready[0], &c, 1), 1); /* the array is built: the walk starts */
	close(ready[0]);
	struct trace_decoder *d;
	assert_int_equal(trace_decoder_open(&d, TRACE_ARCH_X86_64), 0);
	enum { WINDOWS = 1 };
	for (int i = 0; i < WINDOWS; i++) {
		struct trace_window w;
		struct trace_replay_opts o = {.warm = 4000,
					      .n = 4000,
					      .max_ns = 20000000ull, /* 2 % of a second: what the defaults give */
					      .snapshot = true,
					      .replay_max_ns = 120000000000ull,
					      .boost = true};
		struct cow_watch cw = {.program = pid};
		pthread_t watcher;
		assert_int_equal(pthread_create(&watcher, NULL, cow_watch_run, &cw), 0);
		int rc = trace_replay_capture(d, pid, &o, &w, err, sizeof(err));
		atomic_store(&cw.stop, true);
		assert_int_equal(pthread_join(watcher, NULL), 0);
		if (rc == -EPERM) {
			fprintf(stderr, "skipping: %s\n", err);
			kill(pid, SIGKILL);
			waitpid(pid, NULL, 0);
			trace_decoder_close(d);
			skip();
		}
		assert_int_equal(rc, 0);
		fprintf(stderr, "# window %d: %s%s, stopped %.2f ms, replay %.0f ms, %llu + %zu instructions, %zu lines (%s)\n",
			i, w.snapshot ? "snapshot" : "in place: ", w.snapshot ? "" : w.snap_why, (double)w.stop_ns / 1e6,
			(double)w.replay_ns / 1e6, (unsigned long long)w.warm_insns, w.n, w.nwarm, trace_end_name(w.end));
		if (w.end == TRACE_END_IN_SYSCALL) { /* between two steps of the walk: none here, but say so */
			trace_window_free(&w);
			continue;
		}
		assert_true(w.snapshot);
		fprintf(stderr, "# the snapshot held %ld KiB privately at most (%ld samples while it lived)\n", cw.max_kib,
			cw.samples);
		assert_true(cw.samples > 0);
		assert_true(cw.max_kib < 16 * 1024);
		assert_int_equal(w.end, TRACE_END_COMPLETE);
		assert_int_equal(w.n, 4000);
		assert_true(w.nwarm > 200); /* the walk's lines: one a step, few repeated */
		/* the stop is the snapshot's, not the replay's */
		assert_true(w.stop_ns < w.replay_ns);
		/* and where it went is reported: the parts in the stop add up to it, the clone
		 * among them; the checks before it and the snapshot's first stop after */
		const struct trace_stop_parts *p = &w.parts;
		fprintf(stderr, "# stop: attach %.2f, registers %.2f, clone %.2f, restore %.2f ms%s; checks %.2f ms "
				"before, snapshot's first stop %.2f ms after\n",
			(double)p->attach / 1e6, (double)p->regs / 1e6, (double)p->clone / 1e6, (double)p->restore / 1e6,
			p->boosted ? " (real-time priority)" : "", (double)p->checks / 1e6, (double)p->child / 1e6);
		assert_true(p->attach > 0 && p->clone > 0 && p->restore > 0 && p->checks > 0 && p->child > 0);
		assert_true(p->attach + p->regs + p->clone + p->restore == w.stop_ns);
		trace_window_free(&w);
	}
	trace_decoder_close(d);
	kill(pid, SIGUSR1);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char line[256] = "";
	ssize_t n = read(out[0], line, sizeof(line) - 1);
	close(out[0]);
	fprintf(stderr, "# program: %s", n > 0 ? line : "(nothing)\n");
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	/* and the agent (its parent) has no snapshot left to reap */
	errno = 0;
	assert_true(waitpid(-1, NULL, WNOHANG | __WALL) < 0 && errno == ECHILD);
}
#endif

int main(void)
{
	const struct CMUnitTest tests[] = {
#ifdef CONFIG_AGENT_TRACE_REPLAY
		cmocka_unit_test(test_trace_snapshot_chase_windows_unseen),
#endif
	};
	return cmocka_run_group_tests(tests, NULL, NULL);
}
