#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cli.h"
#include "log.h"

int cli_open_store(const char *path, unsigned check, struct store **out)
{
	if (!path) {
		log_error("no store given: pass --store PATH (the file the collector writes)");
		return -EINVAL;
	}
	return store_open(path, STORE_READ_ONLY | check, out);
}

int cli_check_arg(const char *cmd, const char *arg, unsigned *check)
{
	if (store_check_flags(arg, check) == 0)
		return 0;
	fprintf(stderr, "collector %s: --check wants auto, full, quick or off, not '%s'\n", cmd, arg);
	return 2;
}

long long cli_session_id(const char *s)
{
	char *end = NULL;
	errno = 0;
	/* digits only; out of range (strtoll clamps 2^63 to INT64_MAX with ERANGE) is no id */
	long long id = s && isdigit((unsigned char)*s) ? strtoll(s, &end, 10) : 0;
	return id > 0 && errno == 0 && *end == 0 ? id : 0;
}

const char *cli_time(char *buf, size_t len, int64_t unix_s)
{
	struct tm tm;
	time_t t = (time_t)unix_s;
	if (unix_s <= 0 || !gmtime_r(&t, &tm) || strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
		snprintf(buf, len, "-");
	return buf;
}
