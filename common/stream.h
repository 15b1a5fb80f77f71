/* One non-blocking connected socket, plain TCP or TLS (tls.h): the read and
 * write calls and the poll events the agent's transport and the collector's
 * server use, so neither has two code paths. */
#ifndef COMMON_STREAM_H
#define COMMON_STREAM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include "tls.h"

struct stream {
	int fd;		      /* owned: closed by stream_close() */
	struct tls_conn *tls; /* NULL: plain TCP */
	bool handshaking;     /* TLS handshake not finished yet */
};

/* Plain stream on fd (-1: none). */
void stream_init(struct stream *s, int fd);
/* Switch to TLS (handshake pending) with ctx; verify_host: see tls_conn_new(). */
int stream_start_tls(struct stream *s, struct tls_ctx *ctx, const char *verify_host);
/* 0 done (or plain), -EAGAIN, or -errno with stream_error(); see tls_handshake(). */
int stream_handshake(struct stream *s);
/* >0 bytes, 0 the peer closed, -EAGAIN, or -errno (stream_error()). Never raises SIGPIPE on plain sockets. */
ssize_t stream_read(struct stream *s, void *buf, size_t len);
ssize_t stream_write(struct stream *s, const void *buf, size_t len);
/* poll events to wait for: while handshaking what the handshake needs; else
 * those that let a read (reading) and a write (writing) go on. */
short stream_events(const struct stream *s, bool reading, bool writing);
/* Input buffered in user space that poll will not signal. */
bool stream_pending(const struct stream *s);
/* Why the last call failed with rc (-errno): the TLS reason, or strerror(-rc). */
const char *stream_error(const struct stream *s, int rc);
/* Free the TLS state, close the socket; the stream becomes fd -1. */
void stream_close(struct stream *s);

#endif
