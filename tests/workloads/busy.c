/* CPU-bound test workload: T threads spin for S seconds of wall time, then
 * print the process CPU time measured by the process itself, so tests can
 * compare the profiler's task-clock with it, and the work done: "work N", the
 * number of fixed blocks of 100,000 multiply-adds all threads completed (work
 * per CPU second falls when a profiler's interrupts take the workload's CPU
 * time: scripts/bench-sampling.sh). Usage: busy [SECONDS] [THREADS] [EXIT]
 * A negative SECONDS spins until each thread has had -SECONDS of CPU time (at most 60 s of
 * wall time), so tests that need a known amount of CPU time get it on a loaded machine. */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_clock.h"

static double secs;
static atomic_ullong work; /* blocks completed, all threads */

static void *spin(void *arg)
{
	volatile unsigned long x = 0;
	unsigned long long blocks = 0;
	if (secs < 0) {
		double wall_end = wl_seconds(CLOCK_MONOTONIC) + 60;
		while (wl_seconds(CLOCK_THREAD_CPUTIME_ID) < -secs && wl_seconds(CLOCK_MONOTONIC) < wall_end) {
			for (int i = 0; i < 100000; i++)
				x += (unsigned long)i * 2654435761u;
			blocks++;
		}
	} else {
		double end = wl_seconds(CLOCK_MONOTONIC) + secs;
		while (wl_seconds(CLOCK_MONOTONIC) < end) {
			for (int i = 0; i < 100000; i++)
				x += (unsigned long)i * 2654435761u;
			blocks++;
		}
	}
	atomic_fetch_add(&work, blocks);
	return NULL;
}

int main(int argc, char **argv)
{
	secs = argc > 1 ? atof(argv[1]) : 1.0;
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	int code = argc > 3 ? atoi(argv[3]) : 0;
	if (threads < 1 || threads > 64)
		threads = 1;
	double t0 = wl_seconds(CLOCK_MONOTONIC);
	pthread_t tid[64];
	for (int i = 1; i < threads; i++)
		pthread_create(&tid[i], NULL, spin, NULL);
	spin(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tid[i], NULL);
	printf("busy: wall %.6f s cpu %.6f s threads %d work %llu\n", wl_seconds(CLOCK_MONOTONIC) - t0,
	       wl_seconds(CLOCK_PROCESS_CPUTIME_ID), threads, (unsigned long long)atomic_load(&work));
	return code;
}
