/* The trace snapshot (agent/trace/snapshot*.c) on the emulated boards' kernels, as the
 * agent would take it for a window: a program of its own (forked, so this is its parent,
 * as the agent is of the programs it starts) writes a counter and an array in a loop; N
 * times this seizes it, interrupts it, takes a snapshot (the injected clone) and lets it
 * go, timing the stop, then checks the snapshot from outside: its
 * counter is the one the program had at the stop and stays so while the program runs on
 * (copy-on-write), its last array entry is the counter's, each read as the collector would get
 * it, through the agent's page server (trace/snapshot_serve.h: PageRequest -> Pages); the
 * snapshot is then let go (SnapshotDone: killed and reaped). At the
 * end the program is told to stop (its quit flag written through ptrace) and checks its
 * own array and that it got no SIGCHLD: its exit status says so.
 * Usage: snapshot_check N [MIB]. Lines "PROF-SNAP ...": read by scripts/board-test.sh.
 * Exit 0 when every window passed. Bounded: N <= 100, each wait <= 2 s. */
#ifndef _FILE_OFFSET_BITS /* pread at addresses above 2 GiB (32-bit ARM, glibc) */
#define _FILE_OFFSET_BITS 64
#endif
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net.h"
#include "trace/snapshot.h"
#include "trace/snapshot_serve.h"
#include "validate_snapshot.h"

static volatile unsigned long stamp, quit, sigchld;
static unsigned long *arr;
static unsigned long n_arr;

static void on_sigchld(int s)
{
	(void)s;
	sigchld++;
}

static int program(void)
{
	signal(SIGCHLD, on_sigchld);
	while (!quit) {
		unsigned long c = stamp;
		arr[c % n_arr] = c;
		stamp = c + 1;
	}
	unsigned long bad = 0;
	for (unsigned long k = 0; k < n_arr && k < stamp; k++)
		bad += arr[k] % n_arr != k;
	printf("PROF-SNAP program: %lu iterations, %lu bad entries, %lu SIGCHLD\n", stamp, bad, sigchld);
	return bad || sigchld ? 1 : 0;
}

static int peek(int fd, const volatile void *at, unsigned long *v)
{
	return pread(fd, v, sizeof(*v), (off_t)(uintptr_t)at) == (ssize_t)sizeof(*v) ? 0 : -1;
}

/* The word at `at` in snapshot id, from a one-page request to the page server. */
static int served(struct snap_serve *srv, uint32_t id, const volatile void *at, unsigned long *v)
{
	uint64_t page = (uint64_t)(uintptr_t)at & ~(uint64_t)(srv->page_size - 1);
	Prof__PageRequest r = PROF__PAGE_REQUEST__INIT;
	Prof__Pages out;
	r.snapshot_id = id;
	r.addr = &page;
	r.n_addr = 1;
	char err[128];
	if (snap_serve_answer(srv, &r, &out) < 0 || out.n_status != 1 || out.status[0] != 0 ||
	    validate_pages(&out, srv->page_size, err, sizeof(err)) < 0)
		return -1;
	memcpy(v, out.data.data + ((uintptr_t)at - (uintptr_t)page), sizeof(*v));
	return 0;
}

#if defined(__arm__)
/* A Thumb `svc #0` halfword (df00) in this program's own executable mapping: 0 when none. */
static uint64_t own_thumb_svc(void)
{
	FILE *f = fopen("/proc/self/maps", "re");
	char line[512];
	uint64_t at = 0, self = (uint64_t)(uintptr_t)&own_thumb_svc;
	while (f && !at && fgets(line, sizeof(line), f)) {
		unsigned long long lo = 0, hi = 0;
		char perm[8] = "";
		if (sscanf(line, "%llx-%llx %7s", &lo, &hi, perm) != 3 || perm[2] != 'x' || self < lo || self >= hi)
			continue;
		for (uint64_t a = lo; a + 2 <= hi && !at; a += 2)
			if (*(const volatile uint16_t *)(uintptr_t)a == 0xdf00)
				at = a;
	}
	if (f)
		fclose(f);
	return at;
}
#endif

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 10;
	unsigned long mib = argc > 2 ? strtoul(argv[2], NULL, 10) : 8;
	if (n < 1 || n > 100 || mib < 1 || mib > 256) {
		fprintf(stderr, "usage: snapshot_check N(1-100) [MIB(1-256)]\n");
		return 2;
	}
	n_arr = mib * 1024 * 1024 / sizeof(unsigned long);
	arr = calloc(n_arr, sizeof(unsigned long));
	if (!arr)
		return 2;
	for (unsigned long k = 0; k < n_arr; k++) /* every page the program's own */
		arr[k] = k;
	pid_t pid = fork();
	if (pid == 0)
		_exit(program());
	char path[48], why[256];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	struct snap_serve srv;
	if (snap_serve_init(&srv, 1, 100 * 64, (uint32_t)sysconf(_SC_PAGESIZE)) < 0)
		return 2;
	int ok = 0, fails = 0, extra = 0, tok = 0;
	uint64_t stops[104], clones[104], thumb_svc = 0;
#if defined(__arm__)
	/* 3 more windows from a Thumb svc (df00) of this program's text (the program's own, forked):
	 * the path a kernel without a vDSO (before 4.1: the Arndale's 3.4) takes when the first svc
	 * it finds is Thumb's */
	thumb_svc = own_thumb_svc();
	extra = 3;
#endif
	for (int i = 0; i < n + extra; i++) {
		struct timespec nap = {0, 30 * 1000000};
		nanosleep(&nap, NULL);
		struct trace_snapshot_plan plan;
		if (trace_snapshot_plan(pid, &plan, why, sizeof(why)) < 0) {
			printf("PROF-SNAP window %d: no plan: %s\n", i, why);
			fails++;
			break;
		}
		if (i >= n) {
			if (!thumb_svc)
				break;
			plan.syscall_at = thumb_svc;
			plan.thumb = true;
		}
		uint64_t t0 = clock_mono_ns();
		int status = 0;
		if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) < 0 || ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) < 0 ||
		    waitpid(pid, &status, __WALL) != pid) {
			printf("PROF-SNAP window %d: seize: %s\n", i, strerror(errno));
			fails++;
			break;
		}
		int memfd = open(path, O_RDONLY | O_CLOEXEC);
		unsigned long s_stop = 0, s_snap = 0, s_later = 0, last = 0, s_prog = 0;
		int pr = peek(memfd, &stamp, &s_stop); /* the counter at the stop */
#if defined(__aarch64__) || defined(__arm__)
		uint64_t regs[34];
		size_t nregs = 0;
		uint32_t arch = 0;
		int rg = trace_snapshot_regs(pid, regs, 34, &nregs, &arch); /* the agent's read of them */
		/* its thread pointer: the program is forked from us, so it is ours */
		uint64_t tls = 0, own = (uint64_t)(uintptr_t)__builtin_thread_pointer();
		int rt = trace_snapshot_tls(pid, &tls);
#endif
		pid_t snap = 0;
		int sig = 0;
		uint64_t clone_ns = 0;
		int rc = trace_snapshot_take(pid, &plan, clock_mono_ns() + 2000000000ull, &snap, &sig, &clone_ns, why,
					     sizeof(why));
		ptrace(PTRACE_DETACH, pid, NULL, (void *)(long)sig);
		uint64_t t2 = clock_mono_ns();
		stops[i] = t2 - t0; /* seize to detach, as the agent's (the counter's read: one pread) */
		clones[i] = clone_ns;
		if (rc < 0 || pr < 0) {
			printf("PROF-SNAP window %d: no snapshot: %s\n", i, rc < 0 ? why : "counter unreadable");
			close(memfd);
			fails++;
			continue;
		}
		if (trace_snapshot_ready(snap, &plan, why, sizeof(why)) < 0) {
			printf("PROF-SNAP window %d: snapshot not ready: %s\n", i, why);
			close(memfd);
			fails++;
			continue;
		}
		/* read through the agent's page server (trace/snapshot_serve.h), as the collector would */
		uint32_t id = 0;
		int r0 = snap_serve_add(&srv, snap, 64, 10000000000ull, clock_mono_ns(), &id);
		if (r0 < 0)
			trace_snapshot_drop(snap);
		int r1 = served(&srv, id, &stamp, &s_snap);
#if defined(__aarch64__) || defined(__arm__)
		/* its TraceSnapshot: valid on the wire (pc in an executable map), and the served page at
		 * pc holds the program's code there (the same text as ours: forked from us) */
		struct snap_desc desc;
		char derr[160] = "";
		int rd = rg < 0 ? rg : snap_describe(&desc, snap, id, arch, regs, nregs, srv.page_size, 64, 10000);
		if (rd == 0)
			rd = validate_trace_snapshot(&desc.msg, derr, sizeof(derr));
		uint64_t pc = arch == 2 ? regs[32] : regs[15];
		unsigned long code = 0;
		if (rd == 0 && (served(&srv, id, (const void *)(uintptr_t)(pc & ~(uint64_t)(sizeof(code) - 1)), &code) < 0 ||
				memcmp(&code, (const void *)(uintptr_t)(pc & ~(uint64_t)(sizeof(code) - 1)), sizeof(code)) != 0))
			rd = -EIO;
		if (rd == 0 && (rt < 0 || tls != own || tls == 0))
			rd = -EIO;
		if (i == 0 || rd < 0)
			printf("PROF-SNAP window %d: TraceSnapshot arch %u, %zu registers, pc 0x%llx, %zu maps, tls 0x%llx "
			       "(the program's 0x%llx): %s%s\n",
			       i, arch, nregs, (unsigned long long)pc, rg < 0 ? (size_t)0 : desc.msg.n_maps,
			       (unsigned long long)tls, (unsigned long long)own,
			       rd == 0 ? "valid, code at pc served" : "BAD ", derr);
		if (rg == 0)
			snap_desc_free(&desc);
#else
		int rd = 0;
#endif
		nanosleep(&nap, NULL); /* the program runs on */
		int r2 = served(&srv, id, &stamp, &s_later);
		int r3 = served(&srv, id, &arr[(s_stop + n_arr - 1) % n_arr], &last);
		int r4 = peek(memfd, &stamp, &s_prog);
		close(memfd);
		r0 = r0 < 0 ? r0 : snap_serve_done(&srv, id);
		char gone[48];
		snprintf(gone, sizeof(gone), "/proc/%d", (int)snap);
		bool reaped = access(gone, F_OK) != 0;
		bool good = rd == 0 && r0 == 0 && r1 == 0 && r2 == 0 && r3 == 0 && r4 == 0 && s_snap == s_stop && s_later == s_stop &&
			    s_stop > 0 && last == s_stop - 1 && s_prog > s_stop && reaped;
		printf("PROF-SNAP window %d: stop %.2f ms (clone %.2f ms), svc at 0x%llx (%s), counter %lu at the stop, "
		       "snapshot %lu then %lu, last entry %lu, program on to %lu, snapshot %s: %s\n",
		       i, (double)stops[i] / 1e6, (double)clone_ns / 1e6, (unsigned long long)plan.syscall_at,
#if defined(__aarch64__)
		       "A64",
#elif defined(__x86_64__)
		       "x86_64",
#else
		       plan.thumb ? "Thumb" : "ARM",
#endif
		       s_stop, s_snap, s_later, last, s_prog, reaped ? "reaped" : "NOT reaped", good ? "ok" : "BAD");
		if (i < n) {
			ok += good;
			fails += !good;
		} else {
			tok += good;
		}
	}
	/* the program's quit flag, written in a stop, then its own verdict */
	int status = 0, prc = -1;
	if (ptrace(PTRACE_SEIZE, pid, NULL, NULL) == 0 && ptrace(PTRACE_INTERRUPT, pid, NULL, NULL) == 0 &&
	    waitpid(pid, &status, __WALL) == pid) {
		ptrace(PTRACE_POKEDATA, pid, (void *)&quit, (void *)1);
		ptrace(PTRACE_DETACH, pid, NULL, NULL);
		uint64_t end = clock_mono_ns() + 5000000000ull;
		while (clock_mono_ns() < end) {
			pid_t r = waitpid(pid, &status, WNOHANG);
			if (r == pid && WIFEXITED(status)) {
				prc = WEXITSTATUS(status);
				break;
			}
			struct timespec nap = {0, 10 * 1000000};
			nanosleep(&nap, NULL);
		}
	}
	if (prc < 0) {
		kill(pid, SIGKILL);
		waitpid(pid, &status, 0);
	}
	snap_serve_free(&srv);
	int done = ok + fails;
	qsort(stops, (size_t)(done < n ? done : n), sizeof(stops[0]), cmp_u64);
	qsort(clones, (size_t)(done < n ? done : n), sizeof(clones[0]), cmp_u64);
	printf("PROF-SNAP result: %d of %d windows ok, stop median %.2f ms max %.2f ms, clone median %.2f ms, program exit %d\n",
	       ok, n, done ? (double)stops[done / 2] / 1e6 : 0.0, done ? (double)stops[done - 1] / 1e6 : 0.0,
	       done ? (double)clones[done / 2] / 1e6 : 0.0, prc);
	if (extra)
		printf("PROF-SNAP thumb: %d of %d windows ok (svc df00 of the program's text at 0x%llx)\n", tok, extra,
		       (unsigned long long)thumb_svc);
	return ok == n && tok == extra && prc == 0 ? 0 : 1;
}
