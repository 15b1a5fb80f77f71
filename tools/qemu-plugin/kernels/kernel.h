/* Shared by the sample kernels (static, cross-compiled, run under qemu-user):
 * the size argument and one line naming the kernel's data range, so that a
 * trace's accesses to the kernel's arrays can be told from the C library's:
 *   KERNEL n=N data=0xLO-0xHI
 * The kernels are scalar on purpose (built with -fno-tree-vectorize
 * -fno-unroll-loops): one load or store per array element access, so their
 * access counts are analytic (tests/integration/test_qemu_plugin.c). */
#ifndef KERNELS_KERNEL_H
#define KERNELS_KERNEL_H

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

static inline void kernel_report(const char *name, int n, const void *lo, const void *hi)
{
	printf("%s n=%d data=%p-%p\n", name, n, lo, hi);
	fflush(stdout);
}

#endif
