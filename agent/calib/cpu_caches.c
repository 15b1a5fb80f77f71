/* The CPU's data caches as the kernel reports them
 * (/sys/devices/system/cpu/cpu0/cache/index*), added to the mem_slots
 * benchmark's record: the eDAG cache model of the latency-sensitivity report
 * when no machine model gives one. Reported, not measured. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "calib_bench.h"
#include "log.h"

static int read_text(const char *dir, const char *name, char *buf, size_t len)
{
	char path[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char *ok = fgets(buf, (int)len, f);
	fclose(f);
	if (!ok)
		return -1;
	buf[strcspn(buf, "\n")] = '\0';
	return 0;
}

/* "48K", "2048K", "8M" -> bytes; 0 if unreadable. */
static double size_bytes(const char *s)
{
	char *end;
	double v = strtod(s, &end);
	if (end == s || !(v > 0))
		return 0;
	if (*end == 'K')
		v *= 1024;
	else if (*end == 'M')
		v *= 1024 * 1024;
	return v;
}

int cpu_caches_params(struct calib_result *r)
{
	static const char method[] = "reported by the kernel (/sys/devices/system/cpu/cpu0/cache), not measured";
	double last_line = 0;
	int added = 0;
	for (int i = 0; i < 8; i++) {
		char dir[96], level[16], type[32], size[32], ways[16], line[16];
		snprintf(dir, sizeof(dir), "/sys/devices/system/cpu/cpu0/cache/index%d", i);
		if (read_text(dir, "level", level, sizeof(level)) < 0)
			break;
		if (read_text(dir, "type", type, sizeof(type)) < 0 || strcmp(type, "Instruction") == 0 ||
		    read_text(dir, "size", size, sizeof(size)) < 0 ||
		    read_text(dir, "ways_of_associativity", ways, sizeof(ways)) < 0 ||
		    read_text(dir, "coherency_line_size", line, sizeof(line)) < 0)
			continue;
		int lv = atoi(level);
		double b = size_bytes(size), w = atof(ways), l = atof(line);
		if (lv < 1 || lv > 3 || !(b > 0) || !(w > 0) || !(l > 0))
			continue;
		char name[48];
		snprintf(name, sizeof(name), "cpu_cache_l%d_bytes", lv);
		cr_param(r, name, b, "bytes", method, 0, 1);
		snprintf(name, sizeof(name), "cpu_cache_l%d_ways", lv);
		cr_param(r, name, w, "ways", method, 0, 1);
		snprintf(name, sizeof(name), "cpu_cache_l%d_line_bytes", lv);
		cr_param(r, name, l, "bytes", method, 0, 1);
		last_line = l;
		added++;
	}
	if (last_line > 0)
		cr_param(r, "cpu_line_bytes", last_line, "bytes", method, 0, 1);
	else
		log_info("calibrate: no CPU caches reported (/sys/devices/system/cpu/cpu0/cache: ARM has "
			 "it from Linux 3.19): give collector edag a --cache or a machine model");
	return added;
}
