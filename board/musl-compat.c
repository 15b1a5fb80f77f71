/* Static agent on musl (BOARD_LIBC = musl, mk/board.mk): the glibc entry points that
 * Debian's static libraries (libbpf, libelf, zlib, libcapstone; built against glibc
 * with _FORTIFY_SOURCE) and libcmocka (the unit suites under qemu-user) call, and musl
 * lacks. The _chk functions do what glibc's do: check the destination size the compiler
 * passed and abort on overflow, then do the plain call. Nothing here is linked on glibc.
 * Only what the link asks for is pulled in (one function per section, --gc-sections). */
#include <fcntl.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* glibc's __chk_fail: "*** buffer overflow detected ***: terminated", then abort. */
static _Noreturn void chk_fail(void)
{
	static const char msg[] = "*** buffer overflow detected ***: terminated\n";
	(void)!write(2, msg, sizeof(msg) - 1);
	abort();
}

void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen);
void *__memcpy_chk(void *dst, const void *src, size_t n, size_t dstlen)
{
	if (dstlen < n)
		chk_fail();
	return memcpy(dst, src, n);
}

char *__strcpy_chk(char *dst, const char *src, size_t dstlen);
char *__strcpy_chk(char *dst, const char *src, size_t dstlen)
{
	size_t n = strlen(src);
	if (n >= dstlen)
		chk_fail();
	return memcpy(dst, src, n + 1);
}

char *__strcat_chk(char *dst, const char *src, size_t dstlen);
char *__strcat_chk(char *dst, const char *src, size_t dstlen)
{
	size_t d = strnlen(dst, dstlen), n = strlen(src);
	if (d == dstlen || n >= dstlen - d)
		chk_fail();
	memcpy(dst + d, src, n + 1);
	return dst;
}

/* flag (the fortify level) only restricts %n in writable formats in glibc; ignored. */
int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap);
int __vsnprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, va_list ap)
{
	(void)flag;
	if (slen < maxlen)
		chk_fail();
	return vsnprintf(s, maxlen, fmt, ap);
}

int __snprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, ...);
int __snprintf_chk(char *s, size_t maxlen, int flag, size_t slen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int r = __vsnprintf_chk(s, maxlen, flag, slen, fmt, ap);
	va_end(ap);
	return r;
}

int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...);
int __sprintf_chk(char *s, int flag, size_t slen, const char *fmt, ...)
{
	(void)flag;
	if (slen == 0)
		chk_fail();
	va_list ap;
	va_start(ap, fmt);
	int r = vsnprintf(s, slen, fmt, ap);
	va_end(ap);
	if (r >= 0 && (size_t)r >= slen)
		chk_fail();
	return r;
}

int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap);
int __vfprintf_chk(FILE *f, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	return vfprintf(f, fmt, ap);
}

int __fprintf_chk(FILE *f, int flag, const char *fmt, ...);
int __fprintf_chk(FILE *f, int flag, const char *fmt, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(f, fmt, ap);
	va_end(ap);
	return r;
}

int __printf_chk(int flag, const char *fmt, ...);
int __printf_chk(int flag, const char *fmt, ...)
{
	(void)flag;
	va_list ap;
	va_start(ap, fmt);
	int r = vfprintf(stdout, fmt, ap);
	va_end(ap);
	return r;
}

int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap);
int __vdprintf_chk(int fd, int flag, const char *fmt, va_list ap)
{
	(void)flag;
	return vdprintf(fd, fmt, ap);
}

char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen);
char *__realpath_chk(const char *path, char *resolved, size_t resolvedlen)
{
	if (resolvedlen < PATH_MAX)
		chk_fail();
	return realpath(path, resolved);
}

/* glibc's 64-bit file-offset names: the same calls on musl (off_t is always 64-bit). */
int fcntl64(int fd, int cmd, ...);
int fcntl64(int fd, int cmd, ...)
{
	va_list ap;
	va_start(ap, cmd);
	unsigned long arg = va_arg(ap, unsigned long);
	va_end(ap);
	return fcntl(fd, cmd, arg);
}

void *rawmemchr(const void *s, int c);
void *rawmemchr(const void *s, int c)
{
	const unsigned char *p = s;
	while (*p != (unsigned char)c)
		p++;
	return (void *)p;
}

/* libcmocka (glibc-built, loaded by musl's dynamic linker in the unit suites): its
 * jmp_buf has room for musl's; musl has __sigsetjmp, and longjmp stays within musl. */
void __longjmp_chk(sigjmp_buf env, int val);
void __longjmp_chk(sigjmp_buf env, int val)
{
	siglongjmp(env, val);
}
