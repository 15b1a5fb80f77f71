/* What every architecture's snapshot shares (snapshot_priv.h): the thread's status, the
 * reasons a snapshot may not be taken, waiting for a stop, and the snapshot's end. */
#include "generated/config.h"
#if defined(CONFIG_AGENT_TRACER) && (defined(CONFIG_AGENT_TRACE_REPLAY) || defined(__aarch64__) || defined(__arm__))

#include "snapshot.h"
#include "snapshot_priv.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "net.h"

bool trace_snapshot_release_has_filters(const char *release)
{
	unsigned major = 0, minor = 0;
	if (!release || sscanf(release, "%u.%u", &major, &minor) != 2)
		return true; /* unknown: assume it may */
	return major > 3 || (major == 3 && minor >= 5);
}

/* "Key:\tvalue" of /proc/TID/status as a number; -1 when absent. */
static long status_field(pid_t tid, const char *key)
{
	char path[48], line[256];
	snprintf(path, sizeof(path), "/proc/%d/status", (int)tid);
	FILE *f = fopen(path, "re");
	if (!f)
		return -1;
	long v = -1;
	size_t kl = strlen(key);
	while (fgets(line, sizeof(line), f))
		if (strncmp(line, key, kl) == 0 && line[kl] == ':') {
			v = strtol(line + kl + 1, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

/* The next stop or end of pid, up to deadline. 0 with *status, -ETIMEDOUT, -errno. */
int trace_snapshot_wait(pid_t pid, uint64_t deadline, int *status)
{
	for (unsigned spins = 0;; spins++) {
		pid_t r = waitpid(pid, status, __WALL | WNOHANG);
		if (r == pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return -errno;
		if (clock_mono_ns() >= deadline)
			return -ETIMEDOUT;
		if (spins < 1000) {
			sched_yield();
		} else {
			struct timespec ts = {0, 20000};
			nanosleep(&ts, NULL);
		}
	}
}

/* One step of the injected clone (snapshot_priv.h): resume the stopped tid with req, then its
 * next stop by deadline. A stop that does not come in time is asked for (PTRACE_INTERRUPT), so
 * that the caller can still restore the registers, which needs a stop. */
int trace_snapshot_step(pid_t tid, int req, const char *reqname, uint64_t deadline, int *status,
			char *why, size_t whylen)
{
	if (ptrace(req, tid, NULL, NULL) < 0) {
		int rc = -errno;
		snprintf(why, whylen, "%s: %s", reqname, strerror(-rc));
		return rc;
	}
	int rc = trace_snapshot_wait(tid, deadline, status);
	if (rc < 0) {
		snprintf(why, whylen, "the injected clone did not return: %s", strerror(-rc));
		if (rc == -ETIMEDOUT) {
			ptrace(PTRACE_INTERRUPT, tid, NULL, NULL);
			trace_snapshot_wait(tid, clock_mono_ns() + 1000000000ull, status);
		}
		return rc;
	}
	if (WIFEXITED(*status) || WIFSIGNALED(*status)) {
		snprintf(why, whylen, "the thread exited");
		return 1;
	}
	return 0;
}

/* Why a snapshot of tid must not be taken ("" when it may), from what the thread's
 * registers do not tell (those: trace_snapshot_take). */
void trace_snapshot_refusal(pid_t tid, char *why, size_t whylen)
{
	why[0] = '\0';
	long sc = status_field(tid, "Seccomp");
	struct utsname u;
	if (sc < 0 && uname(&u) == 0 && !trace_snapshot_release_has_filters(u.release))
		sc = 0; /* Linux 3.4 (the Arndale): no such line, and no filters to fear */
	if (sc != 0) {
		snprintf(why, whylen, "%s", sc < 0 ? "its seccomp mode is unknown" : "a seccomp filter could refuse or kill on clone");
		return;
	}
	char path[48], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)tid);
	FILE *f = fopen(path, "re");
	size_t n = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')');
	int ppid = 0;
	char st;
	if (!p || sscanf(p + 1, " %c %d", &st, &ppid) != 2 || ppid != (int)getpid())
		snprintf(why, whylen, "the agent did not start the program (its parent is %d): the snapshot would be left a zombie of that parent",
			 ppid);
}

void trace_snapshot_drop(pid_t child)
{
	if (child <= 0)
		return;
	kill(child, SIGKILL);
	for (int i = 0; i < 16; i++) {
		int status = 0;
		pid_t r = waitpid(child, &status, __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0 || WIFEXITED(status) || WIFSIGNALED(status))
			return;
	}
}

#endif
