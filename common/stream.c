#include "stream.h"

#include <errno.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

void stream_init(struct stream *s, int fd)
{
	s->fd = fd;
	s->tls = NULL;
	s->handshaking = false;
}

int stream_start_tls(struct stream *s, struct tls_ctx *ctx, const char *verify_host)
{
	int rc = tls_conn_new(ctx, s->fd, verify_host, &s->tls);
	if (rc == 0)
		s->handshaking = true;
	return rc;
}

int stream_handshake(struct stream *s)
{
	if (!s->handshaking)
		return 0;
	int rc = tls_handshake(s->tls);
	if (rc == 0)
		s->handshaking = false;
	return rc;
}

ssize_t stream_read(struct stream *s, void *buf, size_t len)
{
	if (s->tls)
		return tls_read(s->tls, buf, len);
	for (;;) {
		ssize_t n = recv(s->fd, buf, len, MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

ssize_t stream_write(struct stream *s, const void *buf, size_t len)
{
	if (s->tls)
		return tls_write(s->tls, buf, len);
	for (;;) {
		ssize_t n = send(s->fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n >= 0)
			return n;
		if (errno == EINTR)
			continue;
		return errno == EWOULDBLOCK ? -EAGAIN : -errno;
	}
}

short stream_events(const struct stream *s, bool reading, bool writing)
{
	if (!s->tls)
		return (short)((reading ? POLLIN : 0) | (writing ? POLLOUT : 0));
	if (s->handshaking)
		return tls_want_handshake(s->tls);
	return (short)((reading ? tls_want_read(s->tls) : 0) | (writing ? tls_want_write(s->tls) : 0));
}

bool stream_pending(const struct stream *s)
{
	return s->tls && !s->handshaking && tls_pending(s->tls);
}

const char *stream_error(const struct stream *s, int rc)
{
	if (s->tls && tls_error(s->tls)[0])
		return tls_error(s->tls);
	return strerror(rc < 0 ? -rc : rc);
}

void stream_close(struct stream *s)
{
	tls_conn_free(s->tls);
	s->tls = NULL;
	s->handshaking = false;
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
}
