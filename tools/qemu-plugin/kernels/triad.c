/* STREAM triad a[i] = b[i] + s*c[i] over n doubles, r times.
 * Usage: triad [N [R]]. Accesses to the arrays: stores 2n (init) + nr,
 * loads 2nr + n (checksum). */
#include "kernel.h"

#define NMAX (1 << 20)

static struct {
	double a[NMAX], b[NMAX], c[NMAX];
} d;

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), r = kernel_arg(argc, argv, 2, 4, 1 << 20);
	kernel_report("triad", n, &d, &d + 1);
	for (int i = 0; i < n; i++) {
		d.b[i] = i;
		d.c[i] = 2.0 * i;
	}
	const double s = 3.0;
	for (int k = 0; k < r; k++) {
		kernel_mark();
		for (int i = 0; i < n; i++)
			d.a[i] = d.b[i] + s * d.c[i];
	}
	kernel_mark();
	double sum = 0;
	for (int i = 0; i < n; i++)
		sum += d.a[i];
	printf("triad: sum %.1f\n", sum);
	return 0;
}
