/* TLS plumbing of the collector's loop: the handshake (and a plaintext peer on
 * a TLS listener), input the TLS library holds decrypted. */
#include "server_priv.h"

#include <errno.h>
#include <sys/socket.h>

#include "log.h"
#include "tls.h"

/* TLS listener: a plaintext peer gets a plaintext Error; a TLS peer goes through the handshake. */
void srv_conn_handshake(struct server *s, struct conn *c)
{
	if (!c->tls_checked) {
		uint8_t b[2];
		ssize_t n = recv(c->st.fd, b, sizeof(b), MSG_PEEK | MSG_DONTWAIT);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return;
		if (n > 0 && !tls_looks_like_client_hello(b, (size_t)n)) {
			s->stats.tls_failed++;
			ingest_fail(&c->ing, INGEST_PROTOCOL, TLS_ERROR_CODE_REQUIRED, true,
				    "plaintext peer on a TLS listener (--tls-cert) (%llu TLS failures so far)",
				    (unsigned long long)s->stats.tls_failed);
			srv_conn_failed(s, c);
			return;
		}
		c->tls_checked = n > 0; /* EOF or an error: the handshake says so below */
	}
	int rc = stream_handshake(&c->st);
	if (rc == -EAGAIN) {
		srv_conn_update_events(s, c);
		return;
	}
	if (rc < 0) {
		s->stats.tls_failed++;
		s->stats.closed_bad++;
		log_error("%s: %s; closing the connection (%llu TLS failures so far)", c->ing.peer,
			  stream_error(&c->st, rc), (unsigned long long)s->stats.tls_failed);
		srv_conn_closing(s, c);
		return;
	}
	char d[96];
	log_info("%s: TLS established (%s)", c->ing.peer, tls_describe(c->st.tls, d, sizeof(d)));
	srv_conn_update_events(s, c);
	if (s->token)
		srv_send_challenge(s, c);
	if (!c->closing)
		srv_conn_read(s, c, READ_BUDGET); /* a Hello may already sit in the library's buffer */
}

/* TLS input the library holds decrypted (the read budget stopped before it
 * was taken): epoll does not report it, so it is read here. */
bool srv_tls_input_pending(const struct server *s)
{
	for (const struct conn *c = s->conns; c && s->tls; c = c->next)
		if (!c->closing && !c->throttled && stream_pending(&c->st))
			return true;
	return false;
}

void srv_read_tls_pending(struct server *s)
{
	for (struct conn *c = s->conns; c && s->tls; c = c->next)
		if (!c->closing && !c->throttled && stream_pending(&c->st))
			srv_conn_read(s, c, READ_BUDGET);
}
