/* What else used the host's CPUs meanwhile (host_use.h). */
#include "host_use.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

static double mono_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static double load1(void)
{
	double l = -1;
	return getloadavg(&l, 1) == 1 ? l : -1;
}

/* This process's CPU time and its reaped children's. */
static double self_cpu_s(void)
{
	double s = 0;
	for (int i = 0; i < 2; i++) {
		struct rusage ru;
		getrusage(i ? RUSAGE_CHILDREN : RUSAGE_SELF, &ru);
		s += (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
		     (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
	}
	return s;
}

/* The aggregate "cpu" line of /proc/stat (proc(5)): busy, steal and total jiffies. */
static bool proc_stat(unsigned long long *busy, unsigned long long *steal, unsigned long long *total)
{
	unsigned long long v[8] = {0};
	FILE *f = fopen("/proc/stat", "r");
	int n = f ? fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
			   &v[4], &v[5], &v[6], &v[7])
		  : 0;
	if (f)
		fclose(f);
	if (n < 8)
		return false;
	*busy = v[0] + v[1] + v[2] + v[5] + v[6];
	*steal = v[7];
	*total = v[0] + v[1] + v[2] + v[3] + v[4] + v[5] + v[6] + v[7];
	return true;
}

void host_use_begin(struct host_use *u)
{
	memset(u, 0, sizeof(*u));
	u->load_begin = load1();
	u->known = proc_stat(&u->busy0, &u->steal0, &u->total0);
	u->self0 = self_cpu_s();
	u->wall = mono_s();
}

void host_use_end(struct host_use *u)
{
	u->wall = mono_s() - u->wall;
	double self = self_cpu_s() - u->self0;
	unsigned long long busy, steal, total;
	u->known = u->known && proc_stat(&busy, &steal, &total) && u->wall > 0;
	if (u->known) {
		double hz = (double)sysconf(_SC_CLK_TCK);
		u->others = fmax(0, ((double)(busy - u->busy0) / hz - self) / u->wall);
		u->steal = total > u->total0 ? (double)(steal - u->steal0) / (double)(total - u->total0) : 0;
	}
	u->load_end = load1();
	u->quiet = u->known && u->others < HOST_QUIET_OTHERS && u->steal < HOST_QUIET_STEAL;
}

void host_use_format(const struct host_use *u, char *buf, size_t len)
{
	if (u->known)
		snprintf(buf, len,
			 "%.2f s; other processes used %.2f CPUs, steal %.1f%%, load average %.2f -> %.2f on "
			 "%ld CPUs: %s",
			 u->wall, u->others, u->steal * 100, u->load_begin, u->load_end,
			 sysconf(_SC_NPROCESSORS_ONLN), u->quiet ? "quiet" : "BUSY");
	else
		snprintf(buf, len,
			 "%.2f s; /proc/stat unreadable: the host's load is unknown (counted as busy)",
			 u->wall);
}
