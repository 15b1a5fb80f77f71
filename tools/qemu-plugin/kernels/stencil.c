/* 2-D five-point stencil (Jacobi): b[i][j] = 0.2 (a[i][j] + its four
 * neighbours) over the interior of an n x n grid of doubles, a and b swapping
 * roles each repetition (even: a to b, odd: b to a). Row-order streams through
 * two grids (2 x 8n^2 bytes), three rows of the source live at a time. Usage:
 * stencil [N [R]] (a grid under 3 x 3 has no interior). */
#include "kernel.h"

#define NMAX 1024

static struct {
	double a[NMAX][NMAX], b[NMAX][NMAX];
} d;

static void sweep(double (*dst)[NMAX], double (*src)[NMAX], int n)
{
	for (int i = 1; i < n - 1; i++)
		for (int j = 1; j < n - 1; j++)
			dst[i][j] = 0.2 * (src[i][j] + src[i - 1][j] + src[i + 1][j] + src[i][j - 1] + src[i][j + 1]);
}

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 64, NMAX), r = kernel_arg(argc, argv, 2, 1, 1 << 24);
	kernel_report("stencil", n, &d, &d + 1);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			d.a[i][j] = d.b[i][j] = (double)((i * 7 + j * 3) % 11);
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		if (rep & 1)
			sweep(d.a, d.b, n);
		else
			sweep(d.b, d.a, n);
	}
	kernel_mark();
	double sum = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			sum += d.a[i][j] + d.b[i][j];
	printf("stencil: sum %.3f\n", sum);
	return 0;
}
