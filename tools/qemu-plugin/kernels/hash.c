/* Hash-table probe: an open-addressing table of n uint32 keys (n a power of
 * two; linear probing, multiplicative hash), filled to half with the keys of
 * indices 0..n/2-1, then probed s times per repetition with the keys of
 * indices drawn from a fixed LCG over 0..n-1 (about half present). Each probe
 * starts at an address that depends on nothing loaded: misses that do not
 * wait for each other (the opposite of chase). Usage: hash [N [S [R]]]. */
#include <stdint.h>

#include "kernel.h"

#define NMAX (1 << 22)

static struct {
	uint32_t slot[NMAX];
} d;

static inline uint32_t key_of(uint32_t i)
{
	return (i + 1) * 0x9E3779B1u; /* odd multiplier: a bijection, never 0 (the empty slot) */
}

static inline uint32_t home(uint32_t key, int bits)
{
	return bits ? (key * 0x85EBCA6Bu) >> (32 - bits) : 0;
}

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), s = kernel_arg(argc, argv, 2, 65536, 1 << 28),
	    r = kernel_arg(argc, argv, 3, 1, 1 << 24);
	if (n & (n - 1)) {
		fprintf(stderr, "argument 1: expected a power of two\n");
		return 2;
	}
	int bits = __builtin_ctz((unsigned)n);
	uint32_t mask = (uint32_t)n - 1;
	kernel_report("hash", n, &d, &d + 1);
	for (uint32_t i = 0; i < (uint32_t)n / 2; i++) {
		uint32_t k = key_of(i), h = home(k, bits);
		while (d.slot[h])
			h = (h + 1) & mask;
		d.slot[h] = k;
	}
	uint32_t x = 12345, found = 0;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int q = 0; q < s; q++) {
			x = x * 1103515245u + 12345u;
			uint32_t k = key_of((x >> 8) & mask), h = home(k, bits), v;
			while ((v = d.slot[h]) != 0 && v != k)
				h = (h + 1) & mask;
			found += v == k;
		}
	}
	kernel_mark();
	printf("hash: found %u\n", found);
	return 0;
}
