/* collector downsample --store PATH --older-than DURATION [--per DURATION]
 * Long retention (#40, query.h: query_downsample): the CPU sample blocks of
 * records older than DURATION merged per window (default a minute) of each
 * session's time, their keys summed: the same totals, a window's resolution. */
#include <getopt.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "query/query.h"
#include "store/db.h"

static const char downsample_usage[] =
	"usage: collector downsample --store PATH --older-than DURATION [--per DURATION] [--check MODE]\n"
	"  --older-than D  the CPU samples of records older than D (30m, 12h, 7d, 2w) ...\n"
	"  --per D         ... summed per window of D of each session's time (default 1m): one block a\n"
	"                  window, its keys summed (totals kept; a time range counts a whole window)\n"
	"  --check MODE    full, quick (default) or off: the store's check before writing\n";

int cli_downsample(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {"older-than", required_argument, NULL, 'o'},
					     {"per", required_argument, NULL, 'p'},
					     {"check", required_argument, NULL, 'K'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *path = NULL, *older = NULL, *per = "1m";
	unsigned check = CLI_CHECK_DEFAULT;
	int ch;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (ch) {
		case 's': path = optarg; break;
		case 'o': older = optarg; break;
		case 'p': per = optarg; break;
		case 'K':
			if (cli_check_arg("downsample", optarg, &check))
				return 2;
			break;
		case 'h': fputs(downsample_usage, stdout); return 0;
		default: fputs(downsample_usage, stderr); return 2;
		}
	}
	int64_t older_ns = 0, per_ns = 0;
	if (optind != argc || !path || !older) {
		fprintf(stderr, "collector downsample: --store PATH and --older-than DURATION\n%s", downsample_usage);
		return 2;
	}
	if (query_parse_duration(older, &older_ns) < 0 || query_parse_duration(per, &per_ns) < 0) {
		fprintf(stderr, "collector downsample: --older-than and --per want durations (30s, 1m, 7d), not '%s'\n",
			query_parse_duration(older, &older_ns) < 0 ? older : per);
		return 2;
	}
	if (!db_is_pg_uri(path) && access(path, F_OK) != 0) {
		log_error("downsample: no store at %s: check the --store path", path);
		return 1;
	}
	struct store *st;
	if (store_open(path, check, &st) < 0)
		return 1;
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	int64_t now_ns = (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
	struct query_downsample_stats ds;
	int rc = query_downsample(st, now_ns - older_ns, per_ns, &ds);
	store_close(st);
	if (rc < 0) {
		log_error("downsample: %s", strerror(-rc));
		return 1;
	}
	printf("downsampled %llu sample blocks older than %s into %llu (one per %s) in %llu sessions; %llu "
	       "sessions with an older collector's rows left as they are\n",
	       (unsigned long long)ds.blocks_in, older, (unsigned long long)ds.blocks_out, per,
	       (unsigned long long)ds.sessions, (unsigned long long)ds.sessions_left);
	return 0;
}
