/* LU decomposition in place without pivoting (PolyBench lu, with a scalar
 * accumulator), n x n doubles, r times, each from a copy of the same matrix
 * (initialised once). Usage: lu [N [R]]. Accesses to the matrices: stores
 * n^2 (init) + r(n^2 (copy) + n^2); loads r(n^2 (copy) + sum_i [sum_{j<i}
 * (2j + 2) + (n - i)(2i + 1)]) + n^2 (checksum). */
#include "kernel.h"

#define NMAX 256

static struct {
	double A[NMAX][NMAX], B[NMAX][NMAX];
} d;

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 32, NMAX), r = kernel_arg(argc, argv, 2, 1, 1 << 24);
	kernel_report("lu", n, &d, &d + 1);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			d.B[i][j] = i == j ? (double)n : (double)((i + j) % 7) / 7.0;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++)
				d.A[i][j] = d.B[i][j];
		for (int i = 0; i < n; i++) {
			for (int j = 0; j < i; j++) {
				double w = d.A[i][j];
				for (int k = 0; k < j; k++)
					w -= d.A[i][k] * d.A[k][j];
				d.A[i][j] = w / d.A[j][j];
			}
			for (int j = i; j < n; j++) {
				double w = d.A[i][j];
				for (int k = 0; k < i; k++)
					w -= d.A[i][k] * d.A[k][j];
				d.A[i][j] = w;
			}
		}
	}
	kernel_mark();
	double sum = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			sum += d.A[i][j];
	printf("lu: sum %.3f\n", sum);
	return 0;
}
