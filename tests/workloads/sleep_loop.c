/* Tracer test workload: a thread that is nearly always blocked in a system call.
 * Naps of MS milliseconds (nanosleep) until SECONDS have passed, then prints how
 * many naps it took and exits 0. A trace window that single-steps into the nap
 * ends at its time limit with the step outstanding (agent/trace/window.c,
 * detach_clean). Usage: sleep_loop [SECONDS] [MS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_clock.h"

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 1.0;
	long ms = argc > 2 ? atol(argv[2]) : 20;
	struct timespec nap = {ms / 1000, (ms % 1000) * 1000000L};
	unsigned long naps = 0;
	double end = wl_seconds(CLOCK_MONOTONIC) + secs;
	while (wl_seconds(CLOCK_MONOTONIC) < end) {
		nanosleep(&nap, NULL);
		naps++;
	}
	printf("sleep_loop: %s naps done\n", naps > 0 ? "all" : "no");
	return 0;
}
