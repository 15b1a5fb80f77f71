#include "log.h"

#include <stdarg.h>
#include <stdio.h>
#include <time.h>

static const char *log_prog = "prof";
static enum log_level log_level_now = LOG_LEVEL_INFO;

void log_init(const char *progname, enum log_level level)
{
	log_prog = progname;
	log_level_now = level;
}

void log_set_level(enum log_level level)
{
	log_level_now = level;
}

enum log_level log_get_level(void)
{
	return log_level_now;
}

void log_msg(enum log_level level, const char *fmt, ...)
{
	static const char *names[] = {"error", "warning", "info", "debug"};
	if (level > log_level_now)
		return;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	struct tm tm;
	gmtime_r(&ts.tv_sec, &tm);
	char line[2048];
	int n = snprintf(line, sizeof(line), "%02d:%02d:%02d.%03ld %s: %s: ", tm.tm_hour, tm.tm_min, tm.tm_sec,
			 ts.tv_nsec / 1000000, log_prog, names[level]);
	va_list ap;
	va_start(ap, fmt);
	if (n > 0 && (size_t)n < sizeof(line))
		vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
	va_end(ap);
	fprintf(stderr, "%s\n", line);
}
