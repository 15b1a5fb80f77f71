/* clock_loop N: N million clock_gettime(CLOCK_MONOTONIC) calls, most of its
 * time in the vdso's __vdso_clock_gettime (where the clock source allows it),
 * so that the vdso's functions are sampled (issue 39: [vdso] named). Bounded
 * by work, not time. Prints the last reading so the calls are not elided. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 20;
	struct timespec ts = {0, 0};
	unsigned long long sum = 0;
	for (long i = 0; i < n * 1000000L; i++) {
		clock_gettime(CLOCK_MONOTONIC, &ts);
		sum += (unsigned long long)ts.tv_nsec;
	}
	printf("clock_loop: %ld million calls, %llu\n", n, sum & 0xff);
	return 0;
}
