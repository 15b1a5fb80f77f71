/* Shared by the sample kernels (static, cross-compiled, run under qemu-user):
 * the size argument and one line naming the kernel's data range, so that a
 * trace's accesses to the kernel's arrays can be told from the C library's:
 *   KERNEL n=N data=0xLO-0xHI
 * The kernels are scalar on purpose (built with -fno-tree-vectorize
 * -fno-unroll-loops -fno-tree-loop-distribute-patterns: no memcpy for a copy
 * loop): one load or store per array element access, so their
 * access counts are analytic (tests/integration/test_qemu_plugin.c). Each
 * repeats its work R times (an argument, 1 by default), calling kernel_mark()
 * before each repetition and after the last. */
#ifndef KERNELS_KERNEL_H
#define KERNELS_KERNEL_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

static inline int kernel_arg(int argc, char **argv, int i, int dflt, int max)
{
	int v = argc > i ? atoi(argv[i]) : dflt;
	if (v < 1 || v > max) {
		fprintf(stderr, "argument %d: expected 1..%d\n", i, max);
		exit(2);
	}
	return v;
}

/* Called at the start of every repetition and once after the last: its
 * address (printed by kernel_report) marks the repetitions in a trace, so
 * that a full trace's steady state (repetitions after the first) can be told
 * from its start (tests/integration/test_trace_accuracy.c). */
__attribute__((noinline)) static void kernel_mark(void)
{
	__asm__ volatile("" ::: "memory");
}

static inline void kernel_report(const char *name, int n, const void *lo, const void *hi)
{
	printf("%s n=%d data=%p-%p mark=%p\n", name, n, lo, hi, (void *)(uintptr_t)kernel_mark);
	fflush(stdout);
}

#endif
