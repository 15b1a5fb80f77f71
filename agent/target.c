#include "target.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "net.h"

#define KILL_GRACE_NS 2000000000ull

struct target {
	struct target_opts o;
	enum target_kind kind;
	char desc[1024];
	sigset_t oldmask;
	bool masked;
	int sfd;
	int pidfd;
	pid_t child;
	int release_fd, exec_err_fd;
	bool released, child_done, interrupted;
	int child_status;
	int stop_signal;
	uint64_t end_at, kill_at;
	struct loop *loop;
};

static int open_pidfd(pid_t pid)
{
#ifdef SYS_pidfd_open
	long fd = syscall(SYS_pidfd_open, pid, 0);
	if (fd >= 0)
		return (int)fd;
#endif
	(void)pid;
	return -1;
}

static void describe(struct target *t)
{
	if (t->kind == TARGET_SYSTEM) {
		snprintf(t->desc, sizeof(t->desc), "system-wide");
	} else if (t->kind == TARGET_PID) {
		snprintf(t->desc, sizeof(t->desc), "pid %d", (int)t->o.pid);
	} else {
		/* as perf names a command: argv[0]'s basename, then the arguments */
		const char *a0 = strrchr(t->o.cmd[0], '/');
		size_t off = (size_t)snprintf(t->desc, sizeof(t->desc), "%s", a0 ? a0 + 1 : t->o.cmd[0]);
		for (char **p = t->o.cmd + 1; *p && off < sizeof(t->desc); p++)
			off += (size_t)snprintf(t->desc + off, sizeof(t->desc) - off, " %s", *p);
	}
}

/* Fork CMD blocked on a pipe: release_fd lets it exec, exec_err_fd reports an exec failure. */
static int start_child(struct target *t)
{
	int go[2], ep[2];
	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(ep, O_CLOEXEC) < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		return -e;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		int e = errno;
		close(go[0]);
		close(go[1]);
		close(ep[0]);
		close(ep[1]);
		return -e;
	}
	if (pid == 0) {
		close(go[1]);
		close(ep[0]);
		signal(SIGPIPE, SIG_DFL);
		sigprocmask(SIG_SETMASK, &t->oldmask, NULL);
		char b;
		ssize_t r;
		do
			r = read(go[0], &b, 1);
		while (r < 0 && errno == EINTR);
		if (r != 1)
			_exit(127); /* the agent gave up before starting us */
		close(go[0]);
		for (char **e = t->o.extra_env; e && *e; e++)
			putenv(*e);
		execvp(t->o.cmd[0], t->o.cmd);
		int e = errno;
		if (write(ep[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(ep[1]);
	t->child = pid;
	t->release_fd = go[1];
	t->exec_err_fd = ep[0];
	return 0;
}

int target_prepare(struct target **out, const struct target_opts *o, char *err, size_t errlen)
{
	struct target *t = calloc(1, sizeof(*t));
	if (!t) {
		snprintf(err, errlen, "out of memory");
		return -ENOMEM;
	}
	t->o = *o;
	t->sfd = t->pidfd = t->release_fd = t->exec_err_fd = -1;
	t->kind = o->all ? TARGET_SYSTEM : o->cmd ? TARGET_EXEC : TARGET_PID;
	describe(t);
	if (t->kind == TARGET_PID && kill(o->pid, 0) < 0 && errno == ESRCH) {
		snprintf(err, errlen, "-p %d: no such process", (int)o->pid);
		free(t);
		return -ESRCH;
	}
	/* Signals arrive through the signalfd; block them before forking so no
	 * SIGCHLD is lost. The child gets the original mask back. */
	sigset_t mask;
	sigemptyset(&mask);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGCHLD);
	sigprocmask(SIG_BLOCK, &mask, &t->oldmask);
	t->masked = true;
	t->sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (t->sfd < 0) {
		int e = errno;
		snprintf(err, errlen, "signalfd: %s", strerror(e));
		target_close(t);
		return -e;
	}
	if (t->kind == TARGET_EXEC) {
		int rc = start_child(t);
		if (rc < 0) {
			snprintf(err, errlen, "cannot start '%s': %s", o->cmd[0], strerror(-rc));
			target_close(t);
			return rc;
		}
	} else if (t->kind == TARGET_PID) {
		t->pidfd = open_pidfd(o->pid);
	}
	*out = t;
	return 0;
}

enum target_kind target_kind(const struct target *t)
{
	return t->kind;
}

pid_t target_pid(const struct target *t)
{
	return t->kind == TARGET_SYSTEM ? -1 : t->kind == TARGET_EXEC ? t->child : t->o.pid;
}

const char *target_describe(const struct target *t)
{
	return t->desc;
}

int target_release(struct target *t)
{
	return target_release_at(t, clock_mono_ns());
}

int target_release_at(struct target *t, uint64_t start_ns)
{
	if (t->o.duration_s > 0)
		t->end_at = start_ns + (uint64_t)(t->o.duration_s * 1e9);
	if (t->kind != TARGET_EXEC || t->released)
		return 0;
	char go = 1;
	if (write(t->release_fd, &go, 1) != 1) {
		log_error("cannot release the command: %s", strerror(errno));
		return 126;
	}
	close(t->release_fd);
	t->release_fd = -1;
	t->released = true;
	int e = 0;
	ssize_t r;
	do
		r = read(t->exec_err_fd, &e, sizeof(e));
	while (r < 0 && errno == EINTR);
	close(t->exec_err_fd);
	t->exec_err_fd = -1;
	if (r == (ssize_t)sizeof(e)) {
		log_error("cannot run '%s': %s", t->o.cmd[0], strerror(e));
		while (waitpid(t->child, &t->child_status, 0) < 0 && errno == EINTR)
			;
		t->child_done = true;
		return e == ENOENT ? 127 : 126;
	}
	return 0;
}

static int target_prepare_poll(void *ctx, struct pollfd *pfd, int max, uint64_t now, int *timeout_ms)
{
	struct target *t = ctx;
	if (max < 2)
		return 0;
	pfd[0] = (struct pollfd){.fd = t->sfd, .events = POLLIN};
	pfd[1] = (struct pollfd){.fd = t->pidfd, .events = POLLIN};
	uint64_t deadlines[2] = {t->end_at, t->kill_at};
	for (int i = 0; i < 2; i++) {
		if (!deadlines[i])
			continue;
		int ms = deadlines[i] <= now ? 0 : (int)((deadlines[i] - now + 999999) / 1000000);
		if (*timeout_ms < 0 || ms < *timeout_ms)
			*timeout_ms = ms;
	}
	if (t->kind == TARGET_PID && t->pidfd < 0 && (*timeout_ms < 0 || *timeout_ms > 200))
		*timeout_ms = 200; /* no pidfd (old kernel): poll for the process */
	return 2;
}

static void done(struct target *t)
{
	if (t->loop)
		loop_stop(t->loop, 0);
}

static int target_dispatch(void *ctx, struct pollfd *pfd, int n, uint64_t now)
{
	struct target *t = ctx;
	if (n >= 1 && (pfd[0].revents & POLLIN)) {
		struct signalfd_siginfo si;
		while (read(t->sfd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
			if (si.ssi_signo == SIGCHLD) {
				int status;
				pid_t r = t->child > 0 && !t->child_done ? waitpid(t->child, &status, WNOHANG) : 0;
				if (r == t->child) {
					t->child_done = true;
					t->child_status = status;
					done(t);
				} else if (r < 0 && errno == ECHILD) {
					/* collected elsewhere without telling us: it is gone */
					log_warn("command %d ended; its exit status was lost", (int)t->child);
					t->child_done = true;
					t->child_status = 1 << 8;
					done(t);
				}
			} else if (t->kind == TARGET_EXEC && !t->child_done && !t->interrupted) {
				/* Pass it on and wait for the command to end. */
				t->interrupted = true;
				t->stop_signal = (int)si.ssi_signo;
				kill(t->child, (int)si.ssi_signo);
				t->kill_at = now + KILL_GRACE_NS;
			} else {
				t->interrupted = true;
				t->stop_signal = (int)si.ssi_signo;
				done(t);
			}
		}
	}
	if (t->kind == TARGET_PID) {
		if ((t->pidfd >= 0 && n >= 2 && (pfd[1].revents & POLLIN)) ||
		    (t->pidfd < 0 && kill(t->o.pid, 0) < 0 && errno == ESRCH)) {
			log_info("process %d exited", (int)t->o.pid);
			done(t);
		}
	}
	if (t->end_at && now >= t->end_at) {
		t->end_at = 0;
		if (t->kind == TARGET_EXEC && !t->child_done) {
			log_info("--duration reached: stopping the command (SIGTERM)");
			kill(t->child, SIGTERM);
			t->kill_at = now + KILL_GRACE_NS;
		} else {
			done(t);
		}
	}
	if (t->kill_at && now >= t->kill_at && t->kind == TARGET_EXEC && !t->child_done) {
		log_warn("the command did not stop; sending SIGKILL");
		kill(t->child, SIGKILL);
		t->kill_at = 0;
	}
	return 0;
}

int target_attach(struct target *t, struct loop *l)
{
	struct loop_source src = {.name = "target", .prepare = target_prepare_poll, .dispatch = target_dispatch, .ctx = t};
	t->loop = l;
	if (t->kind == TARGET_EXEC && t->child_done)
		loop_stop(l, 0);
	return loop_add(l, &src);
}

void target_child_reaped(struct target *t, pid_t pid, int status)
{
	if (!t || t->kind != TARGET_EXEC || pid != t->child || t->child_done)
		return;
	t->child_done = true;
	t->child_status = status;
	done(t);
}

bool target_interrupted(const struct target *t)
{
	return t->interrupted;
}

bool target_wait_status(struct target *t, int *status)
{
	if (t->kind != TARGET_EXEC)
		return false;
	if (!t->child_done) {
		int st;
		if (waitpid(t->child, &st, WNOHANG) == t->child) {
			t->child_done = true;
			t->child_status = st;
		}
	}
	if (t->child_done)
		*status = t->child_status;
	return t->child_done;
}

int target_exit_code(struct target *t)
{
	if (t->kind != TARGET_EXEC)
		return 0;
	int st;
	if (target_wait_status(t, &st))
		return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : 1;
	return 128 + (t->stop_signal ? t->stop_signal : SIGTERM);
}

void target_close(struct target *t)
{
	if (!t)
		return;
	if (t->release_fd >= 0)
		close(t->release_fd); /* a blocked child sees EOF and exits 127 */
	if (t->exec_err_fd >= 0)
		close(t->exec_err_fd);
	if (t->child > 0 && !t->child_done && !t->released) {
		/* never started: it only waited for us */
		kill(t->child, SIGKILL);
		while (waitpid(t->child, NULL, 0) < 0 && errno == EINTR)
			;
	}
	/* A released command that is still running is left alone: the agent
	 * must not take the profiled program down with it. */
	if (t->pidfd >= 0)
		close(t->pidfd);
	if (t->sfd >= 0)
		close(t->sfd);
	if (t->masked)
		sigprocmask(SIG_SETMASK, &t->oldmask, NULL);
	free(t);
}
