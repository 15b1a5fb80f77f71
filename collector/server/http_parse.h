/* The HTTP front end's request-head parser (pure: no sockets, fuzzed by
 * tests/fuzz/fuzz_http.c). Only "GET /path HTTP/1.0|1.1" heads are served. */
#ifndef COLLECTOR_HTTP_PARSE_H
#define COLLECTOR_HTTP_PARSE_H

#include <stddef.h>

#define HTTP_MAX_REQUEST 8192u /* the whole request head */
#define HTTP_MAX_PATH 1024u
#define HTTP_MAX_AUTH 512u

struct http_request {
	char method[8];
	char path[HTTP_MAX_PATH]; /* without the query string */
	char query[HTTP_MAX_PATH]; /* the query string after '?', still %-encoded ("" none) */
	/* The Authorization header's value ("" without one; a longer one is cut and can never match). */
	char authorization[HTTP_MAX_AUTH];
};

/* Look at the bytes received so far, buf[0..len) (len <= HTTP_MAX_REQUEST, no
 * terminator needed). Returns 0 when the head is not complete yet (read more),
 * 200 with *req filled for a well-formed GET, or the status to answer with
 * (400 malformed or over HTTP_MAX_REQUEST bytes, 405 not GET) and *why a short
 * reason for the response body. */
int http_parse_head(const char *buf, size_t len, struct http_request *req, const char **why);

#endif
