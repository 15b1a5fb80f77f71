/* Runs ../shared/tools/gpgpusim-init/gsim_v{3,4} (tests/lib/gsim.h). */
#include "gsim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int gsim_tool(int version, char *path, size_t len)
{
	const char *dir = getenv("PROF_GSIM_DIR");
	const char *src = getenv("PROF_SRC_DIR");
	char d[900];
	if (dir && *dir)
		snprintf(d, sizeof(d), "%s", dir);
	else
		snprintf(d, sizeof(d), "%s/../shared/tools/gpgpusim-init", src && *src ? src : ".");
	snprintf(path, len, "%s/gsim_v%d", d, version);
	if (access(path, X_OK) == 0) {
		char *abs = realpath(path, NULL);
		if (abs) {
			snprintf(path, len, "%s", abs);
			free(abs);
		}
		return 0;
	}
	char tried[1000];
	snprintf(tried, sizeof(tried), "%s", path);
	snprintf(path, len,
		 "GPGPU-sim's init harness %s is absent (../shared/tools/gpgpusim-init beside the project root,"
		 " or PROF_GSIM_DIR): GPGPU-sim itself cannot check the config here",
		 tried);
	return -1;
}

int gsim_run(int version, const char *dir, const char *cfg_name, char *out, size_t outlen, char *why,
	     size_t whylen)
{
	char tool[1200];
	if (gsim_tool(version, tool, sizeof(tool)) < 0) {
		snprintf(why, whylen, "%s", tool);
		return -1;
	}
	char cmd[2600];
	/* the tool runs every step in a child; bounded in time all the same */
	snprintf(cmd, sizeof(cmd), "cd '%s' && timeout 120 '%s' '%s' 2>&1", dir, tool, cfg_name);
	FILE *p = popen(cmd, "r");
	if (!p) {
		snprintf(why, whylen, "cannot run %s", tool);
		return -1;
	}
	int failed = 0, parsed = 0;
	size_t used = 0;
	char line[4096];
	if (out && outlen)
		out[0] = 0;
	while (fgets(line, sizeof(line), p)) {
		if (strstr(line, "FAILED"))
			failed++;
		if (strstr(line, "[option_parser_cmdline(") && strstr(line, "-> ok"))
			parsed = 1;
		if (out && used + 1 < outlen) {
			snprintf(out + used, outlen - used, "%s", line);
			used += strlen(out + used);
		}
	}
	int st = pclose(p);
	int rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128;
	if (rc == 126 || rc == 127) {
		snprintf(why, whylen, "%s could not be executed (exit %d)", tool, rc);
		return -1;
	}
	snprintf(why, whylen, "%s: %d FAILED steps, option parser %s, exit %d", tool, failed,
		 parsed ? "accepted the file" : "did NOT accept the file (unknown option or bad value)", rc);
	return failed + (!parsed || rc != 0);
}
