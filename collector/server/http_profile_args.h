/* The /profile page's query string (http_pages.h): since= and until= (the
 * range shown), agent= (comma-separated or repeated: only those agents), and
 * a_since= a_until= b_since= b_until= (two ranges compared as a diff),
 * offcpu=1 (the sessions' on/off-CPU times as a wall-clock flame), sens=1
 * (latency sensitivity per function of the range's trace windows). Times
 * are what --since/--until take (query_parse_time: unix seconds, ISO-8601,
 * a duration back from now, "now"); empty values count as absent. Pure: no
 * store, no I/O. */
#ifndef COLLECTOR_HTTP_PROFILE_ARGS_H
#define COLLECTOR_HTTP_PROFILE_ARGS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "query/query.h"

#define PROFILE_ARG_MAX 128

struct profile_args {
	int64_t since_ns, until_ns;  /* the range shown: default the last HTTP_PROFILE_WINDOW_S s */
	int64_t a_ns[2], b_ns[2];     /* the ranges compared, when compare */
	bool compare;		      /* all four of a_since .. b_until given */
	bool given;		      /* any parameter given (the page then does not reload itself) */
	bool offcpu;		      /* offcpu=1: also the wall-clock (on/off-CPU) flame of the range's sessions */
	bool sens;		      /* sens=1: also latency sensitivity per function of the range's windows */
	/* the values as given (decoded), to fill the form again */
	char since[PROFILE_ARG_MAX], until[PROFILE_ARG_MAX], agent[PROFILE_ARG_MAX];
	char a_since[PROFILE_ARG_MAX], a_until[PROFILE_ARG_MAX], b_since[PROFILE_ARG_MAX], b_until[PROFILE_ARG_MAX];
	char err[256]; /* the first bad value's message ("" none); the page shows it and the default range */
};

/* Parse query (the %-encoded string after '?', may be NULL) at now_ns (unix
 * ns); agent= values go into qo's filter (query_opt). window_s: the default
 * range's length. Never fails: bad values leave a message in a->err. */
void profile_args_parse(const char *query, int64_t now_ns, unsigned window_s, struct profile_args *a,
			struct query_opts *qo);
/* %-decode src (and '+' as space) into dst of len bytes; -EINVAL if it does not fit or is malformed. */
int profile_url_decode(const char *src, size_t n, char *dst, size_t len);

#endif
