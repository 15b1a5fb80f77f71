/* Process churn for the long-recording tests: starts up to N short-lived
 * processes, one after another (P at a time), each this program exec'd
 * again, spinning CPU_MS of CPU time in churn_work() then exiting; stops
 * after N or WALL_S seconds of wall time, whichever comes first (with MIN_S:
 * goes on past N until MIN_S seconds have passed), and prints how many it
 * started. Usage: churn N P CPU_MS WALL_S [MIN_S] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "wl_clock.h"

__attribute__((noinline)) static void churn_work(double cpu_s)
{
	volatile unsigned long x = 0;
	double end = wl_seconds(CLOCK_PROCESS_CPUTIME_ID) + cpu_s;
	while (wl_seconds(CLOCK_PROCESS_CPUTIME_ID) < end)
		for (int i = 0; i < 20000; i++)
			x += (unsigned long)i * 2654435761u;
}

int main(int argc, char **argv)
{
	if (argc == 3 && strcmp(argv[1], "child") == 0) {
		churn_work(atof(argv[2]) / 1000.0);
		return 0;
	}
	if (argc != 5 && argc != 6) {
		fprintf(stderr, "usage: churn N P CPU_MS WALL_S [MIN_S]\n");
		return 2;
	}
	long n = atol(argv[1]), par = atol(argv[2]);
	double t0 = wl_seconds(CLOCK_MONOTONIC);
	double wall_end = t0 + atof(argv[4]), min_end = t0 + (argc == 6 ? atof(argv[5]) : 0);
	if (par < 1)
		par = 1;
	char self[4096]; /* exec'd by its path: the children's comm is "churn", as the kernel names them */
	ssize_t sl = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (sl <= 0)
		return 2;
	self[sl] = 0;
	long started = 0, running = 0, failed = 0;
	for (double now = t0; (started < n || now < min_end) && now < wall_end; now = wl_seconds(CLOCK_MONOTONIC)) {
		if (running >= par) {
			int st;
			if (wait(&st) > 0) {
				running--;
				failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
			}
			continue;
		}
		pid_t p = fork();
		if (p == 0) {
			execl(self, "churn", "child", argv[3], (char *)NULL);
			_exit(127);
		}
		if (p < 0)
			break;
		started++;
		running++;
	}
	int st;
	while (running > 0 && wait(&st) > 0) {
		running--;
		failed += !WIFEXITED(st) || WEXITSTATUS(st) != 0;
	}
	printf("churn: %ld processes in %.2f s, %ld failed\n", started, wl_seconds(CLOCK_MONOTONIC) - t0, failed);
	return failed ? 1 : 0;
}
