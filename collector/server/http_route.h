/* The pages of the HTTP front end and how a request path names one (pure: no
 * sockets, no store). Session ids are strict decimal: 1-18 digits, no sign, no
 * leading zero, so /session/+1 and /session/01 are no page (404). */
#ifndef COLLECTOR_HTTP_ROUTE_H
#define COLLECTOR_HTTP_ROUTE_H

enum http_page {
	HP_INDEX,	  /* / and /index.html: the session list (HTML) */
	HP_SESSIONS_JSON, /* /sessions.json */
	HP_HTML,	  /* /session/N */
	HP_JSON,	  /* /session/N.json */
	HP_TEXT,	  /* /session/N.txt */
	HP_SVG_GPU,	  /* /session/N/roofline-gpu.svg */
	HP_SVG_CPU,	  /* /session/N/roofline-cpu.svg */
	HP_PROFILE,	  /* /profile: the last 10 minutes of every agent: CPU over time, flame graph */
};

struct http_route {
	enum http_page page;
	long long session; /* > 0 for the /session/N pages, 0 for the lists */
	char query[1024];  /* the request's query string, %-encoded ("" none; set by the caller of http_route_parse) */
};

/* The page path names (path without the query string): 0, or -ENOENT. */
int http_route_parse(const char *path, struct http_route *r);
/* The Content-Type of a page. */
const char *http_page_type(enum http_page p);

#endif
