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

#ifdef CONFIG_AGENT_OPENCL
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <dlfcn.h>
#endif

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

#ifdef CONFIG_AGENT_OPENCL
void *opencl_lib_open(char *err, size_t errlen)
{
	void *lib = dlopen("libOpenCL.so.1", RTLD_NOW | RTLD_LOCAL);
	if (lib)
		return lib;
#if defined(CONFIG_STATIC) && !defined(__GLIBC__)
	snprintf(err, errlen,
		 "libOpenCL.so.1 not loadable: static musl agent (%s); BOARD_LIBC=glibc builds one that can",
		 dlerror());
#else
	snprintf(err, errlen, "libOpenCL.so.1 not found (%s): install an OpenCL ICD loader and driver", dlerror());
#endif
	return NULL;
}

typedef cl_int (*get_platform_ids_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef cl_int (*get_platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);
typedef cl_int (*get_device_ids_fn)(cl_platform_id, cl_device_type, cl_uint, cl_device_id *, cl_uint *);
typedef cl_int (*get_device_info_fn)(cl_device_id, cl_device_info, size_t, void *, size_t *);

static void get_str(get_device_info_fn f, cl_device_id d, cl_device_info what, char *out, size_t len)
{
	out[0] = 0;
	if (f(d, what, len, out, NULL) != CL_SUCCESS)
		out[0] = 0;
	out[len - 1] = 0;
}

/* Runs in the child: discover and fill p. */
static void probe_in_child(struct opencl_probe *p)
{
	void *lib = opencl_lib_open(p->status, sizeof(p->status));
	if (!lib)
		return;
	get_platform_ids_fn gpi = (get_platform_ids_fn)dlsym(lib, "clGetPlatformIDs");
	get_platform_info_fn gpinfo = (get_platform_info_fn)dlsym(lib, "clGetPlatformInfo");
	get_device_ids_fn gdi = (get_device_ids_fn)dlsym(lib, "clGetDeviceIDs");
	get_device_info_fn gdinfo = (get_device_info_fn)dlsym(lib, "clGetDeviceInfo");
	if (!gpi || !gpinfo || !gdi || !gdinfo) {
		snprintf(p->status, sizeof(p->status), "libOpenCL.so.1 lacks the platform/device queries");
		return;
	}
	cl_platform_id plats[8];
	cl_uint np = 0;
	cl_int rc = gpi(8, plats, &np);
	if (rc == -1001 /* CL_PLATFORM_NOT_FOUND_KHR */ || (rc == CL_SUCCESS && np == 0)) {
		snprintf(p->status, sizeof(p->status), "ok");
		return;
	}
	if (rc != CL_SUCCESS) {
		snprintf(p->status, sizeof(p->status), "clGetPlatformIDs failed (%d)", rc);
		return;
	}
	if (np > 8)
		np = 8;
	p->nplatforms = np;
	for (cl_uint i = 0; i < np; i++) {
		char pname[128] = "";
		if (gpinfo(plats[i], CL_PLATFORM_NAME, sizeof(pname), pname, NULL) != CL_SUCCESS)
			pname[0] = 0;
		pname[sizeof(pname) - 1] = 0;
		cl_device_id devs[OPENCL_PROBE_MAX_DEVICES];
		cl_uint nd = 0;
		if (gdi(plats[i], CL_DEVICE_TYPE_ALL, OPENCL_PROBE_MAX_DEVICES, devs, &nd) != CL_SUCCESS)
			continue;
		if (nd > OPENCL_PROBE_MAX_DEVICES)
			nd = OPENCL_PROBE_MAX_DEVICES;
		for (cl_uint j = 0; j < nd && p->ndevices < OPENCL_PROBE_MAX_DEVICES; j++) {
			struct opencl_device *d = &p->devices[p->ndevices++];
			memcpy(d->platform, pname, sizeof(d->platform));
			get_str(gdinfo, devs[j], CL_DEVICE_NAME, d->name, sizeof(d->name));
			get_str(gdinfo, devs[j], CL_DEVICE_VENDOR, d->vendor, sizeof(d->vendor));
			get_str(gdinfo, devs[j], CL_DEVICE_VERSION, d->version, sizeof(d->version));
			get_str(gdinfo, devs[j], CL_DRIVER_VERSION, d->driver, sizeof(d->driver));
			cl_uint u = 0;
			cl_ulong ul = 0;
			cl_device_type t = 0;
			if (gdinfo(devs[j], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof(u), &u, NULL) == CL_SUCCESS)
				d->compute_units = u;
			if (gdinfo(devs[j], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(ul), &ul, NULL) == CL_SUCCESS)
				d->global_mem_bytes = ul;
			u = 0;
			if (gdinfo(devs[j], CL_DEVICE_MAX_CLOCK_FREQUENCY, sizeof(u), &u, NULL) == CL_SUCCESS)
				d->max_clock_mhz = u;
			if (gdinfo(devs[j], CL_DEVICE_TYPE, sizeof(t), &t, NULL) == CL_SUCCESS)
				d->type = (uint32_t)t;
		}
	}
	snprintf(p->status, sizeof(p->status), "ok");
	/* No dlclose: the child exits right away. */
}
#endif

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
		probe_in_child(&r);
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
