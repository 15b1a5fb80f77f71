/* A freestanding static program for test_trace_replay_arm (built with the
 * board cross compilers: -nostdlib, no libc, no stack use in the loop): a
 * pseudo-random walk over a 64 KiB table with loads, stores and a dependent
 * chain, then exit(0) by svc. The same instructions are traced in full under
 * qemu-user with tools/qemu-plugin and replayed by the collector. */
#define N 16384u
unsigned table[N]; /* external: the compiler keeps every store */
unsigned out[64];

#include "sys_exit.h"

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
