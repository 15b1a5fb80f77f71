/* exit(code) by svc for the freestanding replay test programs (walk.c, tls.c, vfp.c, pages.c):
 * AArch64 exit is syscall 93 in x8, 32-bit ARM EABI exit 1 in r7 (Linux unistd.h of each). */
#ifndef REPLAY_SYS_EXIT_H
#define REPLAY_SYS_EXIT_H
__attribute__((noreturn)) static void sys_exit(int code)
{
#if defined(__aarch64__)
	register long x0 __asm__("x0") = code;
	register long x8 __asm__("x8") = 93;
	__asm__ volatile("svc #0" : : "r"(x0), "r"(x8) : "memory");
#else
	register long r0 __asm__("r0") = code;
	register long r7 __asm__("r7") = 1;
	__asm__ volatile("svc #0" : : "r"(r0), "r"(r7) : "memory");
#endif
	for (;;)
		;
}
#endif
