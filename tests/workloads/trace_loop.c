/* Tracer test workload: prints its array's address (and its SIGUSR1 handler's),
 * then sums the array with one 8-byte load per element (volatile: no
 * vectorisation) until SECONDS have passed, prints how many SIGUSR1 it
 * handled, and exits with EXIT. Usage: trace_loop [SECONDS] [EXIT] [PASSES]: the clock is
 * read after every PASSES passes over the array (default 1: every ~20,000 instructions).
 * A negative SECONDS is -SECONDS of the program's own CPU time (CLOCK_PROCESS_CPUTIME_ID,
 * as busy's -S): bounded work, so a loaded machine cannot end it before a tracer that
 * waits for its CPU time attaches (issue 43: at load 8 under nice 10 a 3 s run ended
 * before it had 100 ms of CPU, and ptrace(SEIZE) of the zombie said EPERM). */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "wl_clock.h"

#define N 4096

static uint64_t array[N];
static volatile sig_atomic_t signals;

static void on_usr1(int sig)
{
	(void)sig;
	signals++;
}

int main(int argc, char **argv)
{
	double secs = argc > 1 ? atof(argv[1]) : 3.0;
	int code = argc > 2 ? atoi(argv[2]) : 0;
	int passes = argc > 3 ? atoi(argv[3]) : 1;
	if (passes < 1)
		passes = 1;
	for (int i = 0; i < N; i++)
		array[i] = (uint64_t)i;
	struct sigaction sa = {.sa_handler = on_usr1};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	printf("array %p %d handler %p\n", (void *)array, N, (void *)on_usr1);
	fflush(stdout);
	volatile uint64_t *p = array;
	uint64_t sum = 0, rounds = 0;
	clockid_t clk = secs < 0 ? CLOCK_PROCESS_CPUTIME_ID : CLOCK_MONOTONIC;
	double end = wl_seconds(clk) + (secs < 0 ? -secs : secs);
	/* with PASSES 64 the clock is read every ~1.3 M instructions: a traced window of a few
	 * thousand instructions then seldom holds a vDSO clock read, whose seqlock retry depends
	 * on timer ticks and so differs between a replayed and a (slow) single-stepped run */
	while (wl_seconds(clk) < end) {
		for (int r = 0; r < passes; r++) {
			for (int i = 0; i < N; i++)
				sum += p[i];
			rounds++;
		}
	}
	printf("trace_loop: %llu rounds, sum %llu, signals %d\n", (unsigned long long)rounds, (unsigned long long)sum,
	       (int)signals);
	return code;
}
