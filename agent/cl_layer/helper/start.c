/* The helper's program entry for glibc boards (mk/cl_layer.mk links it with -nostartfiles
 * -no-pie when BOARD_GLIBC_MAX is set): glibc's own crt1.o (Scrt1.o) of the build machine
 * calls __libc_start_main@GLIBC_2.34, which an old board's glibc lacks; this entry calls the
 * version the force-included .symver header binds (GLIBC_2.4 armhf, 2.17 arm64), as glibc's
 * sysdeps/arm/start.S and sysdeps/aarch64/start.S (_start) of those releases do: main, argc,
 * argv, init and fini (none: the helper has no constructors of its own; glibc before 2.34 skips
 * a NULL init in csu/libc-start.c), the loader's rtld_fini (r0 / x0 at entry), the stack end. */
#if defined(__arm__)
__asm__(".text\n"
	".global _start\n"
	".type _start, %function\n"
	".arm\n"
	"_start:\n"
	"	mov fp, #0\n"
	"	mov lr, #0\n"
	"	pop {r1}\n"	    /* argc */
	"	mov r2, sp\n"	    /* argv */
	"	push {r2}\n"	    /* 7th: stack end */
	"	push {r0}\n"	    /* 6th: rtld_fini */
	"	mov r3, #0\n"
	"	push {r3}\n"	    /* 5th: fini */
	"	ldr r0, =main\n"
	"	bl __libc_start_main\n"
	"	bl abort\n"
	".ltorg\n");
#elif defined(__aarch64__)
__asm__(".text\n"
	".global _start\n"
	".type _start, %function\n"
	"_start:\n"
	"	mov x29, #0\n"
	"	mov x30, #0\n"
	"	mov x5, x0\n"	    /* rtld_fini */
	"	ldr x1, [sp]\n"	    /* argc */
	"	add x2, sp, #8\n"   /* argv */
	"	mov x6, sp\n"	    /* stack end */
	"	adrp x0, main\n"
	"	add x0, x0, :lo12:main\n"
	"	mov x3, #0\n"	    /* init */
	"	mov x4, #0\n"	    /* fini */
	"	bl __libc_start_main\n"
	"	bl abort\n");
#else
#error "start.c: the glibc-board helper entry exists for arm and aarch64 only"
#endif
