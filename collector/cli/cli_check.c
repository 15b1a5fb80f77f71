/* collector check --store PATH [--quick]: the store's integrity on demand
 * (issue 40: the read commands no longer scan the whole store each time; they
 * check it by themselves only after an unclean shutdown, --check auto). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "cli.h"
#include "store/store.h"

static const char check_usage[] =
    "usage: collector check --store PATH [--quick]\n"
    "  Check the store's integrity and exit: 0 when sound, 1 when damaged (the message says how to\n"
    "  recover it). SQLite: PRAGMA integrity_check over the whole file (--quick: quick_check, stopped\n"
    "  after 5 s); PostgreSQL: whether data checksums are on. Nothing is written into the store.\n";

int cli_check(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {"quick", no_argument, NULL, 'q'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *path = NULL;
	unsigned how = STORE_CHECK_FULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's':
			path = optarg;
			break;
		case 'q':
			how = STORE_CHECK_QUICK;
			break;
		case 'h':
			fputs(check_usage, stdout);
			return 0;
		default:
			fputs(check_usage, stderr);
			return 2;
		}
	}
	if (optind != argc || !path) {
		fprintf(stderr, "collector check: --store PATH is required\n%s", check_usage);
		return 2;
	}
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	struct store *st;
	if (cli_open_store(path, how, &st) < 0)
		return 1;
	store_close(st);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("store %s: no damage found (%s, %.2f s)\n", path,
	       how == STORE_CHECK_FULL ? "integrity_check" : "quick_check",
	       (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
	return 0;
}
