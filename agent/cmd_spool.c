/* agent spool ls|drop: what this machine's agents left in their spools
 * (records not yet acknowledged by a collector), and removing it. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opts.h"
#include "commands.h"
#include "log.h"
#include "spool_scope.h"

static const char spool_usage[] =
	"usage: agent spool ls|drop [--spool DIR | --collector HOST:PORT [--agent-id ID]] [--all] [SESSION]\n"
	"\n"
	"The spool keeps records until a collector acknowledges them, one directory per agent id\n"
	"and collector (" DEFAULT_SPOOL_DIR "/<agent id>@<collector>), one per agent run inside.\n"
	"  ls     list the spooled sessions (segments, bytes, age) of one spool, or of every spool\n"
	"         under " DEFAULT_SPOOL_DIR " without --spool/--collector\n"
	"  drop   remove the sessions of one spool (or only SESSION); --all: of every spool\n"
	"  --spool DIR            the spool given to the agent with --spool\n"
	"  --collector HOST:PORT  the default spool of this collector (and --agent-id, default hostname)\n";

/* Every scope directory under the base. */
static int each_scope(bool drop, FILE *out)
{
	DIR *d = opendir(DEFAULT_SPOOL_DIR);
	if (!d) {
		if (errno == ENOENT) {
			fprintf(out, "no spool under %s\n", DEFAULT_SPOOL_DIR);
			return 0;
		}
		log_error("cannot read %s: %s", DEFAULT_SPOOL_DIR, strerror(errno));
		return -errno;
	}
	struct dirent *de;
	int total = 0, scopes = 0;
	while ((de = readdir(d))) {
		char p[PATH_MAX];
		struct stat st;
		if (de->d_name[0] == '.' ||
		    snprintf(p, sizeof(p), "%s/%s", DEFAULT_SPOOL_DIR, de->d_name) >= (int)sizeof(p) || stat(p, &st) < 0 ||
		    !S_ISDIR(st.st_mode))
			continue;
		fprintf(out, "== %s\n", p);
		scopes++;
		int n = drop ? spool_scope_drop(p, NULL, out) : spool_scope_list(p, out);
		if (n > 0)
			total += n;
	}
	closedir(d);
	if (scopes == 0)
		fprintf(out, "no spool under %s\n", DEFAULT_SPOOL_DIR);
	return total;
}

int cmd_spool(int argc, char **argv)
{
	static const struct option opts[] = {
		{"spool", required_argument, NULL, 's'},     {"collector", required_argument, NULL, 'c'},
		{"agent-id", required_argument, NULL, 'i'},  {"all", no_argument, NULL, 'a'},
		{"help", no_argument, NULL, 'h'},	     {NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *collector = NULL, *agent_id = NULL;
	bool all = false;
	int ch;
	optind = 1;
	opterr = 0;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': dir = optarg; break;
		case 'c': collector = optarg; break;
		case 'i': agent_id = optarg; break;
		case 'a': all = true; break;
		case 'h': fputs(spool_usage, stdout); return 0;
		default:
			log_error("spool: unknown option or missing argument: %s (see agent spool --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc || (strcmp(argv[optind], "ls") != 0 && strcmp(argv[optind], "drop") != 0)) {
		log_error("spool: say ls or drop (see agent spool --help)");
		return EXIT_USAGE;
	}
	bool drop = strcmp(argv[optind], "drop") == 0;
	const char *session = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (optind + 2 < argc || (session && !drop)) {
		log_error("spool: unexpected argument '%s'", argv[argc - 1]);
		return EXIT_USAGE;
	}
	char scoped[512];
	if (!dir && collector) {
		if (spool_scope_dir(scoped, sizeof(scoped), DEFAULT_SPOOL_DIR, agent_id, collector) < 0) {
			log_error("spool: path too long");
			return EXIT_USAGE;
		}
		dir = scoped;
	}
	if (!dir) {
		if (drop && !all) {
			log_error("spool drop: name the spool (--spool DIR or --collector HOST:PORT), or --all for every "
				  "spool under %s",
				  DEFAULT_SPOOL_DIR);
			return EXIT_USAGE;
		}
		return each_scope(drop, stdout) < 0 ? EXIT_AGENT_ERROR : 0;
	}
	int n = drop ? spool_scope_drop(dir, session, stdout) : spool_scope_list(dir, stdout);
	if (n == -ENOENT) {
		if (session)
			log_error("spool drop: no session %s in %s (agent spool ls lists them)", session, dir);
		else
			fprintf(stdout, "no spool at %s\n", dir);
		return session ? EXIT_AGENT_ERROR : 0;
	}
	if (n < 0) {
		log_error("spool %s %s: %s", drop ? "drop" : "ls", dir, strerror(-n));
		return EXIT_AGENT_ERROR;
	}
	return 0;
}
