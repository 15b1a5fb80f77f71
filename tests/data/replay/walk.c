/* A freestanding static program for test_trace_replay_arm (built with the
 * board cross compilers: -nostdlib, no libc, no stack use in the loop): a
 * pseudo-random walk over a 64 KiB table with loads, stores and a dependent
 * chain, then exit(0) by svc. The same instructions are traced in full under
 * qemu-user with tools/qemu-plugin and replayed by the collector. */
#define N 16384u
unsigned table[N]; /* external: the compiler keeps every store */
unsigned out[64];

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

void _start(void)
{
	unsigned x = 12345u;
	for (unsigned i = 0; i < N; i++) { /* fill: strided stores */
		x = x * 1103515245u + 12345u;
		table[i] = x;
	}
	unsigned p = 0, sum = 0;
	for (unsigned k = 0; k < 20000; k++) { /* chase: each load's address from the last */
		p = table[p & (N - 1)];
		sum += p;
		out[k & 63] = sum;
	}
	__asm__ volatile("" : : "r"(sum)); /* the walk's result is used */
	sys_exit(0);
}
