/* linux34: run a program as if on Linux 3.4 (the Arndale Octa's kernel), for tests.
 *
 *   linux34 [--log FILE] [--quiet] -- PROGRAM ARGS...
 *
 * A seccomp filter, inherited by every thread and child, sends to this tracer (ptrace,
 * PTRACE_EVENT_SECCOMP) every system call 3.4 did not have, perf_event_open, and the
 * perf ioctls 3.4 did not know; the tracer answers them as 3.4 did (tests/lib/linux34.c,
 * each rule citing the 3.4 source): ENOSYS for the missing calls, EINVAL / E2BIG / ENOENT /
 * EOPNOTSUPP for the perf attributes 3.4 refused, ENOTTY for the ioctls; everything 3.4
 * accepted goes on to the host kernel. Each refusal is logged (one line each, --log FILE,
 * default stderr) so a test can tell that the personality was met.
 *
 * Processes: the program and all its threads and children are traced; a process that a
 * traced process attaches to with ptrace (the agent's trace windows) is let go first, so
 * that attach works: from then on its missing calls still get ENOSYS from the filter, and
 * its perf_event_open gets ENOSYS (no tracer), which only a profiled program would call.
 *
 * x86_64 host only (the syscall numbers and registers are x86_64's); the armhf agent under
 * qemu-arm can run under it too: qemu-user turns the guest's calls into the host's. */

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#include "linux34.h"

static FILE *logf_;
static bool quiet;
static unsigned long n_refused;

static void logline(pid_t pid, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logline(pid_t pid, const char *fmt, ...)
{
	n_refused++;
	if (quiet)
		return;
	va_list ap;
	va_start(ap, fmt);
	fprintf(logf_, "linux34: pid %d: ", (int)pid);
	vfprintf(logf_, fmt, ap);
	fputc('\n', logf_);
	fflush(logf_);
	va_end(ap);
}

#define PERF_IOC_TYPE ((unsigned)'$')

/* The filter: x86_64 calls only (others pass: 3.4's compat tables are not modelled);
 * perf_event_open, ptrace, the perf ioctls past SET_FILTER and every number past 311
 * (below the x32 range) go to the tracer. */
static int install_filter(void)
{
	struct sock_filter f[] = {
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, AUDIT_ARCH_X86_64, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ptrace, 0, 1),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4),
	    /* cmd (args[1], low 32 bits): type '$' and nr > 6 */
	    BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])),
	    BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff00),
	    BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PERF_IOC_TYPE << 8, 0, 3),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	    BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 1, 0), /* x32: pass */
	    BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, 311, 1, 0),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	    BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_TRACE),
	};
	struct sock_fprog prog = {.len = sizeof(f) / sizeof(f[0]), .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	if (syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog) < 0)
		return -errno;
	return 0;
}

/* Skip the call the tracee stopped in, returning rc (seccomp(2): "the tracer can skip the
 * system call by changing the system call number to -1 ... the system call will appear to
 * return the value that the tracer puts in the return value register"). */
static int skip_with(pid_t pid, struct user_regs_struct *r, long rc)
{
	r->orig_rax = (unsigned long long)-1;
	r->rax = (unsigned long long)rc;
	return ptrace(PTRACE_SETREGS, pid, 0, r) < 0 ? -errno : 0;
}

static const char *errname(int e)
{
	switch (e) {
	case EINVAL:
		return "EINVAL";
	case E2BIG:
		return "E2BIG";
	case ENOENT:
		return "ENOENT";
	case ENOSYS:
		return "ENOSYS";
	case ENOTTY:
		return "ENOTTY";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	case EFAULT:
		return "EFAULT";
	default:
		return "?";
	}
}

static void on_perf_event_open(pid_t pid, struct user_regs_struct *r)
{
	uint8_t attr[4096];
	struct iovec local = {attr, sizeof(attr)}, remote = {(void *)(uintptr_t)r->rdi, 64};
	ssize_t got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
	size_t avail = got > 0 ? (size_t)got : 0;
	if (avail == 64) {
		uint32_t size;
		memcpy(&size, attr + 4, 4);
		if (size > 64 && size <= sizeof(attr)) {
			remote.iov_len = size;
			local.iov_len = size;
			got = process_vm_readv(pid, &local, 1, &remote, 1, 0);
			avail = got > 0 ? (size_t)got : 64;
		}
	}
	uint32_t size_back = 0;
	const char *why = "";
	int rc = l34_perf_event_open_check(attr, avail, (int)r->rsi, (int)r->rdx, (unsigned long)r->r8,
					   &size_back, &why);
	if (rc == 0)
		return;
	if (rc == -E2BIG && size_back) {
		struct iovec l2 = {&size_back, 4}, r2 = {(void *)(uintptr_t)(r->rdi + 4), 4};
		process_vm_writev(pid, &l2, 1, &r2, 1, 0);
	}
	uint32_t type = 0;
	uint64_t config = 0;
	memcpy(&type, attr, 4);
	memcpy(&config, attr + 8, 8);
	logline(pid, "perf_event_open(type %u, config 0x%llx, flags 0x%llx) = %s: %s", type,
		(unsigned long long)config, (unsigned long long)r->r8, errname(-rc), why);
	skip_with(pid, r, rc);
}

static void on_ioctl(pid_t pid, struct user_regs_struct *r)
{
	char path[64], target[128];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, (int)r->rdi);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return;
	target[n] = '\0';
	if (strcmp(target, "anon_inode:[perf_event]") != 0)
		return;
	int rc = l34_perf_ioctl_check((unsigned long)(uint32_t)r->rsi);
	if (rc == 0)
		return;
	logline(pid, "ioctl(perf fd, '$' %u) = ENOTTY: perf_ioctl() knows ENABLE..SET_FILTER only",
		(unsigned)(r->rsi & 0xff));
	skip_with(pid, r, rc);
}

/* The tracee attaches to pid: if we trace it, let it go first (stop it, detach). */
static void release(pid_t pid)
{
	if (ptrace(PTRACE_INTERRUPT, pid, 0, 0) < 0)
		return; /* not ours */
	for (int i = 0; i < 100; i++) {
		int st;
		pid_t w = waitpid(pid, &st, __WALL);
		if (w < 0)
			return;
		if (WIFEXITED(st) || WIFSIGNALED(st))
			return;
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st);
		int event = st >> 16;
		/* a signal-delivery stop keeps its signal; event and group stops none */
		int pass = (event == 0 && sig != SIGTRAP && sig != (SIGTRAP | 0x80)) ? sig : 0;
		if (event == PTRACE_EVENT_STOP || event == 0 || event == PTRACE_EVENT_SECCOMP) {
			ptrace(PTRACE_DETACH, pid, 0, (void *)(long)pass);
			return;
		}
		ptrace(PTRACE_CONT, pid, 0, 0);
	}
}

static void on_seccomp(pid_t pid)
{
	struct user_regs_struct r;
	if (ptrace(PTRACE_GETREGS, pid, 0, &r) < 0)
		return;
	long nr = (long)r.orig_rax;
	if (nr == __NR_perf_event_open) {
		on_perf_event_open(pid, &r);
	} else if (nr == __NR_ioctl) {
		on_ioctl(pid, &r);
	} else if (nr == __NR_ptrace) {
		long req = (long)r.rdi;
		if (req == PTRACE_ATTACH || req == PTRACE_SEIZE)
			release((pid_t)r.rsi);
	} else if (!l34_has_syscall(L34_X86_64, nr)) {
		const char *name = l34_syscall_name(L34_X86_64, nr);
		char num[32];
		if (!name) {
			snprintf(num, sizeof(num), "syscall %ld", nr);
			name = num;
		}
		logline(pid, "%s = ENOSYS: not in Linux 3.4's syscall table", name);
		skip_with(pid, &r, -ENOSYS);
	}
}

static volatile pid_t main_child;

static void forward(int sig)
{
	if (main_child > 0)
		kill(main_child, sig);
}

static int usage(void)
{
	fputs("usage: linux34 [--log FILE] [--quiet] -- PROGRAM ARGS...\n"
	      "runs PROGRAM with Linux 3.4's answers for the system calls 3.4 lacked and for\n"
	      "perf_event_open/perf ioctls (tests only; x86_64)\n",
	      stderr);
	return 2;
}

int main(int argc, char **argv)
{
	logf_ = stderr;
	int i = 1;
	for (; i < argc; i++) {
		if (strcmp(argv[i], "--") == 0) {
			i++;
			break;
		} else if (strcmp(argv[i], "--log") == 0 && i + 1 < argc) {
			logf_ = fopen(argv[++i], "a");
			if (!logf_) {
				fprintf(stderr, "linux34: %s: %s\n", argv[i], strerror(errno));
				return 2;
			}
		} else if (strcmp(argv[i], "--quiet") == 0) {
			quiet = true;
		} else {
			return usage();
		}
	}
	if (i >= argc)
		return usage();
	if (logf_ != stderr)
		setvbuf(logf_, NULL, _IOLBF, 0);

	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "linux34: fork: %s\n", strerror(errno));
		return 2;
	}
	if (child == 0) {
		raise(SIGSTOP); /* until the tracer has seized us */
		int rc = install_filter();
		if (rc < 0) {
			fprintf(stderr, "linux34: seccomp filter: %s\n", strerror(-rc));
			_exit(127);
		}
		execvp(argv[i], argv + i);
		fprintf(stderr, "linux34: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	int st;
	if (waitpid(child, &st, WSTOPPED) != child || !WIFSTOPPED(st)) {
		fprintf(stderr, "linux34: child did not stop\n");
		return 2;
	}
	long opts = PTRACE_O_TRACESECCOMP | PTRACE_O_TRACEFORK | PTRACE_O_TRACEVFORK | PTRACE_O_TRACECLONE |
		    PTRACE_O_TRACEEXEC | PTRACE_O_EXITKILL;
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)opts) < 0) {
		fprintf(stderr, "linux34: PTRACE_SEIZE: %s\n", strerror(errno));
		kill(child, SIGKILL);
		return 2;
	}
	kill(child, SIGCONT);
	/* Forward SIGINT/SIGTERM to the program (tests stop the agent with SIGTERM). */
	main_child = child;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	int exit_code = 0;
	for (;;) {
		pid_t pid = waitpid(-1, &st, __WALL);
		if (pid < 0) {
			if (errno == EINTR)
				continue;
			break; /* ECHILD: every tracee gone */
		}
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			if (pid == child)
				exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			continue;
		}
		if (!WIFSTOPPED(st))
			continue;
		int sig = WSTOPSIG(st), event = st >> 16;
		if (event == PTRACE_EVENT_SECCOMP) {
			on_seccomp(pid);
			ptrace(PTRACE_CONT, pid, 0, 0);
		} else if (event == PTRACE_EVENT_STOP) {
			if (sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU)
				ptrace(PTRACE_LISTEN, pid, 0, 0); /* group-stop */
			else
				ptrace(PTRACE_CONT, pid, 0, 0);
		} else if (event != 0) {
			ptrace(PTRACE_CONT, pid, 0, 0); /* fork, clone, exec events */
		} else {
			ptrace(PTRACE_CONT, pid, 0, (void *)(long)sig); /* signal-delivery stop */
		}
	}
	if (!quiet && logf_)
		fprintf(logf_, "linux34: %lu call(s) answered as Linux 3.4\n", n_refused);
	return exit_code;
}

#else /* !__x86_64__ */
int main(void)
{
	fputs("linux34: x86_64 hosts only\n", stderr);
	return 2;
}
#endif
