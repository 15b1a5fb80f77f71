/* A freestanding static program for test_trace_replay_arm (built with the board cross
 * compilers): it reads its thread pointer (aarch64 tpidr_el0; 32-bit ARM TPIDRURO, the
 * kernel's TLS word, as libc's __aeabi_read_tp reads it) and loads 64 words through it in
 * a loop, then exit by svc. Replayed from a snapshot whose TraceSnapshot.tls says where
 * the thread pointer points: the loads must go there. */
unsigned words[64] = {1}; /* a writable map: where the test's snapshot points the thread pointer */

#include "sys_exit.h"

void _start(void)
{
	unsigned long tp;
#if defined(__aarch64__)
	__asm__ volatile("mrs %0, tpidr_el0" : "=r"(tp));
#else
	__asm__ volatile("mrc p15, 0, %0, c13, c0, 3" : "=r"(tp));
#endif
	unsigned acc = 0;
	for (unsigned i = 0; i < 1000; i++)
		acc += ((volatile unsigned *)tp)[i & 63];
	sys_exit((int)(acc & 1));
}
