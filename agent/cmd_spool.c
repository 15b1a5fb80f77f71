/* agent spool ls|send|drop: what this machine's agents left in their spools
 * (records not yet acknowledged by a collector), sending it, removing it. */
#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli_opts.h"
#include "commands.h"
#include "generated/config.h"
#include "log.h"
#include "loop.h"
#include "net.h"
#include "spool_orphans.h"
#include "spool_scope.h"

static const char spool_usage[] =
	"usage: agent spool ls|drop [--spool DIR | --collector HOST:PORT [--agent-id ID]] [--all] [SESSION]\n"
	"       agent spool send --collector HOST:PORT [--spool DIR] [--agent-id ID] [--token-file F]\n"
	"                        [--tls-ca F] [--timeout S] [SESSION]\n"
	"\n"
	"The spool keeps records until a collector acknowledges them, one directory per agent id\n"
	"and collector (" DEFAULT_SPOOL_DIR "/<agent id>@<collector>), one per agent run inside.\n"
	"A run that ends with records unacknowledged leaves its session there (and exits 1); the\n"
	"next run of the same agent id and collector sends it, in its own session, each record once.\n"
	"  ls     list the spooled sessions (state, segments, bytes, age) of one spool, or of every\n"
	"         spool under " DEFAULT_SPOOL_DIR " without --spool/--collector\n"
	"  send   send the sessions that ended runs left (or only SESSION) to the collector now;\n"
	"         exit 0 once every record is acknowledged, 1 if some are left (--timeout, default 60 s)\n"
	"  drop   remove the sessions of one spool (or only SESSION); --all: of every spool\n"
	"  --spool DIR            the spool given to the agent with --spool\n"
	"  --collector HOST:PORT  the default spool of this collector (and --agent-id, default hostname)\n";

/* agent spool send: the orphaned sessions of dir to collector, until every one is acked. */
static int send_orphans(const char *dir, const char *collector, const char *agent_id, const char *session,
			const char *token_file, const char *tls_ca, double timeout_s)
{
	struct orphan_opts oo = {.spool_dir = dir, .collector = collector, .agent_id = agent_id, .any_collector = true,
				 .only = session, .tls_ca = tls_ca, .token_file = token_file,
				 .max_frame = (size_t)CONFIG_MAX_FRAME_KB * 1024u};
	struct orphans *o = NULL;
	struct loop *l = NULL;
	char err[512];
	if (orphans_open(&o, &oo, err, sizeof(err)) < 0) {
		log_error("spool send: %s", err);
		return EXIT_AGENT_ERROR;
	}
	if (orphans_pending(o) == 0) {
		printf("nothing to send in %s%s%s (sessions of running agents are theirs to send; a run given "
		       "--spool DIR left its records there: pass the same --spool)\n",
		       dir, session ? " for " : "", session ? session : "");
		orphans_close(o);
		return session ? EXIT_AGENT_ERROR : 0;
	}
	if (loop_create(&l) < 0 || orphans_attach(o, l) < 0) {
		log_error("spool send: out of memory");
		orphans_close(o);
		loop_destroy(l);
		return EXIT_AGENT_ERROR;
	}
	uint64_t end = clock_mono_ns() + (uint64_t)(timeout_s * 1e9);
	while (orphans_pending(o) && !orphans_fatal(o)) {
		uint64_t now = clock_mono_ns();
		if (now >= end || loop_step(l, (int)((end - now + 999999) / 1000000)) < 0)
			break;
	}
	loop_destroy(l);
	unsigned left = orphans_pending(o);
	const struct orphans_stats *st = orphans_get_stats(o);
	printf("sent %llu record(s) of %u session(s) to %s", (unsigned long long)st->records, st->delivered, collector);
	if (st->skipped)
		printf("; %u session(s) skipped (another agent id, or unreadable: see above)", st->skipped);
	printf("\n");
	int fatal = orphans_fatal(o);
	orphans_close(o);
	if (left || fatal) {
		log_error("spool send: %u session(s) not delivered%s: they stay in %s; retry when the collector is "
			  "reachable",
			  left ? left : 1, fatal ? " (the collector refused this agent: see above)" : " within --timeout", dir);
		return EXIT_AGENT_ERROR;
	}
	return 0;
}

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
		{"help", no_argument, NULL, 'h'},	     {"token-file", required_argument, NULL, 't'},
		{"tls-ca", required_argument, NULL, 'T'},    {"timeout", required_argument, NULL, 'w'},
		{NULL, 0, NULL, 0},
	};
	const char *dir = NULL, *collector = NULL, *agent_id = NULL, *token_file = NULL, *tls_ca = NULL;
	double timeout_s = 60;
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
		case 't': token_file = optarg; break;
		case 'T': tls_ca = optarg; break;
		case 'w':
			if (agent_cli_seconds(optarg, 0.001, &timeout_s) < 0) {
				log_error("spool send: --timeout wants seconds from 0.001 to %.0f, not '%s'",
					  AGENT_CLI_MAX_SECONDS, optarg);
				return EXIT_USAGE;
			}
			break;
		case 'h': fputs(spool_usage, stdout); return 0;
		default:
			log_error("spool: unknown option or missing argument: %s (see agent spool --help)", argv[optind - 1]);
			return EXIT_USAGE;
		}
	}
	if (optind >= argc ||
	    (strcmp(argv[optind], "ls") != 0 && strcmp(argv[optind], "drop") != 0 && strcmp(argv[optind], "send") != 0)) {
		log_error("spool: say ls, send or drop (see agent spool --help)");
		return EXIT_USAGE;
	}
	bool drop = strcmp(argv[optind], "drop") == 0, send = strcmp(argv[optind], "send") == 0;
	const char *session = optind + 1 < argc ? argv[optind + 1] : NULL;
	if (optind + 2 < argc || (session && !drop && !send)) {
		log_error("spool: unexpected argument '%s'", argv[argc - 1]);
		return EXIT_USAGE;
	}
	if (send && !collector) {
		log_error("spool send: --collector HOST:PORT is required (where to send the records)");
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
	if (send)
		return send_orphans(dir, collector, agent_id, session, token_file, tls_ca, timeout_s);
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
