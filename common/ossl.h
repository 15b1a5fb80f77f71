/* The OpenSSL entry points of common/tls.c (libssl, libcrypto), reached through one table each. Dynamic builds fill the tables on
 * first use with dlopen/dlsym, so a process that never authenticates or
 * speaks TLS never maps OpenSSL (its load-time relocations cost ~1.7 MiB of
 * resident memory: the agent's RSS target is 4 MiB). Static builds fill them
 * with the functions' addresses (static musl cannot dlopen).
 *
 * Include this instead of OpenSSL's headers where OpenSSL is called: the
 * names below become the table's fields, so the code reads as plain OpenSSL.
 * Only with CONFIG_TLS. */
#ifndef COMMON_OSSL_H
#define COMMON_OSSL_H

#include <stddef.h>

#include "generated/config.h"

#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

/* libcrypto */
#define OSSL_CRYPTO_FUNCS(X)                                                                                 \
	X(ERR_clear_error) X(ERR_error_string_n) X(ERR_peek_last_error)                                    \
	 X(ERR_reason_error_string) X(X509_VERIFY_PARAM_set1_ip_asc)                 \
	X(X509_verify_cert_error_string)
/* libssl */
#define OSSL_SSL_FUNCS(X)                                                                                    \
	X(SSL_CIPHER_get_name) X(SSL_CTX_check_private_key) X(SSL_CTX_ctrl) X(SSL_CTX_free)                \
	X(SSL_CTX_load_verify_locations) X(SSL_CTX_new) X(SSL_CTX_set_num_tickets) X(SSL_CTX_set_options)  \
	X(SSL_CTX_set_verify) X(SSL_CTX_use_PrivateKey_file) X(SSL_CTX_use_certificate_chain_file)         \
	X(SSL_ctrl) X(SSL_do_handshake) X(SSL_free) X(SSL_get0_param) X(SSL_get_current_cipher)             \
	X(SSL_get_error) X(SSL_get_verify_result) X(SSL_get_version) X(SSL_has_pending) X(SSL_new)         \
	X(SSL_read_ex) X(SSL_set1_host) X(SSL_set_accept_state) X(SSL_set_connect_state) X(SSL_set_fd)     \
	X(SSL_shutdown) X(SSL_write_ex) X(TLS_client_method) X(TLS_server_method)

#define OSSL_FIELD(name) __typeof__(&name) name;
struct ossl_crypto_api {
	OSSL_CRYPTO_FUNCS(OSSL_FIELD)
};
extern struct ossl_crypto_api ossl_crypto;
struct ossl_ssl_api {
	OSSL_SSL_FUNCS(OSSL_FIELD)
};
extern struct ossl_ssl_api ossl_ssl;
#undef OSSL_FIELD

/* Load libcrypto (ossl_crypto_load) or libssl and libcrypto (ossl_ssl_load)
 * once; 0, or -ELIBACC with the reason and the package to install in err.
 * Not thread-safe: call from the thread that sets up auth/TLS. */
int ossl_crypto_load(char *err, size_t errlen);
int ossl_ssl_load(char *err, size_t errlen);

#ifndef OSSL_IMPL
#define ERR_clear_error (ossl_crypto.ERR_clear_error)
#define ERR_error_string_n (ossl_crypto.ERR_error_string_n)
#define ERR_peek_last_error (ossl_crypto.ERR_peek_last_error)
#define ERR_reason_error_string (ossl_crypto.ERR_reason_error_string)
#define X509_VERIFY_PARAM_set1_ip_asc (ossl_crypto.X509_VERIFY_PARAM_set1_ip_asc)
#define X509_verify_cert_error_string (ossl_crypto.X509_verify_cert_error_string)
#define SSL_CIPHER_get_name (ossl_ssl.SSL_CIPHER_get_name)
#define SSL_CTX_check_private_key (ossl_ssl.SSL_CTX_check_private_key)
#define SSL_CTX_ctrl (ossl_ssl.SSL_CTX_ctrl)
#define SSL_CTX_free (ossl_ssl.SSL_CTX_free)
#define SSL_CTX_load_verify_locations (ossl_ssl.SSL_CTX_load_verify_locations)
#define SSL_CTX_new (ossl_ssl.SSL_CTX_new)
#define SSL_CTX_set_num_tickets (ossl_ssl.SSL_CTX_set_num_tickets)
#define SSL_CTX_set_options (ossl_ssl.SSL_CTX_set_options)
#define SSL_CTX_set_verify (ossl_ssl.SSL_CTX_set_verify)
#define SSL_CTX_use_PrivateKey_file (ossl_ssl.SSL_CTX_use_PrivateKey_file)
#define SSL_CTX_use_certificate_chain_file (ossl_ssl.SSL_CTX_use_certificate_chain_file)
#define SSL_ctrl (ossl_ssl.SSL_ctrl)
#define SSL_do_handshake (ossl_ssl.SSL_do_handshake)
#define SSL_free (ossl_ssl.SSL_free)
#define SSL_get0_param (ossl_ssl.SSL_get0_param)
#define SSL_get_current_cipher (ossl_ssl.SSL_get_current_cipher)
#define SSL_get_error (ossl_ssl.SSL_get_error)
#define SSL_get_verify_result (ossl_ssl.SSL_get_verify_result)
#define SSL_get_version (ossl_ssl.SSL_get_version)
#define SSL_has_pending (ossl_ssl.SSL_has_pending)
#define SSL_new (ossl_ssl.SSL_new)
#define SSL_read_ex (ossl_ssl.SSL_read_ex)
#define SSL_set1_host (ossl_ssl.SSL_set1_host)
#define SSL_set_accept_state (ossl_ssl.SSL_set_accept_state)
#define SSL_set_connect_state (ossl_ssl.SSL_set_connect_state)
#define SSL_set_fd (ossl_ssl.SSL_set_fd)
#define SSL_shutdown (ossl_ssl.SSL_shutdown)
#define SSL_write_ex (ossl_ssl.SSL_write_ex)
#define TLS_client_method (ossl_ssl.TLS_client_method)
#define TLS_server_method (ossl_ssl.TLS_server_method)
#endif

#endif
