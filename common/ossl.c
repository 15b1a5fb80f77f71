/* Lazy OpenSSL (see ossl.h). */
#include "generated/config.h"

#ifdef CONFIG_TLS

#define OSSL_IMPL
#include "ossl.h"

#include <errno.h>
#include <stdbool.h>
#include <stdio.h>

#include <openssl/opensslv.h>

#define OSSL_STR2(x) #x
#define OSSL_STR(x) OSSL_STR2(x)
#define OSSL_SONAME(lib) "lib" lib ".so." OSSL_STR(OPENSSL_VERSION_MAJOR)

struct ossl_crypto_api ossl_crypto;
struct ossl_ssl_api ossl_ssl;

#ifdef CONFIG_STATIC

/* Linked in: the tables hold the functions themselves. */
#define OSSL_ADDR(name) api->name = &name;
int ossl_crypto_load(char *err, size_t errlen)
{
	(void)err, (void)errlen;
	struct ossl_crypto_api *api = &ossl_crypto;
	OSSL_CRYPTO_FUNCS(OSSL_ADDR)
	return 0;
}
int ossl_ssl_load(char *err, size_t errlen)
{
	(void)err, (void)errlen;
	ossl_crypto_load(err, errlen);
	struct ossl_ssl_api *api = &ossl_ssl;
	OSSL_SSL_FUNCS(OSSL_ADDR)
	return 0;
}

#else

#include <dlfcn.h>

static int ossl_open(const char *soname, void **handle, char *err, size_t errlen)
{
	if (*handle)
		return 0;
	*handle = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!*handle) {
		snprintf(err, errlen, "cannot load %s (%s): install Debian's libssl%d", soname, dlerror(),
			 OPENSSL_VERSION_MAJOR);
		return -ELIBACC;
	}
	return 0;
}

#define OSSL_SYM(name)                                                                                       \
	if (rc == 0 && !(*(void **)&api->name = dlsym(handle, #name))) {                                    \
		snprintf(err, errlen, "%s lacks %s: OpenSSL %d.x is needed", soname, #name,                  \
			 OPENSSL_VERSION_MAJOR);                                                               \
		rc = -ELIBACC;                                                                                \
	}

int ossl_crypto_load(char *err, size_t errlen)
{
	static void *handle;
	static bool done;
	if (done)
		return 0;
	const char *soname = OSSL_SONAME("crypto");
	int rc = ossl_open(soname, &handle, err, errlen);
	struct ossl_crypto_api *api = &ossl_crypto;
	OSSL_CRYPTO_FUNCS(OSSL_SYM)
	done = rc == 0;
	return rc;
}

int ossl_ssl_load(char *err, size_t errlen)
{
	static void *handle;
	static bool done;
	if (done)
		return 0;
	int rc = ossl_crypto_load(err, errlen);
	if (rc < 0)
		return rc;
	const char *soname = OSSL_SONAME("ssl");
	rc = ossl_open(soname, &handle, err, errlen);
	struct ossl_ssl_api *api = &ossl_ssl;
	OSSL_SSL_FUNCS(OSSL_SYM)
	done = rc == 0;
	return rc;
}

#endif /* CONFIG_STATIC */

#endif /* CONFIG_TLS */
