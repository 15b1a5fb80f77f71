/* The DRAM peak the platform states, for the physical bandwidth bound
 * (common/calib/calib_phys.h): every SMBIOS Memory Device (type 17) the
 * kernel exposes in /sys/firmware/dmi/entries/17-N/raw (root only; absent on
 * most ARM boards and many VMs: then there is no bound). */
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "calib_bench.h"

void phys_mem_probe(struct calib_phys_cpu *out)
{
	DIR *d = opendir("/sys/firmware/dmi/entries");
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (strncmp(e->d_name, "17-", 3) != 0)
			continue;
		char path[300];
		unsigned char raw[256];
		snprintf(path, sizeof(path), "/sys/firmware/dmi/entries/%s/raw", e->d_name);
		FILE *f = fopen(path, "rb");
		if (!f)
			continue;
		size_t n = fread(raw, 1, sizeof(raw), f);
		fclose(f);
		double mbps = calib_phys_smbios17_mbps(raw, n);
		if (mbps > 0) {
			out->mem_mbps += mbps;
			out->mem_devices++;
		}
	}
	if (d)
		closedir(d);
}
