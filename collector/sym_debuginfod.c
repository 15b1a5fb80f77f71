/* The debuginfod fallback of symbols.c: where DEBUGINFOD_URLS names a server,
 * libdebuginfod (elfutils) fetches the debug file of a build-id into its cache
 * and returns its path. Not configured: -ENOENT without a network access. */
#include <errno.h>
#include <elfutils/debuginfod.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "sym_priv.h"

int sym_debuginfod_find(const uint8_t *bid, size_t len, char *path, size_t pathlen)
{
	const char *urls = getenv("DEBUGINFOD_URLS");
	if (!urls || !*urls || !len)
		return -ENOENT;
	debuginfod_client *c = debuginfod_begin();
	if (!c)
		return -ENOMEM;
	char *got = NULL;
	int fd = debuginfod_find_debuginfo(c, bid, (int)len, &got);
	debuginfod_end(c);
	if (fd < 0) {
		char hex[130];
		log_debug("symbols: debuginfod has no debug file for %s: %s", sym_build_id_hex(bid, len, hex, sizeof(hex)),
			  strerror(-fd));
		free(got);
		return fd;
	}
	close(fd);
	int rc = got && strlen(got) < pathlen ? 0 : -ENAMETOOLONG;
	if (rc == 0)
		snprintf(path, pathlen, "%s", got);
	free(got);
	return rc;
}
