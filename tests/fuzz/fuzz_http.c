/* libFuzzer target: the collector's HTTP request-head parser
 * (collector/server/http_parse.c), fed whole and as growing prefixes the way
 * http.c calls it while bytes arrive. */
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "server/http_parse.h"

static void check(const char *buf, size_t len)
{
	struct http_request req;
	const char *why = NULL;
	int code = http_parse_head(buf, len, &req, &why);
	if (code != 0 && code != 200 && code != 400 && code != 405)
		__builtin_trap();
	if (code == 200 && (req.path[0] != '/' || strcmp(req.method, "GET") != 0 || strchr(req.path, '?') ||
			    memchr(req.path, '\0', sizeof(req.path)) == NULL))
		__builtin_trap();
	if (code >= 400 && (!why || !*why))
		__builtin_trap();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	size_t step = (size_t)(data[0] % 32) + 1; /* arrival pattern */
	data++;
	size--;
	if (size > HTTP_MAX_REQUEST + 64)
		size = HTTP_MAX_REQUEST + 64;
	for (size_t n = step; n < size; n += step)
		check((const char *)data, n > HTTP_MAX_REQUEST ? HTTP_MAX_REQUEST : n);
	check((const char *)data, size > HTTP_MAX_REQUEST ? HTTP_MAX_REQUEST : size);
	return 0;
}
