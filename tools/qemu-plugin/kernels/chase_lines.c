/* Pointer chase with one node a 64-byte line: n lines (a power of two) in one
 * cycle, line i's successor (a * i + c) mod n (a full-period LCG, as
 * tests/workloads/chase.c), followed s times, each load's line from the
 * previous load, r times (the chase goes on from where it was). Usage:
 * chase_lines [N [S [R]]]; N = 4194304 lines spans 256 MiB, the chase
 * over >= 256 MiB (issue 36). Its set-up (lines_link) is one store a line,
 * 16 M instructions for 256 MiB, where chase.c's Sattolo shuffle of every word
 * of 256 MiB is ~770 M: the full trace under qemu-x86_64 reaches the chase
 * quickly (test_trace_accuracy). In the cache model every step is a new line. */
#include <stdint.h>

#include "kernel.h"

#define LINE_WORDS 16
#define NMAX (1 << 22)

static struct {
	uint32_t w[(uint64_t)NMAX * LINE_WORDS];
} d;

/* The set-up, apart from the chase (a window that ran any of it is not the steady state) */
__attribute__((noinline)) static void lines_link(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		d.w[i * LINE_WORDS] = (uint32_t)((6364136223846793005ull * i + 1442695040888963407ull) & (n - 1)) * LINE_WORDS;
}

int main(int argc, char **argv)
{
	int n = kernel_arg(argc, argv, 1, 4096, NMAX), s = kernel_arg(argc, argv, 2, 65536, 1 << 28),
	    r = kernel_arg(argc, argv, 3, 1, 1 << 24);
	if (n & (n - 1)) {
		fprintf(stderr, "argument 1: expected a power of two\n");
		return 2;
	}
	kernel_report("chase_lines", n, &d, &d.w[(uint64_t)n * LINE_WORDS]);
	lines_link((uint64_t)n);
	uint32_t p = 0;
	for (int rep = 0; rep < r; rep++) {
		kernel_mark();
		for (int k = 0; k < s; k++)
			p = d.w[p];
	}
	kernel_mark();
	printf("chase_lines: end %u\n", p);
	return 0;
}
