/* linux34: run a program as if on Linux 3.4 (the Arndale Octa's kernel), for tests.
 *
 *   linux34 [--log FILE] [--quiet] [--no-cpu-caches] -- PROGRAM ARGS...
 *
 * A seccomp filter, inherited by every thread and child of PROGRAM, hands this supervisor
 * (seccomp user notification, SECCOMP_RET_USER_NOTIF) every system call 3.4 did not have,
 * perf_event_open, the perf ioctls and the calls that name a file; it answers them as 3.4
 * did (tests/lib/linux34.c, each rule citing the 3.4 source): ENOSYS for the missing calls,
 * EINVAL / E2BIG / ENOENT / EOPNOTSUPP for the perf attributes 3.4 refused, ENOTTY for the
 * ioctls 3.4 did not know, ENOENT for the sysfs/procfs files it did not have; everything 3.4
 * accepted goes on to the host kernel (SECCOMP_USER_NOTIF_FLAG_CONTINUE). Each answer is
 * logged (one line each, --log FILE, default stderr) so a test can tell that the
 * personality was met. It reads the caller's memory (attr, paths) as root does
 * (process_vm_readv), and writes back attr.size for E2BIG as 3.4's perf_copy_attr did.
 *
 * Not ptrace: a seccomp RET_TRACE filter answers ENOSYS for every traced call of a process
 * that another tracer holds (the agent's trace windows ptrace the program), and a
 * ptrace-based interposer would have to let the program go for the agent to attach.
 * Directory listings are not filtered (a file 3.4 lacked is refused when opened, not hidden).
 *
 * x86_64 hosts, and 32-bit ARM (a static armhf build runs in the emulated armhf board:
 * mk/board.mk, scripts/board-guest-init.sh); the armhf agent under qemu-arm on the host
 * cannot (qemu-user has no perf_event_open, whatever the kernel). */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__arm__)
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <poll.h>
#include <stddef.h>
#include <sys/ioctl.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <sys/utsname.h>
#include <sys/wait.h>

#include "linux34.h"

static FILE *logf_;
static int listener; /* the seccomp listener, and the notification being answered */
static __u64 notif_id;
static bool quiet;
static unsigned path_opts;
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

#if defined(__x86_64__)
/* System calls that name a path (statx, faccessat2 and openat2 are past 311: ENOSYS). */
static const int path_calls[] = {__NR_open,   __NR_stat,       __NR_lstat,     __NR_access,    __NR_readlink,
				 __NR_openat, __NR_newfstatat, __NR_faccessat, __NR_readlinkat};
#define L34_NATIVE L34_X86_64
#define L34_AUDIT_ARCH AUDIT_ARCH_X86_64
#define L34_LAST_NR 311 /* process_vm_writev */
#define NR_FSTATAT __NR_newfstatat
#else
/* 32-bit ARM EABI (the Arndale's own userland): statx (397), faccessat2 and openat2 are past
 * 377: ENOSYS. arch/arm/kernel/calls.S of 3.4 ends at 377 (process_vm_writev). */
static const int path_calls[] = {__NR_open,	__NR_stat,    __NR_lstat,     __NR_stat64,    __NR_lstat64,
				 __NR_access,	__NR_readlink, __NR_openat,   __NR_fstatat64, __NR_faccessat,
				 __NR_readlinkat};
#define L34_NATIVE L34_ARM
#define L34_AUDIT_ARCH AUDIT_ARCH_ARM
#define L34_LAST_NR 377
#define NR_FSTATAT __NR_fstatat64
#endif
#define NPATH_CALLS (sizeof(path_calls) / sizeof(path_calls[0]))

static bool is_path_call(long nr)
{
	for (size_t i = 0; i < NPATH_CALLS; i++)
		if (path_calls[i] == nr)
			return true;
	return false;
}

/* The filter: native calls only (x86_64: 3.4's compat tables are not modelled); perf_event_open,
 * the path calls, ioctls of type '$' and every number past L34_LAST_NR (x86_64: below x32's;
 * ARM: the private 0xf0000 range included, the supervisor looks them up) go to the
 * supervisor. Returns the listener fd or -errno. */
static int install_filter(void)
{
	struct sock_filter f[32 + NPATH_CALLS];
	size_t n = 0;
#define ADD(x) (f[n++] = (struct sock_filter)x)
	ADD(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)));
	ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, L34_AUDIT_ARCH, 1, 0));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	ADD(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)));
	ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_perf_event_open, 0, 1));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_uname, 0, 1));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	for (size_t i = 0; i < NPATH_CALLS; i++) {
		ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)path_calls[i], 0, 1));
		ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	}
	/* ioctl: cmd (args[1], low 32 bits) of type '$' */
	ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, __NR_ioctl, 0, 4));
	ADD(BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[1])));
	ADD(BPF_STMT(BPF_ALU | BPF_AND | BPF_K, 0xff00));
	ADD(BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, PERF_IOC_TYPE << 8, 0, 3));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
	/* numbers past L34_LAST_NR (below x32's) */
	ADD(BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000, 1, 0));
	ADD(BPF_JUMP(BPF_JMP | BPF_JGT | BPF_K, L34_LAST_NR, 1, 0));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW));
	ADD(BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_USER_NOTIF));
#undef ADD
	struct sock_fprog prog = {.len = (unsigned short)n, .filter = f};
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return -errno;
	long fd = syscall(__NR_seccomp, SECCOMP_SET_MODE_FILTER, SECCOMP_FILTER_FLAG_NEW_LISTENER, &prog);
	return fd < 0 ? -errno : (int)fd;
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

/* Each handler: 0 to let the call go on to the host kernel, or -errno to answer it;
 * ANSWER_0: answer it with 0 (done: the handler wrote what the call returns); ANSWERED: the
 * handler answered it itself (a file descriptor handed over). */
#define ANSWER_0 1
#define ANSWERED 2

/* uname(): 3.4's release (the agent learns from it, with the missing Seccomp line, that the
 * kernel has no seccomp filters: trace/snapshot_common.c), the rest the host's. */
static int on_uname(pid_t pid, const struct seccomp_data *d)
{
	struct utsname u;
	if (uname(&u) < 0)
		return 0;
	snprintf(u.release, sizeof(u.release), "%s", L34_RELEASE);
	struct iovec l = {&u, sizeof(u)}, r = {(void *)(uintptr_t)d->args[0], sizeof(u)};
	if (process_vm_writev(pid, &l, 1, &r, 1, 0) != (ssize_t)sizeof(u))
		return -EFAULT;
	logline(pid, "uname() = 0: release %s", L34_RELEASE);
	return ANSWER_0;
}

/* open of a /proc status file for reading: the caller gets a copy without the lines 3.4 did not
 * write (l34_proc_status), handed over as its new descriptor (SECCOMP_IOCTL_NOTIF_ADDFD, Linux
 * 5.14's SEND flag); 0 (the real file) where that cannot be done. */
static int on_status_open(pid_t pid, const char *abs, int oflags)
{
	if ((oflags & O_ACCMODE) != O_RDONLY)
		return 0;
	char real[8192];
	if (strncmp(abs, "/proc/self/", 11) == 0)
		snprintf(real, sizeof(real), "/proc/%d/%s", (int)pid, abs + 11);
	else
		snprintf(real, sizeof(real), "%s", abs);
	char buf[16384];
	int fd = open(real, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof(buf));
	close(fd);
	int mfd = n > 0 ? memfd_create("linux34-status", MFD_CLOEXEC) : -1;
	if (mfd < 0)
		return 0;
	size_t len = l34_proc_status(buf, (size_t)n);
	struct seccomp_notif_addfd add = {.id = notif_id, .flags = SECCOMP_ADDFD_FLAG_SEND, .srcfd = (__u32)mfd,
					  .newfd_flags = (__u32)(oflags & O_CLOEXEC)};
	int rc = write(mfd, buf, len) == (ssize_t)len && lseek(mfd, 0, SEEK_SET) == 0 ? ioctl(listener, SECCOMP_IOCTL_NOTIF_ADDFD, &add) : -1;
	close(mfd);
	if (rc < 0)
		return 0;
	if (len < (size_t)n)
		logline(pid, "%s: its Seccomp lines left out (Linux 3.8+)", abs);
	return ANSWERED;
}


static int on_perf_event_open(pid_t pid, const struct seccomp_data *d)
{
	uint8_t attr[4096];
	struct iovec local = {attr, 64}, remote = {(void *)(uintptr_t)d->args[0], 64};
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
	int rc = l34_perf_event_open_check(attr, avail, (int)d->args[1], (int)d->args[2],
					   (unsigned long)d->args[4], &size_back, &why);
	if (rc == 0)
		return 0;
	if (rc == -E2BIG && size_back) {
		struct iovec l2 = {&size_back, 4}, r2 = {(void *)(uintptr_t)(d->args[0] + 4), 4};
		process_vm_writev(pid, &l2, 1, &r2, 1, 0);
	}
	uint32_t type = 0;
	uint64_t config = 0;
	if (avail >= 16) {
		memcpy(&type, attr, 4);
		memcpy(&config, attr + 8, 8);
	}
	logline(pid, "perf_event_open(type %u, config 0x%llx, flags 0x%llx) = %s: %s", type,
		(unsigned long long)config, (unsigned long long)d->args[4], errname(-rc), why);
	return rc;
}

static int on_ioctl(pid_t pid, const struct seccomp_data *d)
{
	char path[64], target[128];
	snprintf(path, sizeof(path), "/proc/%d/fd/%d", (int)pid, (int)d->args[0]);
	ssize_t n = readlink(path, target, sizeof(target) - 1);
	if (n <= 0)
		return 0;
	target[n] = '\0';
	if (strcmp(target, "anon_inode:[perf_event]") != 0)
		return 0;
	int rc = l34_perf_ioctl_check((unsigned long)(uint32_t)d->args[1]);
	if (rc < 0)
		logline(pid, "ioctl(perf fd, '$' %u) = ENOTTY: perf_ioctl() knows ENABLE..SET_FILTER only",
			(unsigned)(d->args[1] & 0xff));
	return rc;
}

/* A NUL-terminated string of the caller's at addr, read page by page; false if unreadable. */
static bool read_str(pid_t pid, unsigned long long addr, char *out, size_t max)
{
	size_t got = 0;
	while (got + 1 < max) {
		size_t room = 4096 - (size_t)((addr + got) & 4095);
		if (room > max - 1 - got)
			room = max - 1 - got;
		struct iovec l = {out + got, room}, r = {(void *)(uintptr_t)(addr + got), room};
		ssize_t n = process_vm_readv(pid, &l, 1, &r, 1, 0);
		if (n <= 0)
			return false;
		if (memchr(out + got, '\0', (size_t)n))
			return true;
		got += (size_t)n;
	}
	out[max - 1] = '\0';
	return true;
}

static int on_path(pid_t pid, const struct seccomp_data *d)
{
	long nr = d->nr;
	bool at = nr == __NR_openat || nr == NR_FSTATAT || nr == __NR_faccessat || nr == __NR_readlinkat;
	int dirfd = at ? (int)d->args[0] : AT_FDCWD;
	char path[4096], full[8192];
	if (!read_str(pid, at ? d->args[1] : d->args[0], path, sizeof(path)) || !path[0])
		return 0;
	const char *abs = path;
	if (path[0] != '/') {
		char link[64], base[4096];
		if (dirfd == AT_FDCWD)
			snprintf(link, sizeof(link), "/proc/%d/cwd", (int)pid);
		else
			snprintf(link, sizeof(link), "/proc/%d/fd/%d", (int)pid, dirfd);
		ssize_t n = readlink(link, base, sizeof(base) - 1);
		if (n <= 0)
			return 0;
		base[n] = '\0';
		snprintf(full, sizeof(full), "%s/%s", base, path);
		abs = full;
	}
	if ((nr == __NR_open || nr == __NR_openat) && l34_is_proc_status(abs))
		return on_status_open(pid, abs, (int)d->args[nr == __NR_openat ? 2 : 1]);
	if (l34_path_exists(abs, path_opts))
		return 0;
	logline(pid, "%s = ENOENT: not in Linux 3.4's sysfs/procfs", abs);
	return -ENOENT;
}

static int decide(pid_t pid, const struct seccomp_data *d)
{
	long nr = d->nr;
	if (nr == __NR_perf_event_open)
		return on_perf_event_open(pid, d);
	if (nr == __NR_ioctl)
		return on_ioctl(pid, d);
	if (nr == __NR_uname)
		return on_uname(pid, d);
	if (is_path_call(nr))
		return on_path(pid, d);
	if (!l34_has_syscall(L34_NATIVE, nr)) {
		const char *name = l34_syscall_name(L34_NATIVE, nr);
		char num[32];
		if (!name) {
			snprintf(num, sizeof(num), "syscall %ld", nr);
			name = num;
		}
		logline(pid, "%s = ENOSYS: not in Linux 3.4's syscall table", name);
		return -ENOSYS;
	}
	return 0;
}

static volatile pid_t main_child;

static void forward(int sig)
{
	if (main_child > 0)
		kill(main_child, sig);
}

static int usage(void)
{
	fputs("usage: linux34 [--log FILE] [--quiet] [--no-cpu-caches] -- PROGRAM ARGS...\n"
	      "runs PROGRAM with Linux 3.4's answers for the system calls 3.4 lacked, perf_event_open,\n"
	      "the perf ioctls and the sysfs/procfs files 3.4 did not have (tests only; x86_64)\n",
	      stderr);
	return 2;
}

static int send_fd(int sock, int fd)
{
	char data = 'F';
	struct iovec iov = {&data, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	memset(&u, 0, sizeof(u));
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	c->cmsg_level = SOL_SOCKET;
	c->cmsg_type = SCM_RIGHTS;
	c->cmsg_len = CMSG_LEN(sizeof(int));
	memcpy(CMSG_DATA(c), &fd, sizeof(int));
	return sendmsg(sock, &m, 0) == 1 ? 0 : -errno;
}

static int recv_fd(int sock)
{
	char data;
	struct iovec iov = {&data, 1};
	union {
		char buf[CMSG_SPACE(sizeof(int))];
		struct cmsghdr align;
	} u;
	struct msghdr m = {
	    .msg_iov = &iov, .msg_iovlen = 1, .msg_control = u.buf, .msg_controllen = sizeof(u.buf)};
	if (recvmsg(sock, &m, 0) != 1)
		return -1;
	struct cmsghdr *c = CMSG_FIRSTHDR(&m);
	if (!c || c->cmsg_type != SCM_RIGHTS)
		return -1;
	int fd;
	memcpy(&fd, CMSG_DATA(c), sizeof(int));
	return fd;
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
		} else if (strcmp(argv[i], "--no-cpu-caches") == 0) {
			path_opts |= L34_NO_CPU_CACHES;
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

	struct seccomp_notif_sizes sizes;
	if (syscall(__NR_seccomp, SECCOMP_GET_NOTIF_SIZES, 0, &sizes) < 0) {
		fprintf(stderr, "linux34: seccomp user notification unsupported here: %s\n", strerror(errno));
		return 2;
	}
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		fprintf(stderr, "linux34: socketpair: %s\n", strerror(errno));
		return 2;
	}
	pid_t child = fork();
	if (child < 0) {
		fprintf(stderr, "linux34: fork: %s\n", strerror(errno));
		return 2;
	}
	if (child == 0) {
		close(sv[0]);
		/* without this supervisor its calls would fail: go with it */
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() == 1)
			_exit(127);
		int lfd = install_filter();
		if (lfd < 0) {
			fprintf(stderr, "linux34: seccomp filter: %s\n", strerror(-lfd));
			_exit(127);
		}
		if (send_fd(sv[1], lfd) < 0)
			_exit(127);
		close(lfd);
		close(sv[1]);
		execvp(argv[i], argv + i);
		fprintf(stderr, "linux34: %s: %s\n", argv[i], strerror(errno));
		_exit(127);
	}
	close(sv[1]);
	int lfd = recv_fd(sv[0]);
	close(sv[0]);
	listener = lfd;
	if (lfd < 0) {
		fprintf(stderr, "linux34: no listener from the child\n");
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
		return 2;
	}
	/* Forward SIGINT/SIGTERM to the program (tests stop the agent with SIGTERM). */
	main_child = child;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = forward;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);

	struct seccomp_notif *req =
	    calloc(1, sizes.seccomp_notif > sizeof(*req) ? sizes.seccomp_notif : sizeof(*req));
	struct seccomp_notif_resp *resp =
	    calloc(1, sizes.seccomp_notif_resp > sizeof(*resp) ? sizes.seccomp_notif_resp : sizeof(*resp));
	if (!req || !resp)
		return 2;
	int exit_code = 0;
	for (;;) {
		int st;
		pid_t w = waitpid(child, &st, WNOHANG);
		if (w == child) {
			exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
			break;
		}
		struct pollfd pfd = {.fd = lfd, .events = POLLIN};
		int pr = poll(&pfd, 1, 100);
		if (pr <= 0 || !(pfd.revents & POLLIN))
			continue;
		memset(req, 0, sizes.seccomp_notif);
		if (ioctl(lfd, SECCOMP_IOCTL_NOTIF_RECV, req) < 0)
			continue; /* EINTR, or the caller was killed meanwhile */
		notif_id = req->id;
		int rc = decide((pid_t)req->pid, &req->data);
		if (rc == ANSWERED)
			continue;
		memset(resp, 0, sizes.seccomp_notif_resp);
		resp->id = req->id;
		if (rc == 0) {
			resp->flags = SECCOMP_USER_NOTIF_FLAG_CONTINUE;
		} else if (rc < 0) {
			resp->error = rc;
		} /* ANSWER_0: val 0, error 0 */
		ioctl(lfd, SECCOMP_IOCTL_NOTIF_SEND, resp); /* ENOENT: the caller is gone */
	}
	if (!quiet && logf_)
		fprintf(logf_, "linux34: %lu call(s) answered as Linux 3.4\n", n_refused);
	free(req);
	free(resp);
	return exit_code;
}

#else /* neither x86_64 nor arm */
int main(void)
{
	fputs("linux34: x86_64 and 32-bit ARM only\n", stderr);
	return 2;
}
#endif
