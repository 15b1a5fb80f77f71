/* libc.so of the bionic emulation (scripts/bionic-emu.sh): the bionic prof-clhelper runs under
 * qemu-aarch64 with glibc's loader standing in for /system/bin/linker64. Its imports are bionic's
 * public names (bionic-check); glibc's libc.so.6 (this library's DT_NEEDED, searched after it)
 * gives all of them but the two bionic spells its own way, which this file gives as bionic does:
 *
 * __libc_init: libc/bionic/libc_init_dynamic.cpp (__libc_init; android-10.0.0_r1 and
 *   android-14.0.0_r1 alike): raw_args is the initial stack, read as libc/private/
 *   KernelArgumentBlock.h does (argc, then argv[argc] NULL-terminated, then envp); a non-NULL
 *   structors->fini_array is registered to run at exit (__cxa_atexit(__libc_fini, ...)); then
 *   exit(slingshot(argc, argv, envp)). (initial_linker_arg_count is 0 unless the linker was run
 *   as a program, which the emulation does not do.)
 * __errno: libc/bionic/__errno.cpp (__errno): the address of this thread's errno.
 * sysconf: the same function, but bionic numbers its names otherwise (libc/include/bits/
 *   sysconf.h): the helper's calls carry bionic's numbers; libc/bionic/sysconf.cpp (sysconf)
 *   answers them as below (getauxval, get_nprocs_conf, get_nprocs, getpagesize). A name not
 *   listed here says so and fails (EINVAL), as bionic's does for names it does not know.
 * Exported under bionic's version LIBC (libc/libc.map.txt; tests/bionic_emu/libc.map): glibc-built
 * code (PoCL) asks for sysconf@GLIBC_2.17 and so still gets glibc's; the helper's unversioned
 * references take these. */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/auxv.h>
#include <sys/sysinfo.h>
#include <unistd.h>

typedef void init_func_t(int, char *[], char *[]);
typedef void fini_func_t(void);
typedef struct {
	init_func_t **preinit_array;
	init_func_t **init_array;
	fini_func_t **fini_array;
} structors_array_t; /* libc/bionic/libc_init_common.h */

static fini_func_t **fini_array;

/* libc/bionic/libc_init_common.cpp __libc_fini: from the end towards the -1 sentinel at [0] */
static void libc_fini(void)
{
	if (!fini_array || fini_array[0] != (fini_func_t *)-1)
		return;
	size_t n = 1;
	while (fini_array[n])
		n++;
	while (--n > 0)
		if (fini_array[n] != (fini_func_t *)-1)
			fini_array[n]();
}

__attribute__((noreturn)) void __libc_init(void *raw_args, void (*onexit)(void),
					   int (*slingshot)(int, char **, char **),
					   const structors_array_t *structors)
{
	(void)onexit; /* "the ones that do never use it" (libc_init_dynamic.cpp) */
	uintptr_t *args = raw_args;
	int argc = (int)args[0];
	char **argv = (char **)(args + 1);
	char **envp = argv + argc + 1;
	if (structors->fini_array) {
		fini_array = structors->fini_array;
		atexit(libc_fini);
	}
	exit(slingshot(argc, argv, envp));
}

int *__errno(void)
{
	return &errno;
}

long sysconf(int name)
{
	switch (name) {
	case 0x0006: /* _SC_CLK_TCK */
		return (long)getauxval(AT_CLKTCK);
	case 0x0027: /* _SC_PAGESIZE */
	case 0x0028: /* _SC_PAGE_SIZE */
		return getpagesize();
	case 0x0060: /* _SC_NPROCESSORS_CONF */
		return get_nprocs_conf();
	case 0x0061: /* _SC_NPROCESSORS_ONLN */
		return get_nprocs();
	default:
		fprintf(stderr,
			"bionic-emu: sysconf(0x%04x): not in the double (tests/bionic_emu/libc_double.c)\n",
			name);
		errno = EINVAL;
		return -1;
	}
}
