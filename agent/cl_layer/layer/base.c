/* The bottom of the capture library: state and helpers every other file of
 * the layer uses, calling nothing above it. The next implementation's
 * dispatch table (filled by entry_layer.c or entry_preload.c), the mode and
 * debug level, the clock, the pid, the debug log, and the drop/sent counters that
 * both the tracker (track.c) and the agent link (send.c) update. */
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "pcl.h"

PCL_HIDDEN cl_icd_dispatch pcl_next;
PCL_HIDDEN int pcl_mode;
PCL_HIDDEN int pcl_debug;

static _Atomic uint64_t n_dropped, n_sent;
static uint64_t start_ns;
static int32_t my_pid; /* getpid() is a system call: once per process, not per command */

uint64_t pcl_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void pcl_log(const char *fmt, ...)
{
	if (!pcl_debug)
		return;
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	fprintf(stderr, "profcl[%d]: %s\n", (int)getpid(), buf);
}

void pcl_base_init(void)
{
	const char *d = getenv(PCL_ENV_DEBUG);
	pcl_debug = d && *d && strcmp(d, "0") != 0 ? atoi(d) > 0 ? atoi(d) : 1 : 0;
	start_ns = pcl_now_ns();
	my_pid = (int32_t)getpid();
}

int32_t pcl_pid(void)
{
	return my_pid ? my_pid : (int32_t)getpid();
}

void pcl_base_after_fork(void)
{
	atomic_store(&n_dropped, 0);
	atomic_store(&n_sent, 0);
	start_ns = pcl_now_ns();
	my_pid = (int32_t)getpid();
}

uint64_t pcl_dropped(void) { return atomic_load(&n_dropped); }
uint64_t pcl_sent(void) { return atomic_load(&n_sent); }
void pcl_count_dropped(uint64_t n) { atomic_fetch_add(&n_dropped, n); }
void pcl_count_sent(uint64_t n) { atomic_fetch_add(&n_sent, n); }
uint64_t pcl_start_ns(void) { return start_ns; }

void pcl_add_id(uint64_t *list, uint32_t *n, uint64_t id)
{
	for (uint32_t i = 0; i < *n; i++)
		if (list[i] == id)
			return;
	if (*n < PCL_MAX_DEPS)
		list[(*n)++] = id;
}
