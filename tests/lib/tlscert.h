/* Test certificates made with the openssl command line tool (Debian's
 * openssl package) into a test's temp dir. */
#ifndef TESTS_LIB_TLSCERT_H
#define TESTS_LIB_TLSCERT_H

#include <stddef.h>

/* A self-signed P-256 certificate DIR/NAME.pem and key DIR/NAME.key (0600),
 * valid two days, subjectAltName san (e.g. "IP:127.0.0.1,DNS:localhost").
 * The certificate is also its own CA (agent --tls-ca DIR/NAME.pem).
 * Returns 0, or -1 with openssl's output in DIR/openssl.log. */
int tc_make_cert(const char *dir, const char *name, const char *san, char *cert, size_t certlen, char *key,
		 size_t keylen);

#endif
