/* Optional TLS on agent <-> collector connections (OpenSSL libssl,
 * CONFIG_TLS). A context holds the collector's certificate and key, or the
 * agent's trusted CA; a connection wraps one non-blocking socket. Every call
 * returns at once: -EAGAIN means "call again when tls_want_*() is ready".
 * Without CONFIG_TLS the constructors return -ENOTSUP and nothing links
 * libssl. Writes go through write(2): the process must ignore SIGPIPE.
 * Plain or TLS socket I/O for callers: stream.h. */
#ifndef COMMON_TLS_H
#define COMMON_TLS_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* Error.code a TLS-only listener answers a plaintext peer with (in plain). */
#define TLS_ERROR_CODE_REQUIRED EPROTOTYPE

struct tls_ctx;
struct tls_conn;

/* Whether this build has TLS (CONFIG_TLS). */
bool tls_available(void);

/* Collector: certificate chain (PEM) and its private key. err: user-facing reason. */
int tls_ctx_server(struct tls_ctx **out, const char *cert_file, const char *key_file, char *err, size_t errlen);
/* Agent: the server's certificate must chain to a CA in ca_file (PEM). */
int tls_ctx_client(struct tls_ctx **out, const char *ca_file, char *err, size_t errlen);
void tls_ctx_free(struct tls_ctx *ctx);

/* A connection on connected socket fd (not owned). Client contexts check the
 * server certificate against verify_host: an IP address (v4 or v6) or a DNS
 * name (also sent as SNI). */
int tls_conn_new(struct tls_ctx *ctx, int fd, const char *verify_host, struct tls_conn **out);
/* Best-effort close_notify (never blocks), then free. NULL is fine. */
void tls_conn_free(struct tls_conn *c);

/* Drive the handshake: 0 done, -EAGAIN in progress (wait for tls_want_handshake()),
 * -EKEYREJECTED the peer's certificate failed verification, -EPROTO the peer
 * does not speak (this) TLS, other -errno: the connection failed (closed,
 * reset). tls_error() says why. */
int tls_handshake(struct tls_conn *c);
/* >0 bytes, 0 the peer closed, -EAGAIN, or -errno (tls_error()). */
ssize_t tls_read(struct tls_conn *c, void *buf, size_t len);
/* >0 bytes (may be partial), -EAGAIN, or -errno. After -EAGAIN call again
 * with at least the same bytes (the buffer may move). */
ssize_t tls_write(struct tls_conn *c, const void *buf, size_t len);
/* poll events (POLLIN / POLLOUT) the last blocked handshake / read / write waits for. */
short tls_want_handshake(const struct tls_conn *c);
short tls_want_read(const struct tls_conn *c);
short tls_want_write(const struct tls_conn *c);
/* Decrypted or received bytes buffered inside the library (poll will not report them). */
bool tls_pending(const struct tls_conn *c);
/* "TLSv1.3 TLS_AES_256_GCM_SHA384" once the handshake is done. */
const char *tls_describe(const struct tls_conn *c, char *buf, size_t len);
const char *tls_error(const struct tls_conn *c);

/* The first bytes of a TLS ClientHello (a handshake record): a TLS peer on a
 * plaintext listener, or (false with n >= 1) a plaintext peer on a TLS one. */
bool tls_looks_like_client_hello(const uint8_t *b, size_t n);

#endif
