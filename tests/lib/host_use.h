/* What else used the host's CPUs while a test measured something (issue 43): the CPU time of every
 * process (/proc/stat: user nice system irq softirq) less the test's own and its reaped children's
 * (getrusage), in CPUs over the wall time; the share a VM's host stole; the load average. A test
 * whose figure needs a quiet machine fails only on a quiet one and skips with these figures on a
 * busy one. */
#ifndef TESTS_LIB_HOST_USE_H
#define TESTS_LIB_HOST_USE_H

#include <stdbool.h>
#include <stddef.h>

#define HOST_QUIET_OTHERS 0.25 /* CPUs */
#define HOST_QUIET_STEAL 0.05

struct host_use {
	double wall, self0, load_begin;
	unsigned long long busy0, steal0, total0;
	double others, steal, load_end; /* at host_use_end */
	bool quiet, known;
};

void host_use_begin(struct host_use *u);
/* Ends the measurement; a host whose use could not be read counts as busy. */
void host_use_end(struct host_use *u);
/* One line: "%.2f s; other processes used N CPUs, steal S%, load average A -> B on C CPUs: quiet|BUSY" */
void host_use_format(const struct host_use *u, char *buf, size_t len);

#endif
