/* collector migrate --store PATH: create or migrate the store's schema and exit.
 * Run once as the database owner; collectors started afterwards run no DDL and
 * need only SELECT, INSERT, UPDATE (and USAGE on the sequences) (issue 31). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"
#include "store/store.h"

static const char migrate_usage[] =
	"usage: collector migrate --store PATH\n"
	"  Create the store's tables, or migrate them to this collector's schema version, and exit.\n"
	"  PostgreSQL: run it as the role that owns the tables (it needs CREATE on the schema); the\n"
	"  collectors then connect as a role with SELECT, INSERT, UPDATE on the tables and USAGE on\n"
	"  the sequences: a start with a current schema runs no DDL.\n";

int cli_migrate(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"store", required_argument, NULL, 's'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	const char *path = NULL;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'h': fputs(migrate_usage, stdout); return 0;
		default: fputs(migrate_usage, stderr); return 2;
		}
	}
	if (optind != argc || !path) {
		fprintf(stderr, "collector migrate: --store PATH is required\n%s", migrate_usage);
		return 2;
	}
	struct store *st;
	if (store_open(path, STORE_SYNC_FULL, &st) < 0)
		return 1;
	store_close(st);
	printf("store %s: the schema is current; collectors can now run as a role with SELECT, INSERT, UPDATE\n",
	       path);
	return 0;
}
