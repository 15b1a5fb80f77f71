/* The HTTP key check (http_auth.h). Base64 of HTTP Basic: libnettle. */
#include "http_auth.h"

#include <string.h>
#include <strings.h>

#include "generated/config.h"

#ifdef CONFIG_AUTH
#include <nettle/base64.h>
#endif

static bool key_ok(const struct auth_token *t, const char *given, size_t len)
{
	return auth_check_derived(t, AUTH_HTTP_LABEL, given, len) == 0;
}

bool http_auth_ok(const struct auth_token *t, const char *a)
{
	if (strncasecmp(a, "Bearer ", 7) == 0)
		return key_ok(t, a + 7, strlen(a + 7));
#ifdef CONFIG_AUTH
	if (strncasecmp(a, "Basic ", 6) == 0) {
		const char *b64 = a + 6;
		size_t n = strlen(b64);
		uint8_t plain[BASE64_DECODE_LENGTH(512)];
		size_t plen = 0;
		struct base64_decode_ctx ctx;
		base64_decode_init(&ctx);
		if (n > 512 || !base64_decode_update(&ctx, &plen, plain, n, b64) || !base64_decode_final(&ctx))
			return false;
		const uint8_t *colon = memchr(plain, ':', plen);
		bool ok = colon && key_ok(t, (const char *)colon + 1, plen - (size_t)(colon + 1 - plain));
		explicit_bzero(plain, sizeof(plain));
		return ok;
	}
#endif
	return false;
}
