#include "tls.h"

#include <arpa/inet.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "generated/config.h"
#include "log.h"

bool tls_looks_like_client_hello(const uint8_t *b, size_t n)
{
	/* TLS record: content type 22 (handshake), then major version 3. A frame
	 * never starts so: its first byte is the length of a Hello (> 22 bytes)
	 * and 0x03 is not a valid protobuf tag. */
	return n >= 1 && b[0] == 0x16 && (n < 2 || b[1] == 0x03);
}

#ifdef CONFIG_TLS

#include "ossl.h" /* OpenSSL, loaded on first use */

struct tls_ctx {
	SSL_CTX *ctx;
	bool server;
};

struct tls_conn {
	SSL *ssl;
	bool done; /* handshake finished */
	short want_hs, want_rd, want_wr;
	char err[320];
};

bool tls_available(void)
{
	return true;
}

/* The most specific OpenSSL reason in the error queue (then cleared). */
static const char *ssl_reason(char *buf, size_t len)
{
	unsigned long e = ERR_peek_last_error();
	const char *r = e ? ERR_reason_error_string(e) : NULL;
	if (r)
		snprintf(buf, len, "%s", r);
	else if (e)
		ERR_error_string_n(e, buf, len);
	else
		snprintf(buf, len, "unknown OpenSSL error");
	ERR_clear_error();
	return buf;
}

/* A clear reason for the usual failure (missing or unreadable file) before OpenSSL's own. */
static int check_readable(const char *opt, const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	if (f) {
		fclose(f);
		return 0;
	}
	int e = errno;
	snprintf(err, errlen, "%s %s: cannot read it: %s", opt, path, strerror(e));
	return -e;
}

static SSL_CTX *ctx_common(bool server)
{
	SSL_CTX *ctx = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
	if (!ctx)
		return NULL;
	SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
	/* Unexpected EOF reads as a close: frames are self-delimiting and the
	 * frame decoder reports a truncated one. */
	SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET | SSL_OP_IGNORE_UNEXPECTED_EOF);
	SSL_CTX_set_mode(ctx, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER |
				  SSL_MODE_RELEASE_BUFFERS);
	SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
	if (server)
		SSL_CTX_set_num_tickets(ctx, 0);
	return ctx;
}

int tls_ctx_server(struct tls_ctx **out, const char *cert_file, const char *key_file, char *err, size_t errlen)
{
	*out = NULL;
	int lrc = ossl_ssl_load(err, errlen);
	if (lrc < 0)
		return lrc;
	char why[256];
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t || !(t->ctx = ctx_common(true))) {
		snprintf(err, errlen, "cannot set up TLS: %s", ssl_reason(why, sizeof(why)));
		free(t);
		return -ENOMEM;
	}
	t->server = true;
	int rc;
	if ((rc = check_readable("--tls-cert", cert_file, err, errlen)) < 0 ||
	    (rc = check_readable("--tls-key", key_file, err, errlen)) < 0) {
		tls_ctx_free(t);
		return rc;
	}
	struct stat st;
	if (stat(key_file, &st) == 0 && (st.st_mode & S_IROTH))
		log_warn("TLS key file %s is readable by every user: chmod 600 it", key_file);
	if (SSL_CTX_use_certificate_chain_file(t->ctx, cert_file) != 1) {
		snprintf(err, errlen, "--tls-cert %s: cannot load a PEM certificate chain: %s", cert_file,
			 ssl_reason(why, sizeof(why)));
		tls_ctx_free(t);
		return -EINVAL;
	}
	if (SSL_CTX_use_PrivateKey_file(t->ctx, key_file, SSL_FILETYPE_PEM) != 1) {
		snprintf(err, errlen, "--tls-key %s: cannot load a PEM private key: %s", key_file,
			 ssl_reason(why, sizeof(why)));
		tls_ctx_free(t);
		return -EINVAL;
	}
	if (SSL_CTX_check_private_key(t->ctx) != 1) {
		snprintf(err, errlen, "--tls-key %s does not belong to the certificate in --tls-cert %s: %s", key_file,
			 cert_file, ssl_reason(why, sizeof(why)));
		tls_ctx_free(t);
		return -EINVAL;
	}
	*out = t;
	return 0;
}

int tls_ctx_client(struct tls_ctx **out, const char *ca_file, char *err, size_t errlen)
{
	*out = NULL;
	int lrc = ossl_ssl_load(err, errlen);
	if (lrc < 0)
		return lrc;
	char why[256];
	struct tls_ctx *t = calloc(1, sizeof(*t));
	if (!t || !(t->ctx = ctx_common(false))) {
		snprintf(err, errlen, "cannot set up TLS: %s", ssl_reason(why, sizeof(why)));
		free(t);
		return -ENOMEM;
	}
	int rc = check_readable("--tls-ca", ca_file, err, errlen);
	if (rc < 0) {
		tls_ctx_free(t);
		return rc;
	}
	if (SSL_CTX_load_verify_locations(t->ctx, ca_file, NULL) != 1) {
		snprintf(err, errlen, "--tls-ca %s: cannot load PEM CA certificates: %s", ca_file,
			 ssl_reason(why, sizeof(why)));
		tls_ctx_free(t);
		return -EINVAL;
	}
	SSL_CTX_set_verify(t->ctx, SSL_VERIFY_PEER, NULL);
	*out = t;
	return 0;
}

void tls_ctx_free(struct tls_ctx *ctx)
{
	if (!ctx)
		return;
	SSL_CTX_free(ctx->ctx);
	free(ctx);
}

int tls_conn_new(struct tls_ctx *ctx, int fd, const char *verify_host, struct tls_conn **out)
{
	*out = NULL;
	struct tls_conn *c = calloc(1, sizeof(*c));
	if (!c)
		return -ENOMEM;
	c->want_hs = c->want_rd = POLLIN;
	c->want_wr = POLLOUT;
	c->ssl = SSL_new(ctx->ctx);
	if (!c->ssl || SSL_set_fd(c->ssl, fd) != 1) {
		ERR_clear_error();
		tls_conn_free(c);
		return -ENOMEM;
	}
	if (ctx->server) {
		SSL_set_accept_state(c->ssl);
	} else {
		SSL_set_connect_state(c->ssl);
		c->want_hs = POLLOUT;
		unsigned char ip[16];
		int ok;
		if (inet_pton(AF_INET, verify_host, ip) == 1 || inet_pton(AF_INET6, verify_host, ip) == 1)
			ok = X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(c->ssl), verify_host);
		else
			ok = SSL_set1_host(c->ssl, verify_host) && SSL_set_tlsext_host_name(c->ssl, verify_host);
		if (ok != 1) {
			ERR_clear_error();
			tls_conn_free(c);
			return -EINVAL;
		}
	}
	*out = c;
	return 0;
}

void tls_conn_free(struct tls_conn *c)
{
	if (!c)
		return;
	if (c->ssl) {
		if (c->done)
			SSL_shutdown(c->ssl); /* one try: close_notify if the socket takes it */
		SSL_free(c->ssl);
	}
	ERR_clear_error();
	free(c);
}

/* Map an SSL_get_error() result: -EAGAIN (with *want set), 0 clean close, or -errno. */
static int ssl_result(struct tls_conn *c, int ret, short *want, const char *what)
{
	int e = SSL_get_error(c->ssl, ret);
	char why[256];
	switch (e) {
	case SSL_ERROR_WANT_READ:
		*want = POLLIN;
		return -EAGAIN;
	case SSL_ERROR_WANT_WRITE:
		*want = POLLOUT;
		return -EAGAIN;
	case SSL_ERROR_ZERO_RETURN:
		ERR_clear_error();
		snprintf(c->err, sizeof(c->err), "%s: the peer closed the TLS connection", what);
		return 0;
	case SSL_ERROR_SYSCALL: {
		int err = errno;
		ERR_clear_error();
		if (ret == 0 || err == 0) {
			snprintf(c->err, sizeof(c->err), "%s: connection closed by the peer", what);
			return 0;
		}
		snprintf(c->err, sizeof(c->err), "%s: %s", what, strerror(err));
		return -err;
	}
	default: {
		long v = SSL_get_verify_result(c->ssl);
		if (!c->done && v != X509_V_OK) {
			snprintf(c->err, sizeof(c->err), "%s: certificate verification failed: %s (X509 error %ld)",
				 what, X509_verify_cert_error_string(v), v);
			ERR_clear_error();
			return -EKEYREJECTED;
		}
		snprintf(c->err, sizeof(c->err), "%s: %s", what, ssl_reason(why, sizeof(why)));
		return -EPROTO;
	}
	}
}

int tls_handshake(struct tls_conn *c)
{
	if (c->done)
		return 0;
	ERR_clear_error();
	c->err[0] = 0;
	int r = SSL_do_handshake(c->ssl);
	if (r == 1) {
		c->done = true;
		return 0;
	}
	int rc = ssl_result(c, r, &c->want_hs, "TLS handshake");
	return rc == 0 ? -ECONNRESET : rc; /* a close during the handshake is a failure */
}

ssize_t tls_read(struct tls_conn *c, void *buf, size_t len)
{
	ERR_clear_error();
	c->err[0] = 0;
	size_t n = 0;
	if (SSL_read_ex(c->ssl, buf, len, &n) == 1) {
		c->want_rd = POLLIN;
		return (ssize_t)n;
	}
	return ssl_result(c, 0, &c->want_rd, "TLS read");
}

ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len)
{
	ERR_clear_error();
	c->err[0] = 0;
	size_t n = 0;
	if (SSL_write_ex(c->ssl, buf, len, &n) == 1) {
		c->want_wr = POLLOUT;
		return (ssize_t)n;
	}
	int rc = ssl_result(c, 0, &c->want_wr, "TLS write");
	return rc == 0 ? -EPIPE : rc;
}

short tls_want_handshake(const struct tls_conn *c) { return c->want_hs; }
short tls_want_read(const struct tls_conn *c) { return c->want_rd; }
short tls_want_write(const struct tls_conn *c) { return c->want_wr; }

bool tls_pending(const struct tls_conn *c)
{
	return SSL_has_pending(c->ssl) == 1;
}

const char *tls_describe(const struct tls_conn *c, char *buf, size_t len)
{
	const SSL_CIPHER *ci = SSL_get_current_cipher(c->ssl);
	snprintf(buf, len, "%s %s", SSL_get_version(c->ssl), ci ? SSL_CIPHER_get_name(ci) : "(no cipher)");
	return buf;
}

const char *tls_error(const struct tls_conn *c)
{
	return c->err;
}

#else /* !CONFIG_TLS: nothing links libssl */

bool tls_available(void)
{
	return false;
}

static int no_tls(char *err, size_t errlen)
{
	snprintf(err, errlen, "this build has no TLS support (CONFIG_TLS is off): rebuild with CONFIG_TLS=y");
	return -ENOTSUP;
}

int tls_ctx_server(struct tls_ctx **out, const char *cert_file, const char *key_file, char *err, size_t errlen)
{
	(void)cert_file, (void)key_file;
	*out = NULL;
	return no_tls(err, errlen);
}

int tls_ctx_client(struct tls_ctx **out, const char *ca_file, char *err, size_t errlen)
{
	(void)ca_file;
	*out = NULL;
	return no_tls(err, errlen);
}

void tls_ctx_free(struct tls_ctx *ctx) { (void)ctx; }
int tls_conn_new(struct tls_ctx *ctx, int fd, const char *verify_host, struct tls_conn **out)
{
	(void)ctx, (void)fd, (void)verify_host;
	*out = NULL;
	return -ENOTSUP;
}
void tls_conn_free(struct tls_conn *c) { (void)c; }
int tls_handshake(struct tls_conn *c) { (void)c; return -ENOTSUP; }
ssize_t tls_read(struct tls_conn *c, void *buf, size_t len) { (void)c, (void)buf, (void)len; return -ENOTSUP; }
ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len) { (void)c, (void)buf, (void)len; return -ENOTSUP; }
short tls_want_handshake(const struct tls_conn *c) { (void)c; return 0; }
short tls_want_read(const struct tls_conn *c) { (void)c; return 0; }
short tls_want_write(const struct tls_conn *c) { (void)c; return 0; }
bool tls_pending(const struct tls_conn *c) { (void)c; return false; }
const char *tls_describe(const struct tls_conn *c, char *buf, size_t len)
{
	(void)c;
	snprintf(buf, len, "no TLS");
	return buf;
}
const char *tls_error(const struct tls_conn *c) { (void)c; return "no TLS support in this build"; }

#endif
