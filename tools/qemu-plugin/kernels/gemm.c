/* Dense matrix multiply C = alpha*A*B + beta*C (n x n doubles, i-j-k order
 * with a scalar accumulator), r times. Usage: gemm [N [R]]. Accesses to the
 * matrices: stores 3n^2 (init) + rn^2, loads r(2n^3 + n^2) + n^2 (checksum). */
#include "kernel.h"

#define NMAX 256

static struct {
	double A[NMAX][NMAX], B[NMAX][NMAX], C[NMAX][NMAX];
} d;

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 32, NMAX), r = kernel_arg(argc, argv, 2, 1, 1 << 24);
	kernel_report("gemm", n, &d, &d + 1);
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++) {
			d.A[i][j] = (double)((i * j + 1) % n) / n;
			d.B[i][j] = (double)((i * (j + 1) + 2) % n) / n;
			d.C[i][j] = (double)((i * (j + 2) + 3) % n) / n;
		}
	const double alpha = 1.5, beta = 1.2;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int i = 0; i < n; i++)
			for (int j = 0; j < n; j++) {
				double acc = 0;
				for (int k = 0; k < n; k++)
					acc += d.A[i][k] * d.B[k][j];
				d.C[i][j] = alpha * acc + beta * d.C[i][j];
			}
	}
	kernel_mark();
	double sum = 0;
	for (int i = 0; i < n; i++)
		for (int j = 0; j < n; j++)
			sum += d.C[i][j];
	printf("gemm: sum %.3f\n", sum);
	return 0;
}
