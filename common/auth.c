#include "auth.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include "generated/config.h"

#ifdef CONFIG_AUTH
#include <nettle/hmac.h>
#include <nettle/memops.h>
#endif

bool auth_available(void)
{
#ifdef CONFIG_AUTH
	return true;
#else
	return false;
#endif
}

void auth_token_wipe(struct auth_token *t)
{
	volatile uint8_t *p = t->key;
	for (size_t i = 0; i < sizeof(t->key); i++)
		p[i] = 0;
	t->len = 0;
}

int auth_token_load(const char *path, struct auth_token *t, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	if (!auth_available()) {
		snprintf(err, errlen, "--token-file: this build has no token support (CONFIG_AUTH is off)");
		return -ENOTSUP;
	}
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		int e = errno;
		snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(e));
		return -e;
	}
	struct stat st;
	if (fstat(fd, &st) < 0) {
		int e = errno;
		close(fd);
		snprintf(err, errlen, "cannot stat the token file %s: %s", path, strerror(e));
		return -e;
	}
	if (st.st_mode & (S_IRWXG | S_IRWXO)) {
		/* Anyone who can read it can pose as any agent: refuse rather than warn. */
		close(fd);
		snprintf(err, errlen,
			 "token file %s is accessible by group or others (mode %04o): run chmod 600 %s", path,
			 (unsigned)(st.st_mode & 07777), path);
		return -EACCES;
	}
	size_t len = 0;
	for (;;) {
		if (len == sizeof(t->key)) {
			uint8_t extra;
			if (read(fd, &extra, 1) > 0) {
				close(fd);
				auth_token_wipe(t);
				snprintf(err, errlen, "token file %s is longer than %u bytes", path, AUTH_TOKEN_MAX);
				return -EFBIG;
			}
			break;
		}
		ssize_t n = read(fd, t->key + len, sizeof(t->key) - len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			int e = errno;
			close(fd);
			auth_token_wipe(t);
			snprintf(err, errlen, "cannot read the token file %s: %s", path, strerror(e));
			return -e;
		}
		if (n == 0)
			break;
		len += (size_t)n;
	}
	close(fd);
	while (len > 0 && (t->key[len - 1] == '\n' || t->key[len - 1] == '\r' || t->key[len - 1] == ' ' ||
			   t->key[len - 1] == '\t'))
		len--;
	if (len < AUTH_TOKEN_MIN) {
		auth_token_wipe(t);
		snprintf(err, errlen,
			 "token file %s holds %zu bytes: use at least %u (e.g. head -c 32 /dev/urandom | base64 > %s)",
			 path, len, AUTH_TOKEN_MIN, path);
		return -EINVAL;
	}
	t->len = len;
	return 0;
}

int auth_random(uint8_t *buf, size_t len)
{
	size_t done = 0;
	while (done < len) {
		ssize_t n = getrandom(buf + done, len - done, 0);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		done += (size_t)n;
	}
	return 0;
}

int auth_mac(const struct auth_token *t, const uint8_t *nonce, size_t nonce_len, const char *agent_id,
	     uint64_t boot_id, uint8_t mac[AUTH_MAC_LEN])
{
#ifdef CONFIG_AUTH
	size_t idlen = strlen(agent_id);
	if (nonce_len > 256 || idlen > 2048)
		return -EINVAL;
	uint8_t msg[256 + 2048 + 8];
	memcpy(msg, nonce, nonce_len);
	memcpy(msg + nonce_len, agent_id, idlen);
	for (int i = 0; i < 8; i++)
		msg[nonce_len + idlen + (size_t)i] = (uint8_t)(boot_id >> (8 * i));
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, t->len, t->key);
	hmac_sha256_update(&ctx, nonce_len + idlen + 8, msg);
	hmac_sha256_digest(&ctx, AUTH_MAC_LEN, mac);
	explicit_bzero(&ctx, sizeof(ctx));
	explicit_bzero(msg, sizeof(msg));
	return 0;
#else
	(void)t, (void)nonce, (void)nonce_len, (void)agent_id, (void)boot_id, (void)mac;
	return -ENOTSUP;
#endif
}

int auth_verify(const struct auth_token *t, const uint8_t *nonce, size_t nonce_len, const char *agent_id,
		uint64_t boot_id, const uint8_t *mac, size_t mac_len)
{
#ifdef CONFIG_AUTH
	uint8_t want[AUTH_MAC_LEN];
	int rc = auth_mac(t, nonce, nonce_len, agent_id, boot_id, want);
	if (rc < 0)
		return rc;
	rc = (mac_len == AUTH_MAC_LEN && memeql_sec(want, mac, AUTH_MAC_LEN)) ? 0 : -EACCES;
	explicit_bzero(want, sizeof(want));
	return rc;
#else
	(void)t, (void)nonce, (void)nonce_len, (void)agent_id, (void)boot_id, (void)mac, (void)mac_len;
	return -ENOTSUP;
#endif
}

int auth_derive_hex(const struct auth_token *t, const char *label, char out[AUTH_DERIVED_HEX])
{
#ifdef CONFIG_AUTH
	uint8_t mac[AUTH_MAC_LEN];
	struct hmac_sha256_ctx ctx;
	hmac_sha256_set_key(&ctx, t->len, t->key);
	hmac_sha256_update(&ctx, strlen(label), (const uint8_t *)label);
	hmac_sha256_digest(&ctx, AUTH_MAC_LEN, mac);
	explicit_bzero(&ctx, sizeof(ctx));
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < AUTH_MAC_LEN; i++) {
		out[2 * i] = hex[mac[i] >> 4];
		out[2 * i + 1] = hex[mac[i] & 15];
	}
	out[2 * AUTH_MAC_LEN] = '\0';
	explicit_bzero(mac, sizeof(mac));
	return 0;
#else
	(void)t, (void)label;
	out[0] = '\0';
	return -ENOTSUP;
#endif
}

int auth_check_derived(const struct auth_token *t, const char *label, const char *given, size_t len)
{
#ifdef CONFIG_AUTH
	char want[AUTH_DERIVED_HEX];
	int rc = auth_derive_hex(t, label, want);
	if (rc < 0)
		return rc;
	rc = len == AUTH_DERIVED_HEX - 1 && memeql_sec(want, given, len) ? 0 : -EACCES;
	explicit_bzero(want, sizeof(want));
	return rc;
#else
	(void)t, (void)label, (void)given, (void)len;
	return -ENOTSUP;
#endif
}
