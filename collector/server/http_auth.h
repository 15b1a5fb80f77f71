/* Access to the HTTP pages on a non-loopback address: with the collector's
 * --token-file, every request must carry the HTTP key, a key derived from the
 * token (auth_derive_hex(token, AUTH_HTTP_LABEL); `collector http-key` prints
 * it), so the pages' password never reveals the token the agents prove:
 * "Authorization: Bearer KEY", or HTTP Basic with KEY as the password (any
 * user name: browsers ask for it). */
#ifndef COLLECTOR_HTTP_AUTH_H
#define COLLECTOR_HTTP_AUTH_H

#include <stdbool.h>

#include "auth.h"

/* Whether the Authorization header's value (authorization, "" if none) proves the key. */
bool http_auth_ok(const struct auth_token *t, const char *authorization);

#endif
