/* Pointer-chase workload: a single cycle through MIB mebibytes of 8-byte words in an
 * order no prefetcher follows (a[i] = LCG(i) modulo a power of two: full period), walked
 * until SECONDS have passed (the clock read every 2^20 steps); prints the steps and the
 * end of the walk. Usage: chase [MIB] [SECONDS] (default 256, 3). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "wl_clock.h"

int main(int argc, char **argv)
{
	uint64_t mib = argc > 1 ? strtoull(argv[1], NULL, 10) : 256;
	double secs = argc > 2 ? atof(argv[2]) : 3.0;
	uint64_t words = 1;
	while (words * 8 < mib << 20)
		words <<= 1;
	uint64_t *a = malloc(words * 8);
	if (!a)
		return 2;
	for (uint64_t i = 0; i < words; i++)
		a[i] = (6364136223846793005ull * i + 1442695040888963407ull) & (words - 1);
	double t0 = wl_seconds(CLOCK_MONOTONIC);
	uint64_t q = 0, k = 0;
	while (wl_seconds(CLOCK_MONOTONIC) - t0 < secs && k < (1ull << 40))
		for (int j = 0; j < (1 << 20); j++, k++)
			q = *(volatile uint64_t *)&a[q];
	printf("chase: %llu steps over %llu MiB, at %llu\n", (unsigned long long)k, (unsigned long long)(words * 8 >> 20),
	       (unsigned long long)q);
	return 0;
}
