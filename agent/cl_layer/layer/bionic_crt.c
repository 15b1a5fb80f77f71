/* What bionic's crtbegin_so.o gives every shared library, for the bionic build of the capture
 * libraries linked without an NDK (mk/cl_layer.mk, BIONIC_SRC): __dso_handle
 * (bionic/libc/arch-common/bionic/__dso_handle_so.h: the library's own address, hidden) and
 * atexit (bionic/libc/arch-common/bionic/atexit.h: __cxa_atexit with this library's handle, so
 * the handler runs when the library is unloaded or the process exits). libc.so exports no atexit. */
#include <stdlib.h> /* bionic's defines __BIONIC__ (sys/cdefs.h) */

#ifdef __BIONIC__
extern int __cxa_atexit(void (*)(void *), void *, void *);

__attribute__((visibility("hidden"))) void *__dso_handle = &__dso_handle;

__attribute__((visibility("hidden"))) int atexit(void (*func)(void))
{
	return __cxa_atexit((void (*)(void *))func, (void *)0, &__dso_handle);
}
#else
typedef int bionic_crt_unused; /* glibc builds: libc_nonshared.a and crtbeginS.o give these */
#endif
