/* `collector http-key --token-file FILE`: the key that the collector's HTTP
 * pages want on a non-loopback --http address (derived from the token: showing
 * or sending it never shows the token itself; common/auth.h). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include "auth.h"
#include "cli.h"
#include "log.h"

static const char http_key_usage[] =
	"usage: collector http-key --token-file FILE\n"
	"  Print the HTTP key of the collector started with --token-file FILE: its --http pages on a\n"
	"  non-loopback address want it as \"Authorization: Bearer KEY\", or as the password (any user\n"
	"  name) when a browser asks. The key is derived from the token and does not reveal it.\n";

int cli_http_key(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"token-file", required_argument, NULL, 'T'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	const char *path = NULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 'T': path = optarg; break;
		case 'h': fputs(http_key_usage, stdout); return 0;
		default: fputs(http_key_usage, stderr); return 2;
		}
	}
	if (!path || optind != argc) {
		fputs(http_key_usage, stderr);
		return 2;
	}
	static struct auth_token token;
	char err[512], key[AUTH_DERIVED_HEX];
	if (auth_token_load(path, &token, err, sizeof(err)) < 0) {
		log_error("%s", err);
		return 1;
	}
	int rc = auth_derive_hex(&token, AUTH_HTTP_LABEL, key);
	auth_token_wipe(&token);
	if (rc < 0) {
		log_error("cannot derive the HTTP key: %s", strerror(-rc));
		return 1;
	}
	printf("%s\n", key);
	return 0;
}
