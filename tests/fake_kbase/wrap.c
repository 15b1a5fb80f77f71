/* Link-time face of the fake kbase device (tests/lib/fake_kbase.h) for static
 * agents, which LD_PRELOAD cannot reach: the emulated boards' test agent
 * (mk/board.mk, guest/agent-fakegpu) is linked with -Wl,--wrap= for open,
 * open64, ioctl, mmap, mmap64, munmap and close, so the agent's own calls come here;
 * the device node named by the script ($PROF_FAKE_KBASE_SCRIPT) and the reader
 * fd it hands out are served by the fake, everything else goes to the C
 * library (__real_*). Never part of the product: only that test binary. */
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/types.h>

#include "fake_kbase.h"

int __real_open(const char *path, int flags, ...);
int __real_open64(const char *path, int flags, ...);
int __real_ioctl(int fd, unsigned long req, ...);
void *__real_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off);
void *__real_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off);
int __real_munmap(void *addr, size_t len);
int __real_close(int fd);

static int loaded = -1;

static bool ours_path(const char *path)
{
	if (loaded < 0) {
		const char *s = getenv("PROF_FAKE_KBASE_SCRIPT");
		loaded = s && *s && fake_kbase_load_script(s) == 0;
		if (s && *s && !loaded)
			fprintf(stderr, "fake_kbase: cannot read script %s\n", s);
	}
	return loaded > 0 && fake_kbase_path_is_ours(path);
}

static bool ours_fd(int fd)
{
	return loaded > 0 && fake_kbase_is_ours(fd);
}

static mode_t mode_arg(int flags, va_list ap)
{
	return (flags & (O_CREAT | O_TMPFILE)) ? va_arg(ap, mode_t) : 0;
}

int __wrap_open(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return ours_path(path) ? fake_kbase_open(path, flags) : __real_open(path, flags, mode);
}

int __wrap_open64(const char *path, int flags, ...)
{
	va_list ap;
	va_start(ap, flags);
	mode_t mode = mode_arg(flags, ap);
	va_end(ap);
	return ours_path(path) ? fake_kbase_open(path, flags) : __real_open64(path, flags, mode);
}

/* musl declares ioctl(int, int, ...): the request is used as 32 bits either way */
int __wrap_ioctl(int fd, unsigned long req, ...)
{
	va_list ap;
	va_start(ap, req);
	void *arg = va_arg(ap, void *);
	va_end(ap);
	req &= 0xffffffffu;
	return ours_fd(fd) ? fake_kbase_ioctl(fd, req, arg) : __real_ioctl(fd, req, arg);
}

void *__wrap_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return ours_fd(fd) ? fake_kbase_mmap(addr, len, prot, flags, fd, off) : __real_mmap(addr, len, prot, flags, fd, off);
}

void *__wrap_mmap64(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
	return ours_fd(fd) ? fake_kbase_mmap(addr, len, prot, flags, fd, off)
			   : __real_mmap64(addr, len, prot, flags, fd, off);
}

int __wrap_munmap(void *addr, size_t len)
{
	return loaded > 0 && fake_kbase_munmap(addr, len) == 0 ? 0 : __real_munmap(addr, len);
}

int __wrap_close(int fd)
{
	return ours_fd(fd) ? fake_kbase_close(fd) : __real_close(fd);
}
