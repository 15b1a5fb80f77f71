/* The helper's program entry for Android (mk/cl_layer.mk `bionic-libs`, linked without an NDK,
 * so without bionic's crtbegin_dynamic.o): what bionic's libc/arch-common/bionic/crtbegin.c
 * (_start, _start_main; android-14.0.0_r1, the same contract in android-10.0.0_r1, API 29) does
 * for a dynamic executable. _start clears the frame and link registers and passes the initial
 * stack (argc, argv, envp, auxv) to
 * __libc_init(raw_args, onexit, main, structors) (libc/bionic/libc_init_dynamic.cpp), which
 * ignores onexit, registers structors->fini_array with __cxa_atexit when it is not NULL (the
 * helper has no destructors of its own: NULL) and exits with main's value; the linker has run
 * the executable's constructors before _start. Also the ABI note bionic's crtbrand.S adds
 * (.note.android.ident: name "Android", type 1, the API level). The executable has no TLS
 * segment (no __thread in the helper), so crtbegin.c's over-aligned .tdata is not needed. */
#include <stdlib.h> /* bionic's defines __BIONIC__ (sys/cdefs.h) */

#ifdef __BIONIC__
typedef void init_func_t(int, char *[], char *[]);
typedef void fini_func_t(void);
typedef struct {
	init_func_t **preinit_array;
	init_func_t **init_array;
	fini_func_t **fini_array;
} structors_array_t; /* libc/bionic/libc_init_common.h */

extern int main(int argc, char **argv, char **envp);
extern __attribute__((noreturn)) void __libc_init(void *raw_args, void (*onexit)(void),
						  int (*slingshot)(int, char **, char **),
						  const structors_array_t *structors);

__attribute__((used, noreturn, visibility("hidden"))) void helper_start_main(void *raw_args)
{
	static const structors_array_t none = {NULL, NULL, NULL};
	__libc_init(raw_args, NULL, main, &none);
}

#if defined(__aarch64__)
__asm__(".text\n"
	".global _start\n"
	".type _start, %function\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x0, sp\n"
	"	b helper_start_main\n"
	".size _start, .-_start\n");
#elif defined(__arm__)
__asm__(".text\n"
	".global _start\n"
	".type _start, %function\n"
	"_start:\n"
	"	mov fp, #0\n"
	"	mov lr, #0\n"
	"	mov r0, sp\n"
	"	b helper_start_main\n"
	".size _start, .-_start\n");
#else
#error "start_bionic.c: the Android helper entry exists for arm and aarch64 only"
#endif

#define HELPER_STR2(x) #x
#define HELPER_STR(x) HELPER_STR2(x)
__asm__(".section .note.android.ident,\"a\",%note\n"
	".balign 4\n"
	".long 8\n" /* namesz: "Android\0" */
	".long 4\n" /* descsz: the API level */
	".long 1\n" /* NT_ANDROID_TYPE_IDENT */
	".ascii \"Android\\0\"\n"
	".long " HELPER_STR(__ANDROID_API__) "\n"
	".text\n");
#else
typedef int start_bionic_unused; /* only the bionic build links this file */
#endif
