/* Off-CPU test workload: for SECONDS of wall time, spins PERIOD_MS of CPU time,
 * then sleeps PERIOD_MS, again and again (half its time asleep on an idle
 * machine), then prints the wall and CPU time it measured itself, so tests
 * can compare an off-CPU view with wall - CPU. Usage: halfsleep [SECONDS] [PERIOD_MS] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_clock.h"

__attribute__((noinline)) static void spin_for(double cpu_s)
{
	volatile unsigned long x = 0;
	double end = wl_seconds(CLOCK_THREAD_CPUTIME_ID) + cpu_s;
	while (wl_seconds(CLOCK_THREAD_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x += (unsigned long)i * 2654435761u;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 2.0, period = (argc > 2 ? atof(argv[2]) : 20.0) / 1000.0;
	double t0 = wl_seconds(CLOCK_MONOTONIC), c0 = wl_seconds(CLOCK_PROCESS_CPUTIME_ID);
	struct timespec ts = {.tv_sec = (time_t)period, .tv_nsec = (long)((period - (double)(time_t)period) * 1e9)};
	while (wl_seconds(CLOCK_MONOTONIC) - t0 < secs) {
		spin_for(period);
		nanosleep(&ts, NULL);
	}
	printf("halfsleep: wall %.6f s cpu %.6f s\n", wl_seconds(CLOCK_MONOTONIC) - t0,
	       wl_seconds(CLOCK_PROCESS_CPUTIME_ID) - c0);
	return 0;
}
