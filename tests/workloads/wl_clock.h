/* The workloads' one clock reading: seconds of clock id as a double. */
#ifndef TESTS_WORKLOADS_WL_CLOCK_H
#define TESTS_WORKLOADS_WL_CLOCK_H

#include <time.h>

static inline double wl_seconds(clockid_t id)
{
	struct timespec ts;
	if (clock_gettime(id, &ts) != 0)
		return -1.0; /* not a reading (seen under the Linux 3.4 personality, armhf: garbage) */
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

#endif
