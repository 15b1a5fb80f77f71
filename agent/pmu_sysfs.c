#include "pmu_sysfs.h"

#include <dirent.h>
#include <errno.h>
#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pmu_sysfs_arm_number(const struct event_desc *ev, unsigned *num)
{
	if (ev->type == PERF_TYPE_RAW) {
		*num = (unsigned)(ev->config & 0xffff);
		return 0;
	}
	if (ev->type != PERF_TYPE_HARDWARE)
		return -ENOENT;
	switch (ev->config) {
	case PERF_COUNT_HW_INSTRUCTIONS: *num = 0x08; return 0;
	case PERF_COUNT_HW_CACHE_REFERENCES: *num = 0x04; return 0;
	case PERF_COUNT_HW_CACHE_MISSES: *num = 0x03; return 0;
	case PERF_COUNT_HW_BRANCH_MISSES: *num = 0x10; return 0;
	case PERF_COUNT_HW_BUS_CYCLES: *num = 0x1d; return 0;
	default: return -ENOENT; /* cycles: the cycle counter; the rest differ per kernel version */
	}
}

/* "event=0x08" (maybe followed by ",..." terms) -> 8 */
static int read_event_file(const char *path, unsigned *num)
{
	FILE *f = fopen(path, "re");
	if (!f)
		return -errno;
	char buf[128];
	int rc = -EINVAL;
	if (fgets(buf, sizeof(buf), f)) {
		char *p = strstr(buf, "event=");
		if (p) {
			char *end;
			unsigned long v = strtoul(p + 6, &end, 0);
			if (end != p + 6 && v <= 0xffff) {
				*num = (unsigned)v;
				rc = 0;
			}
		}
	}
	fclose(f);
	return rc;
}

/* One PMU directory: -ENOENT if not an ARM PMU with events, 1 if it lists num, 0 if not. */
static int pmu_lists(const char *dir, unsigned num)
{
	char path[1024];
	snprintf(path, sizeof(path), "%s/events/cpu_cycles", dir);
	unsigned dummy;
	if (read_event_file(path, &dummy) < 0)
		return -ENOENT;
	snprintf(path, sizeof(path), "%s/events", dir);
	DIR *d = opendir(path);
	if (!d)
		return -ENOENT;
	int found = 0;
	struct dirent *de;
	while (!found && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char f[1400];
		unsigned v;
		snprintf(f, sizeof(f), "%s/%s", path, de->d_name);
		if (read_event_file(f, &v) == 0 && v == num)
			found = 1;
	}
	closedir(d);
	return found;
}

int pmu_sysfs_advertised(const char *root, const struct event_desc *ev, char *why, size_t whylen)
{
	if (whylen)
		why[0] = 0;
	unsigned num;
	if (pmu_sysfs_arm_number(ev, &num) < 0)
		return 1;
	/* The kernel lists common events only (PMCEID0/1: 0x00-0x3f, 0x4000-0x403f); an
	 * IMPLEMENTATION DEFINED number (0x40 and up) is never listed: nothing to check. */
	if (num >= 0x40 && !(num >= 0x4000 && num < 0x4040))
		return 1;
	DIR *d = opendir(root);
	if (!d)
		return 1; /* no sysfs (old kernel, container): the zero-count warning still applies */
	bool any = false;
	int rc = 0;
	char names[128] = "";
	struct dirent *de;
	while (rc == 0 && (de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		char dir[512];
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		int r = pmu_lists(dir, num);
		if (r < 0)
			continue;
		any = true;
		if (r == 1)
			rc = 1;
		else if (strlen(names) + strlen(de->d_name) + 3 < sizeof(names))
			snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", names[0] ? ", " : "",
				 de->d_name);
	}
	closedir(d);
	if (!any || rc == 1)
		return 1;
	snprintf(why, whylen,
		 "this CPU does not count it: event 0x%x is not among the events the PMU advertises (%s/{%s}/events/; "
		 "on arm64 from the core's PMCEID registers)",
		 num, root, names);
	return 0;
}
