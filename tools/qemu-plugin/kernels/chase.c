/* Pointer chase: a random cyclic permutation of n indices (Sattolo's shuffle)
 * followed s times, each load's index coming from the previous load, r times
 * (the chase goes on from where it was). Usage: chase [N [S [R]]]. Accesses to
 * the array: stores n (init) + 2(n-1) (shuffle), loads 2(n-1) (shuffle) + rs
 * (chase). */
#include <stdint.h>

#include "kernel.h"
#include "sattolo.h"

#define NMAX (1 << 22)

static struct {
	uint32_t next[NMAX];
} d;

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), s = kernel_arg(argc, argv, 2, 65536, 1 << 28),
	    r = kernel_arg(argc, argv, 3, 1, 1 << 24);
	kernel_report("chase", n, &d, &d + 1);
	sattolo_cycle(d.next, n);
	uint32_t p = 0;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int k = 0; k < s; k++)
			p = d.next[p];
	}
	kernel_mark();
	printf("chase: end %u\n", p);
	return 0;
}
