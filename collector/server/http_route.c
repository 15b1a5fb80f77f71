/* Request paths to pages (http_route.h). */
#include "http_route.h"

#include <errno.h>
#include <string.h>

#define MAX_ID_DIGITS 18 /* below 2^63 */

int http_route_parse(const char *path, struct http_route *r)
{
	static const struct {
		const char *suffix;
		enum http_page page;
	} suffixes[] = {{"", HP_HTML},
			{".json", HP_JSON},
			{".txt", HP_TEXT},
			{"/roofline-gpu.svg", HP_SVG_GPU},
			{"/roofline-cpu.svg", HP_SVG_CPU}};
	r->session = 0;
	r->query[0] = '\0';
	if (strcmp(path, "/") == 0 || strcmp(path, "/index.html") == 0) {
		r->page = HP_INDEX;
		return 0;
	}
	if (strcmp(path, "/profile") == 0) {
		r->page = HP_PROFILE;
		return 0;
	}
	if (strcmp(path, "/sessions.json") == 0) {
		r->page = HP_SESSIONS_JSON;
		return 0;
	}
	static const char prefix[] = "/session/";
	if (strncmp(path, prefix, sizeof(prefix) - 1) != 0)
		return -ENOENT;
	const char *p = path + sizeof(prefix) - 1;
	if (*p < '1' || *p > '9')
		return -ENOENT; /* no sign, no leading zero, no empty id */
	long long id = 0;
	int digits = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (++digits > MAX_ID_DIGITS)
			return -ENOENT;
		id = id * 10 + (*p - '0');
	}
	for (size_t i = 0; i < sizeof(suffixes) / sizeof(suffixes[0]); i++)
		if (strcmp(p, suffixes[i].suffix) == 0) {
			r->page = suffixes[i].page;
			r->session = id;
			return 0;
		}
	return -ENOENT;
}

const char *http_page_type(enum http_page p)
{
	switch (p) {
	case HP_INDEX:
	case HP_PROFILE:
	case HP_HTML: return "text/html; charset=utf-8";
	case HP_SESSIONS_JSON:
	case HP_JSON: return "application/json; charset=utf-8";
	case HP_TEXT: return "text/plain; charset=utf-8";
	case HP_SVG_GPU:
	case HP_SVG_CPU: return "image/svg+xml; charset=utf-8";
	}
	return "application/octet-stream";
}
