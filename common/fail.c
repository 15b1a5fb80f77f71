#include "fail.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>

static void vfail(char *err, size_t errlen, const char *fmt, va_list ap)
{
	if (err && errlen)
		vsnprintf(err, errlen, fmt, ap);
}

int fail(char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, errlen, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

int fail_with(char *err, size_t errlen, int rc, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vfail(err, errlen, fmt, ap);
	va_end(ap);
	return rc;
}
