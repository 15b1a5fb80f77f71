/* Request-head parser of the HTTP front end (http_parse.h). */
#include "http_parse.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

static int bad(const char **why, const char *msg)
{
	*why = msg;
	return 400;
}

/* The value of the first Authorization header among the lines after the request line. */
static void find_authorization(const char *lines, char *out, size_t len)
{
	static const char name[] = "authorization:";
	out[0] = '\0';
	for (const char *l = lines; l && *l && *l != '\r' && *l != '\n';) {
		const char *eol = strpbrk(l, "\r\n");
		size_t n = eol ? (size_t)(eol - l) : strlen(l);
		if (n > sizeof(name) - 1 && strncasecmp(l, name, sizeof(name) - 1) == 0) {
			const char *v = l + sizeof(name) - 1;
			while (*v == ' ' || *v == '\t')
				v++;
			size_t vn = (size_t)(l + n - v);
			while (vn > 0 && (v[vn - 1] == ' ' || v[vn - 1] == '\t'))
				vn--;
			if (vn >= len)
				vn = len - 1; /* cut: it cannot be a valid key */
			memcpy(out, v, vn);
			out[vn] = '\0';
			return;
		}
		l = eol ? eol + (eol[0] == '\r' && eol[1] == '\n' ? 2 : 1) : NULL;
	}
}

int http_parse_head(const char *buf, size_t len, struct http_request *req, const char **why)
{
	memset(req, 0, sizeof(*req));
	*why = "";
	if (len > HTTP_MAX_REQUEST)
		len = HTTP_MAX_REQUEST;
	if (memchr(buf, '\0', len))
		return bad(why, "bad request: NUL byte\n");
	char head[HTTP_MAX_REQUEST + 1];
	memcpy(head, buf, len);
	head[len] = '\0';
	if (!strstr(head, "\r\n\r\n") && !strstr(head, "\n\n"))
		return len == HTTP_MAX_REQUEST ? bad(why, "bad request: request head over 8 KiB\n") : 0;
	char *eol = strstr(head, "\r\n");
	if (!eol)
		return bad(why, "bad request\n");
	*eol = '\0';
	find_authorization(eol + 2, req->authorization, sizeof(req->authorization));
	/* RFC 9112 section 3: request-line = method SP request-target SP HTTP-version, one SP each
	 * (sscanf's ' ' took any run of blanks, or none: "GET  /" and "GET/ HTTP/1.1" were served). */
	char method[8], path[HTTP_MAX_PATH];
	size_t ml = strspn(head, "ABCDEFGHIJKLMNOPQRSTUVWXYZ");
	const char *target = head + ml + 1;
	size_t pl = ml > 0 && ml < sizeof(method) && head[ml] == ' ' ? strcspn(target, " ") : 0;
	const char *version = target + pl + 1;
	if (pl == 0 || pl >= sizeof(path) || target[0] != '/' || target[pl] != ' ' ||
	    (strcmp(version, "HTTP/1.0") != 0 && strcmp(version, "HTTP/1.1") != 0))
		return bad(why, "bad request: want GET /path HTTP/1.1\n");
	memcpy(method, head, ml);
	method[ml] = '\0';
	memcpy(path, target, pl);
	path[pl] = '\0';
	for (const char *p = path; *p; p++)
		if ((unsigned char)*p <= 0x20 || (unsigned char)*p >= 0x7f)
			return bad(why, "bad request: bad character in the path\n");
	if (strcmp(method, "GET") != 0) {
		*why = "only GET is served\n";
		return 405;
	}
	char *q = strchr(path, '?');
	req->query[0] = '\0';
	if (q) {
		*q = '\0';
		memcpy(req->query, q + 1, strlen(q + 1) + 1); /* shorter than path */
	}
	memcpy(req->method, method, sizeof(req->method));
	memcpy(req->path, path, sizeof(req->path));
	return 200;
}
