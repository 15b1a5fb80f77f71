/* common/tls + common/stream over a non-blocking socketpair: handshake and a
 * 1 MiB transfer driven only by the want-events (partial writes, input the
 * library buffers), certificate and protocol failures. Certificates come from
 * the openssl tool (tests/lib/tlscert). */
#include <errno.h>
#include <poll.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cmocka.h>

#include "stream.h"
#include "testproc.h"
#include "tls.h"
#include "tlscert.h"

struct fx {
	char dir[256], cert[300], key[300], other[300], other_key[300];
	struct tls_ctx *srv, *cli, *cli_wrong;
	struct stream a, b; /* a: client side, b: server side */
};

static int setup(void **state)
{
	if (!tls_available())
		return 0;
	struct fx *f = calloc(1, sizeof(*f));
	char err[512];
	if (!f || tp_tmpdir(f->dir, sizeof(f->dir), "tlsunit") < 0 ||
	    tc_make_cert(f->dir, "srv", "IP:127.0.0.1", f->cert, sizeof(f->cert), f->key, sizeof(f->key)) < 0 ||
	    tc_make_cert(f->dir, "other", "IP:127.0.0.1", f->other, sizeof(f->other), f->other_key,
			 sizeof(f->other_key)) < 0 ||
	    tls_ctx_server(&f->srv, f->cert, f->key, err, sizeof(err)) < 0 ||
	    tls_ctx_client(&f->cli, f->cert, err, sizeof(err)) < 0 ||
	    tls_ctx_client(&f->cli_wrong, f->other, err, sizeof(err)) < 0)
		return -1;
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		return -1;
	stream_init(&f->a, sv[0]);
	stream_init(&f->b, sv[1]);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fx *f = *state;
	if (!f)
		return 0;
	stream_close(&f->a);
	stream_close(&f->b);
	tls_ctx_free(f->srv);
	tls_ctx_free(f->cli);
	tls_ctx_free(f->cli_wrong);
	tp_rm_rf(f->dir);
	free(f);
	return 0;
}

#define SKIP_WITHOUT_TLS()                                                                                   \
	do {                                                                                                 \
		if (!tls_available())                                                                        \
			skip();                                                                              \
	} while (0)

/* Wait (bounded) until one of the two streams can go on with events ea / eb. */
static void wait_either(struct stream *a, short ea, struct stream *b, short eb)
{
	struct pollfd p[2] = {{.fd = a->fd, .events = ea}, {.fd = b->fd, .events = eb}};
	assert_true(poll(p, 2, 5000) > 0);
}

/* Both handshakes to the end (or a's failure); returns a's result. */
static int handshake_both(struct stream *a, struct stream *b, int *rb)
{
	int ra = -EAGAIN;
	*rb = -EAGAIN;
	for (int i = 0; i < 200 && (ra == -EAGAIN || *rb == -EAGAIN); i++) {
		if (ra == -EAGAIN)
			ra = stream_handshake(a);
		if (*rb == -EAGAIN)
			*rb = stream_handshake(b);
		if (ra == -EAGAIN || *rb == -EAGAIN)
			wait_either(a, ra == -EAGAIN ? stream_events(a, true, false) : 0, b,
				    *rb == -EAGAIN ? stream_events(b, true, false) : 0);
		if (ra < 0 && ra != -EAGAIN)
			break;
	}
	return ra;
}

static void test_tls_handshake_and_1mib_transfer(void **state)
{
	SKIP_WITHOUT_TLS();
	struct fx *f = *state;
	assert_int_equal(stream_start_tls(&f->a, f->cli, "127.0.0.1"), 0);
	assert_int_equal(stream_start_tls(&f->b, f->srv, NULL), 0);
	int rb;
	assert_int_equal(handshake_both(&f->a, &f->b, &rb), 0);
	assert_int_equal(rb, 0);
	char d[96];
	assert_non_null(strstr(tls_describe(f->a.tls, d, sizeof(d)), "TLSv1."));

	size_t total = 1u << 20, sent = 0, got = 0;
	uint8_t *src = malloc(total), *dst = malloc(total);
	assert_non_null(src);
	assert_non_null(dst);
	for (size_t i = 0; i < total; i++)
		src[i] = (uint8_t)(i * 2654435761u >> 13);
	bool saw_pending = false;
	for (int i = 0; i < 100000 && got < total; i++) {
		if (sent < total) {
			ssize_t n = stream_write(&f->a, src + sent, total - sent);
			assert_true(n > 0 || n == -EAGAIN);
			if (n > 0)
				sent += (size_t)n;
		}
		/* small reads: most of a 16 KiB record stays buffered in the library */
		ssize_t n = stream_read(&f->b, dst + got, 1000);
		assert_true(n > 0 || n == -EAGAIN);
		if (n > 0)
			got += (size_t)n;
		if (stream_pending(&f->b)) {
			saw_pending = true;
			continue; /* poll would not report these bytes */
		}
		if (n == -EAGAIN)
			wait_either(&f->a, sent < total ? stream_events(&f->a, false, true) : 0, &f->b,
				    stream_events(&f->b, true, false));
	}
	assert_int_equal(got, total);
	assert_memory_equal(src, dst, total);
	assert_true(saw_pending);
	free(src);
	free(dst);

	/* a clean close reads as end of stream */
	stream_close(&f->a);
	uint8_t tail[16];
	ssize_t n = -EAGAIN;
	for (int i = 0; i < 100 && (n = stream_read(&f->b, tail, sizeof(tail))) == -EAGAIN; i++)
		tp_sleep_ms(10);
	assert_int_equal(n, 0);
}

static void test_tls_wrong_ca_rejected(void **state)
{
	SKIP_WITHOUT_TLS();
	struct fx *f = *state;
	assert_int_equal(stream_start_tls(&f->a, f->cli_wrong, "127.0.0.1"), 0);
	assert_int_equal(stream_start_tls(&f->b, f->srv, NULL), 0);
	int rb;
	int ra = handshake_both(&f->a, &f->b, &rb);
	assert_int_equal(ra, -EKEYREJECTED);
	assert_non_null(strstr(stream_error(&f->a, ra), "certificate verification failed"));
	for (int i = 0; i < 100 && rb == -EAGAIN; i++) {
		tp_sleep_ms(5);
		rb = stream_handshake(&f->b);
	}
	assert_true(rb < 0 && rb != -EAGAIN); /* the server sees the client's alert */
}

static void test_tls_host_mismatch_rejected(void **state)
{
	SKIP_WITHOUT_TLS();
	struct fx *f = *state;
	assert_int_equal(stream_start_tls(&f->a, f->cli, "127.0.0.2"), 0);
	assert_int_equal(stream_start_tls(&f->b, f->srv, NULL), 0);
	int rb;
	int ra = handshake_both(&f->a, &f->b, &rb);
	assert_int_equal(ra, -EKEYREJECTED);
	assert_non_null(strstr(stream_error(&f->a, ra), "IP address mismatch"));
}

static void test_tls_plaintext_peer_is_protocol_error(void **state)
{
	SKIP_WITHOUT_TLS();
	struct fx *f = *state;
	assert_int_equal(stream_start_tls(&f->b, f->srv, NULL), 0);
	const uint8_t frame[] = {0x40, 0x08, 0x01, 0x12, 0x05, 'h', 'e', 'l', 'l', 'o'};
	assert_int_equal(stream_write(&f->a, frame, sizeof(frame)), (ssize_t)sizeof(frame));
	assert_false(tls_looks_like_client_hello(frame, sizeof(frame)));
	int rb = -EAGAIN;
	for (int i = 0; i < 100 && rb == -EAGAIN; i++) {
		rb = stream_handshake(&f->b);
		if (rb == -EAGAIN)
			tp_sleep_ms(5);
	}
	assert_int_equal(rb, -EPROTO);
	assert_true(strlen(stream_error(&f->b, rb)) > 0);
}

static void test_tls_client_hello_recognised(void **state)
{
	(void)state;
	const uint8_t hello[] = {0x16, 0x03, 0x01, 0x00, 0xf4};
	assert_true(tls_looks_like_client_hello(hello, sizeof(hello)));
	assert_true(tls_looks_like_client_hello(hello, 1));
	const uint8_t not_tls[] = {0x16, 0x08};
	assert_false(tls_looks_like_client_hello(not_tls, sizeof(not_tls)));
	assert_false(tls_looks_like_client_hello(hello, 0));
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_tls_handshake_and_1mib_transfer, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_wrong_ca_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_host_mismatch_rejected, setup, teardown),
		cmocka_unit_test_setup_teardown(test_tls_plaintext_peer_is_protocol_error, setup, teardown),
		cmocka_unit_test(test_tls_client_hello_recognised),
	};
	return cmocka_run_group_tests_name("stream_tls", tests, NULL, NULL);
}
