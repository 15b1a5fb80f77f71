/* A loop of known length for hardware-counter tests (issue 30): N iterations of
 * exactly 8 instructions (6 adds, a decrement that sets the flags, a conditional
 * branch), in inline assembly for aarch64, 32-bit ARM (A32 or T32) and x86_64.
 * Counted user-only, two runs of N and 2N differ by 8N instructions (the rest of
 * the process, start-up and exit, is the same in both). Prints its CPU time and
 * the loop's address range, so a test can check where samples fell.
 * Usage: pmu_loop N  (N >= 1) */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_clock.h"

#if defined(__aarch64__)
#define LOOP_BODY                                                                                                      \
	".globl pmu_loop_begin\n pmu_loop_begin:\n"                                                                    \
	"1: add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n"     \
	" subs %0, %0, #1\n b.ne 1b\n"                                                                                 \
	".globl pmu_loop_end\n pmu_loop_end:\n"
#define LOOP_EXACT 1
#elif defined(__arm__)
#define LOOP_BODY                                                                                                      \
	".syntax unified\n .globl pmu_loop_begin\n pmu_loop_begin:\n"                                                  \
	"1: add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n add %1, %1, #1\n"     \
	" subs %0, %0, #1\n bne 1b\n"                                                                                  \
	".globl pmu_loop_end\n pmu_loop_end:\n"
#define LOOP_EXACT 1
#elif defined(__x86_64__)
#define LOOP_BODY                                                                                                      \
	".globl pmu_loop_begin\n pmu_loop_begin:\n"                                                                    \
	"1: add $1, %1\n add $1, %1\n add $1, %1\n add $1, %1\n add $1, %1\n add $1, %1\n"                             \
	" sub $1, %0\n jnz 1b\n"                                                                                       \
	".globl pmu_loop_end\n pmu_loop_end:\n"
#define LOOP_EXACT 1
#endif

#ifdef LOOP_EXACT
extern char pmu_loop_begin[], pmu_loop_end[];

__attribute__((noinline)) static unsigned long run(unsigned long n)
{
	unsigned long acc = 0;
	__asm__ volatile(LOOP_BODY : "+r"(n), "+r"(acc) : : "cc");
	return acc;
}
#else
static volatile unsigned long sink;
__attribute__((noinline)) static unsigned long run(unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		sink += 6;
	return sink;
}
#endif

int main(int argc, char **argv)
{
	char *end = NULL;
	unsigned long n = argc > 1 ? strtoul(argv[1], &end, 0) : 0;
	if (!end || *end || n == 0) {
		fprintf(stderr, "usage: pmu_loop N (iterations of 8 instructions, N >= 1)\n");
		return 2;
	}
	unsigned long acc = run(n);
#ifdef LOOP_EXACT
	printf("pmu_loop: n=%lu acc=%lu cpu=%.6f begin=%p end=%p\n", n, acc, wl_seconds(CLOCK_PROCESS_CPUTIME_ID),
	       (void *)pmu_loop_begin, (void *)pmu_loop_end);
#else
	printf("pmu_loop: n=%lu acc=%lu cpu=%.6f (no exact loop for this architecture)\n", n, acc,
	       wl_seconds(CLOCK_PROCESS_CPUTIME_ID));
#endif
	return acc == 6 * n ? 0 : 1;
}
