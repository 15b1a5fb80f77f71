#include "opencl_probe.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "generated/config.h"
#include "net.h"


const char *opencl_device_type_name(uint32_t type)
{
	/* CL_DEVICE_TYPE_CPU = 2, GPU = 4, ACCELERATOR = 8, CUSTOM = 16 */
	if (type & 4)
		return "GPU";
	if (type & 2)
		return "CPU";
	if (type & 8)
		return "ACCELERATOR";
	if (type & 16)
		return "CUSTOM";
	return "OTHER";
}

int opencl_probe_run(struct opencl_probe *p, int timeout_ms)
{
	memset(p, 0, sizeof(*p));
#ifndef CONFIG_AGENT_OPENCL
	(void)timeout_ms;
	snprintf(p->status, sizeof(p->status), "not compiled in");
	return -ENOTSUP;
#else
	int pfd[2];
	if (pipe2(pfd, O_CLOEXEC) < 0) {
		snprintf(p->status, sizeof(p->status), "pipe: %s", strerror(errno));
		return -errno;
	}
	fflush(NULL);
	pid_t child = fork();
	if (child < 0) {
		int e = errno;
		close(pfd[0]);
		close(pfd[1]);
		snprintf(p->status, sizeof(p->status), "fork: %s", strerror(e));
		return -e;
	}
	if (child == 0) {
		close(pfd[0]);
		struct opencl_probe r;
		memset(&r, 0, sizeof(r));
#if defined(CONFIG_STATIC) && !defined(__GLIBC__)
		/* a static musl agent cannot load libOpenCL: the board-libc helper does it */
		opencl_helper_exec(pfd[1], "probe", r.status, sizeof(r.status));
#else
		opencl_probe_fill(&r);
#endif
		size_t off = 0;
		const char *b = (const char *)&r;
		while (off < sizeof(r)) {
			ssize_t w = write(pfd[1], b + off, sizeof(r) - off);
			if (w <= 0)
				break;
			off += (size_t)w;
		}
		_exit(0); /* skip atexit handlers (and leak checks) of the parent's image */
	}
	close(pfd[1]);
	size_t got = 0;
	char *b = (char *)p;
	uint64_t deadline = clock_mono_ns() + (uint64_t)timeout_ms * 1000000ull;
	int rc = 0;
	while (got < sizeof(*p)) {
		uint64_t now = clock_mono_ns();
		if (now >= deadline) {
			rc = -ETIMEDOUT;
			break;
		}
		struct pollfd q = {.fd = pfd[0], .events = POLLIN};
		int n = poll(&q, 1, (int)((deadline - now) / 1000000ull) + 1);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			continue;
		ssize_t r = read(pfd[0], b + got, sizeof(*p) - got);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			rc = -EIO;
			break;
		}
		got += (size_t)r;
	}
	close(pfd[0]);
	if (rc < 0) {
		kill(child, SIGKILL);
		memset(p, 0, sizeof(*p));
		snprintf(p->status, sizeof(p->status), "%s",
			 rc == -ETIMEDOUT ? "OpenCL discovery timed out" : "OpenCL discovery crashed");
	}
	while (waitpid(child, NULL, 0) < 0 && errno == EINTR)
		;
	p->status[sizeof(p->status) - 1] = 0;
	if (rc == 0 && (strncmp(p->status, "libOpenCL.so.1 not found", 24) == 0 ||
			strncmp(p->status, "libOpenCL.so.1 not loadable", 27) == 0))
		rc = -ENOENT;
	else if (rc == 0 && strcmp(p->status, "ok") != 0)
		rc = -EIO;
	for (size_t i = 0; i < p->ndevices && i < OPENCL_PROBE_MAX_DEVICES; i++) {
		struct opencl_device *d = &p->devices[i];
		d->platform[sizeof(d->platform) - 1] = d->name[sizeof(d->name) - 1] = 0;
		d->vendor[sizeof(d->vendor) - 1] = d->version[sizeof(d->version) - 1] = 0;
		d->driver[sizeof(d->driver) - 1] = 0;
	}
	if (p->ndevices > OPENCL_PROBE_MAX_DEVICES)
		p->ndevices = OPENCL_PROBE_MAX_DEVICES;
	return rc;
#endif
}
