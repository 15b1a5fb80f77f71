/* LD_PRELOAD face of the fake kbase device (tests/lib/fake_kbase.h): open,
 * ioctl, mmap, munmap and close of the device node named by the script
 * ($PROF_FAKE_KBASE_SCRIPT, see fake_kbase_load_script) and of the reader fd
 * it hands out are served by the fake; every other call goes to the C
 * library. The reader fd is a timerfd that ticks at the dump interval, so
 * the agent's poll loop wakes as it would for the driver. */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/types.h>

#include "fake_kbase.h"

#define EXPORT __attribute__((visibility("default")))

static int loaded;

__attribute__((constructor)) static void fake_init(void)
{
	const char *s = getenv("PROF_FAKE_KBASE_SCRIPT");
	if (s && *s) {
		int rc = fake_kbase_load_script(s);
		if (rc < 0)
			fprintf(stderr, "fake_kbase: cannot read script %s\n", s);
		else
			loaded = 1;
	}
}

/* What the reader's SET_INTERVAL argument reads as, the driver's way, and
 * the interval the fake dumps at: one line at exit when the agent set one up
 * (tests/integration/test_gpu_counters.c compares it with the agent's). */
__attribute__((destructor)) static void fake_fini(void)
{
	if (!loaded)
		return;
	struct fake_kbase_stats s = fake_kbase_stats();
	if (s.opens && s.set_interval_arg)
		fprintf(stderr, "fake_kbase: SET_INTERVAL argument %u ns, reader dumps every %u ns\n",
			s.set_interval_arg, s.interval_ns);
}

static void *next(const char *name)
{
	return dlsym(RTLD_NEXT, name);
}

static int do_open(const char *which, const char *path, int flags, mode_t mode)
{
	if (loaded && fake_kbase_path_is_ours(path))
		return fake_kbase_open(path, flags);
	int (*real)(const char *, int, ...) = next(which);
	return real(path, flags, mode);
}

EXPORT int open(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return do_open("open", path, flags, mode);
}

EXPORT int open64(const char *path, int flags, ...)
{
	mode_t mode = 0;
	if (flags & (O_CREAT | O_TMPFILE)) {
		va_list ap;
		va_start(ap, flags);
		mode = va_arg(ap, mode_t);
		va_end(ap);
	}
	return do_open("open64", path, flags, mode);
}

EXPORT int ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	if (loaded && fake_kbase_is_ours(fd))
		return fake_kbase_ioctl(fd, req, arg);
	int (*real)(int, unsigned long, ...) = next("ioctl");
	return real(fd, req, arg);
}

EXPORT void *mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	if (loaded && fake_kbase_is_ours(fd))
		return fake_kbase_mmap(addr, len, prot, flags, fd, off);
	void *(*real)(void *, size_t, int, int, int, off_t) = next("mmap");
	return real(addr, len, prot, flags, fd, off);
}

EXPORT int munmap(void *addr, size_t len)
{
	if (loaded && fake_kbase_munmap(addr, len) == 0)
		return 0;
	int (*real)(void *, size_t) = next("munmap");
	return real(addr, len);
}

EXPORT int close(int fd)
{
	if (loaded && fake_kbase_is_ours(fd))
		return fake_kbase_close(fd);
	int (*real)(int) = next("close");
	return real(fd);
}
