/* The one helper every validator and option parser reports through: the
 * reason into a caller's buffer, -EINVAL back. Include it from .c files only
 * (cmocka, which the tests include, has a fail() macro of its own). */
#ifndef COMMON_FAIL_H
#define COMMON_FAIL_H

#include <stddef.h>

/* printf into err (errlen bytes; 0: nothing written); returns -EINVAL. */
int fail(char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same, returning rc (a negative errno) instead of -EINVAL. */
int fail_with(char *err, size_t errlen, int rc, const char *fmt, ...) __attribute__((format(printf, 4, 5)));

#endif
