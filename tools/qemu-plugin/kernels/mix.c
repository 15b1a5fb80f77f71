/* Two functions of different memory behaviour called in turn (sensitivity per
 * function, issue 36): chase() follows a random cyclic permutation of n
 * indices (Sattolo's shuffle, sattolo.h) for s steps, each load's index from
 * the previous load (misses in a chain); stream() sums s words of the same
 * array in address order, going on from where the last call stopped (misses
 * that depend on nothing). B calls of each per repetition, R repetitions.
 * Usage: mix [N [S [B [R]]]], N a power of two. Accesses to the array: stores
 * n (init) + 2(n-1) (shuffle), loads 2(n-1) (shuffle) + 2rbs. */
#include <stdint.h>

#include "kernel.h"
#include "sattolo.h"

#define NMAX (1 << 22)

static struct {
	uint32_t next[NMAX];
} d;

__attribute__((noipa)) static uint32_t chase(uint32_t p, int s)
{
	for (int k = 0; k < s; k++)
		p = d.next[p];
	return p;
}

__attribute__((noipa)) static uint32_t stream(uint32_t *pos, uint32_t mask, int s)
{
	uint32_t acc = 0, at = *pos;
	for (int k = 0; k < s; k++, at = (at + 1) & mask)
		acc += d.next[at];
	*pos = at;
	return acc;
}

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), s = kernel_arg(argc, argv, 2, 1000, 1 << 20),
	    b = kernel_arg(argc, argv, 3, 1, 1 << 24), r = kernel_arg(argc, argv, 4, 1, 1 << 24);
	if (n & (n - 1)) {
		fprintf(stderr, "argument 1: expected a power of two\n");
		return 2;
	}
	kernel_report("mix", n, &d, &d + 1);
	sattolo_cycle(d.next, n);
	uint32_t p = 0, pos = 0, sum = 0;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int j = 0; j < b; j++) {
			p = chase(p, s);
			sum += stream(&pos, (uint32_t)n - 1, s);
		}
	}
	kernel_mark();
	printf("mix: end %u sum %u\n", p, sum);
	return 0;
}
