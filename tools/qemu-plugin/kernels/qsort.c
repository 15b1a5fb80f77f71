/* Quicksort (recursive, Hoare partition around the middle element) of n
 * int32_t, refilled from a fixed LCG at the start of every repetition (each
 * repetition sorts the same sequence). Depth grows as elements pass through
 * the levels of recursion and as saved registers pass through the stack: a
 * short window of it overstates that growth (issue 36). Usage: qsort [N [R]]. */
#include <stdint.h>

#include "kernel.h"

#define NMAX (1 << 22)

static struct {
	int32_t v[NMAX];
} d;

__attribute__((noinline)) static void quicksort(int32_t *v, int lo, int hi)
{
	if (lo >= hi)
		return;
	int32_t p = v[lo + (hi - lo) / 2];
	int i = lo, j = hi;
	while (i <= j) {
		while (v[i] < p)
			i++;
		while (v[j] > p)
			j--;
		if (i <= j) {
			int32_t t = v[i];
			v[i] = v[j];
			v[j] = t;
			i++;
			j--;
		}
	}
	quicksort(v, lo, j);
	quicksort(v, i, hi);
}

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), r = kernel_arg(argc, argv, 2, 1, 1 << 24);
	kernel_report("qsort", n, &d, &d + 1);
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		uint32_t x = 12345;
		for (int i = 0; i < n; i++) {
			x = x * 1103515245u + 12345u;
			d.v[i] = (int32_t)(x >> 1);
		}
		quicksort(d.v, 0, n - 1);
	}
	kernel_mark();
	int sorted = 1;
	for (int i = 1; i < n; i++)
		sorted &= d.v[i - 1] <= d.v[i];
	printf("qsort: %s\n", sorted ? "sorted" : "NOT SORTED");
	return !sorted;
}
