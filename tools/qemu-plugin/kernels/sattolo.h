/* A random cyclic permutation of n indices (Sattolo's shuffle), shared by the
 * pointer-chasing kernels (chase.c, mix.c): next[i] = i, then for i from n-1
 * down to 1 next[i] swaps with next[j], j < i from a fixed LCG, so that
 * following next from any index visits all n before it returns. Accesses to
 * next: stores n (init) + 2(n-1) (swaps), loads 2(n-1) (swaps), counted by
 * tests/integration/test_qemu_plugin.c. */
#ifndef KERNELS_SATTOLO_H
#define KERNELS_SATTOLO_H

#include <stdint.h>

static inline void sattolo_cycle(uint32_t *next, int n)
{
	for (int i = 0; i < n; i++)
		next[i] = (uint32_t)i;
	uint32_t x = 12345;
	for (int i = n - 1; i > 0; i--) {
		x = x * 1103515245u + 12345u;
		int j = (int)((x >> 8) % (uint32_t)i);
		uint32_t t = next[i];
		next[i] = next[j];
		next[j] = t;
	}
}

#endif
