/* Shared-secret authentication of agents (proto/README.md, "Authentication"):
 * the collector sends Challenge{nonce}; the agent answers with
 * HMAC-SHA256(token, nonce || agent_id || boot_id as 8 bytes little endian)
 * in Hello.auth. Debian's libnettle does the HMAC (small enough for the static
 * board agents); without CONFIG_AUTH every function returns -ENOTSUP. */
#ifndef COMMON_AUTH_H
#define COMMON_AUTH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define AUTH_MAC_LEN 32u
#define AUTH_NONCE_LEN 32u
#define AUTH_TOKEN_MAX 4096u
#define AUTH_TOKEN_MIN 16u

struct auth_token {
	size_t len;
	uint8_t key[AUTH_TOKEN_MAX];
};

/* Whether this build has token support (CONFIG_AUTH). */
bool auth_available(void);
/* Read the token from path (trailing whitespace dropped; at least
 * AUTH_TOKEN_MIN bytes). -EACCES when group or others have any access to
 * the file (the message names the chmod to run).
 * err gets a user-facing reason. */
int auth_token_load(const char *path, struct auth_token *t, char *err, size_t errlen);
/* Fill buf with len cryptographically random bytes. */
int auth_random(uint8_t *buf, size_t len);
/* mac = HMAC-SHA256(key, nonce || agent_id || le64(boot_id)). */
int auth_mac(const struct auth_token *t, const uint8_t *nonce, size_t nonce_len, const char *agent_id,
	     uint64_t boot_id, uint8_t mac[AUTH_MAC_LEN]);
/* 0 if mac (mac_len bytes) is the right answer, -EACCES otherwise (constant time). */
int auth_verify(const struct auth_token *t, const uint8_t *nonce, size_t nonce_len, const char *agent_id,
		uint64_t boot_id, const uint8_t *mac, size_t mac_len);
/* A key for another use of the token (the HTTP pages' password), so that
 * showing or sending it never shows the token: HMAC-SHA256(token, label) as 64
 * lowercase hex digits and a NUL. */
#define AUTH_DERIVED_HEX (2u * AUTH_MAC_LEN + 1u)
#define AUTH_HTTP_LABEL "prof-collector-http/1" /* the collector's HTTP key (collector http-key) */
int auth_derive_hex(const struct auth_token *t, const char *label, char out[AUTH_DERIVED_HEX]);
/* 0 if given (len bytes) is auth_derive_hex(t, label), -EACCES otherwise (constant time). */
int auth_check_derived(const struct auth_token *t, const char *label, const char *given, size_t len);
/* Overwrite the key. */
void auth_token_wipe(struct auth_token *t);

#endif
