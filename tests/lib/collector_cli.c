#include "collector_cli.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include "testproc.h"

char *tp_collector(const char *out, ...)
{
	char bin[512];
	tp_bin("collector", bin, sizeof(bin));
	char *argv[32];
	int n = 0;
	argv[n++] = bin;
	unlink(out); /* tp_spawn appends */
	va_list ap;
	va_start(ap, out);
	const char *a;
	while ((a = va_arg(ap, const char *)) && n < 30)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	pid_t pid = tp_spawn(argv, out);
	int status;
	assert_int_equal(tp_wait(pid, 60000, &status), 0);
	char *text = tp_slurp(out);
	assert_non_null(text);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fail_msg("collector %s failed (0x%x):\n%s", argv[1], status, text);
	return text;
}

long long tp_report_row_field(const char *json, const char *name, const char *field)
{
	char needle[160];
	snprintf(needle, sizeof(needle), "{\"name\":\"%s\"", name);
	const char *row = strstr(json, needle);
	if (!row)
		return -1;
	const char *end = strchr(row, '}');
	snprintf(needle, sizeof(needle), "\"%s\":", field);
	const char *p = strstr(row, needle);
	if (!p || (end && p > end))
		return -1;
	return strtoll(p + strlen(needle), NULL, 10);
}
