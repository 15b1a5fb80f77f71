/* Program and thread names for reports (program_name.h). */
#include "program_name.h"

#include <stdio.h>
#include <string.h>

void program_of_target(const char *target, char *out, size_t len)
{
	out[0] = '\0';
	const char *p = NULL;
	if (!target)
		return;
	if (strncmp(target, "cmd ", 4) == 0) /* agents before #41 */
		p = target + 4;
	else if (strstr(target, " trace by ") && strstr(target, ": "))
		p = strstr(target, ": ") + 2;
	else if (strncmp(target, "pid ", 4) != 0 && strcmp(target, "system-wide") != 0)
		p = target; /* agent run names a command as perf does: "app args" */
	for (int word = 0; p && *p && word < 2; word++) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		const char *base = p;
		for (const char *q = p; q < p + n; q++)
			if (*q == '/')
				base = q + 1;
		snprintf(out, len, "%.*s", (int)(p + n - base), base);
		if (strncmp(out, "qemu-", 5) != 0)
			return; /* qemu-ARCH runs the program named next */
		p += n;
	}
}

void thread_label(const char *prog, int pid, int tid, char *out, size_t len)
{
	if (prog && prog[0] && pid <= 0 && tid <= 0)
		snprintf(out, len, "%s (whole run)", prog);
	else if (prog && prog[0])
		snprintf(out, len, "%s tid %d", prog, tid);
	else
		snprintf(out, len, "pid %d tid %d", pid, tid);
}
