/* collector prune --store PATH --older-than DURATION [--agent ID]
 * collector prune --store PATH --session N[,M...]
 * Retention by hand (store_prune.h): old samples and sessions, or whole
 * sessions. A session whose agent was seen in the last PRUNE_LIVE_GRACE_S
 * seconds counts as being written: it only loses old rows, and --session
 * refuses it. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"
#include "log.h"
#include "query/query.h"
#include "store/db.h"
#include "store/store_prune.h"

#define PRUNE_LIVE_GRACE_S 120 /* 12 agent heartbeats */

static const char prune_usage[] =
	"usage: collector prune --store PATH --older-than DURATION [--agent ID] [--live-grace S] [--check MODE]\n"
	"       collector prune --store PATH --session N[,M...] [--live-grace S]\n"
	"  --older-than D  delete samples older than D (30m, 12h, 7d, 2w: CPU samples and their intervals,\n"
	"                  task times, counter samples, trace windows), and whole sessions last seen\n"
	"                  before then; calibration sessions stay (later reports use them)\n"
	"  --agent ID      only that agent's sessions\n"
	"  --session LIST  delete these sessions whole\n"
	"  --live-grace S  a session whose agent was seen in the last S seconds (default 120) is being\n"
	"                  written: it only loses old rows, and --session refuses it (0: none is)\n"
	"  --check MODE    full, quick (default) or off: the store's check before writing\n"
	"On SQLite the freed pages are reused by new samples (the file does not shrink; VACUUM it\n"
	"while no collector runs to shrink it).\n";

static int delete_sessions(struct store *st, const struct query_opts *qo, int64_t grace_s)
{
	int64_t now_s = (int64_t)time(NULL);
	int bad = 0;
	for (size_t i = 0; i < qo->f.nsessions; i++) {
		int64_t sid = qo->f.sessions[i];
		int64_t last = 0;
		uint64_t records;
		int rc = store_session_records(st, sid, &records);
		if (rc == -ENOENT) {
			log_error("prune: no session %lld in the store (list them with collector sessions)", (long long)sid);
			bad = 1;
			continue;
		}
		if (rc < 0)
			return 1;
		rc = store_session_last_seen(st, sid, &last);
		if (rc < 0)
			return 1;
		if (grace_s && last >= now_s - grace_s) {
			log_error("prune: session %lld was seen %lld s ago: it is being written, not deleted (stop its "
				  "agent, or wait)",
				  (long long)sid, (long long)(now_s - last));
			bad = 1;
			continue;
		}
		uint64_t rows = 0;
		rc = store_delete_session(st, sid, &rows);
		if (rc < 0) {
			log_error("prune: cannot delete session %lld: %s", (long long)sid, strerror(-rc));
			return 1;
		}
		printf("deleted session %lld (%llu rows)\n", (long long)sid, (unsigned long long)rows);
	}
	return bad;
}

int cli_prune(int argc, char **argv)
{
	static const struct option opts[] = {{"store", required_argument, NULL, 's'},
					     {"older-than", required_argument, NULL, 'o'},
					     {"check", required_argument, NULL, 'K'},
					     {"help", no_argument, NULL, 'h'},
					     {"agent", required_argument, NULL, QUERY_OPT_AGENT},
					     {"session", required_argument, NULL, QUERY_OPT_SESSION},
					     {"live-grace", required_argument, NULL, 'g'},
					     {NULL, 0, NULL, 0}};
	const char *path = NULL, *older = NULL;
	long long grace_s = PRUNE_LIVE_GRACE_S;
	unsigned check = CLI_CHECK_DEFAULT;
	struct query_opts qo;
	query_opts_init(&qo, 0);
	char err[256];
	int ch, status = 2;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		int q = query_opt(&qo, ch, optarg, err, sizeof(err));
		if (q < 0) {
			fprintf(stderr, "collector prune: %s\n", err);
			goto out;
		}
		if (q > 0)
			continue;
		switch (ch) {
		case 's': path = optarg; break;
		case 'o': older = optarg; break;
		case 'g': {
			char *end;
			grace_s = strtoll(optarg, &end, 10);
			if (end == optarg || *end || grace_s < 0 || grace_s > 86400 * 365) {
				fprintf(stderr, "collector prune: --live-grace wants seconds (0: none), not '%s'\n", optarg);
				goto out;
			}
			break;
		}
		case 'K':
			if (cli_check_arg("prune", optarg, &check))
				goto out;
			break;
		case 'h': fputs(prune_usage, stdout); status = 0; goto out;
		default: fputs(prune_usage, stderr); goto out;
		}
	}
	int64_t older_ns = 0;
	if (optind != argc || !path || (!older && !qo.f.nsessions) || (older && qo.f.nsessions) ||
	    qo.f.nagents > 1 || (qo.f.nagents && !older)) {
		fprintf(stderr, "collector prune: --store PATH and either --older-than DURATION [--agent ID] or "
				"--session LIST\n%s",
			prune_usage);
		goto out;
	}
	if (older && query_parse_duration(older, &older_ns) < 0) {
		fprintf(stderr, "collector prune: --older-than wants a duration (30m, 12h, 7d, 2w), not '%s'\n", older);
		goto out;
	}
	if (!db_is_pg_uri(path) && access(path, F_OK) != 0) {
		log_error("prune: no store at %s: check the --store path", path);
		status = 1;
		goto out;
	}
	struct store *st;
	status = 1;
	if (store_open(path, check, &st) < 0)
		goto out;
	if (qo.f.nsessions) {
		status = delete_sessions(st, &qo, grace_s);
	} else {
		struct store_prune_opts po = {.before_ns = qo.now_ns - older_ns,
					      .agent_id = qo.f.nagents ? qo.f.agents[0] : NULL,
					      .live_since_s = grace_s ? (int64_t)time(NULL) - grace_s : 0};
		struct store_prune_stats ps;
		int rc = store_prune(st, &po, &ps);
		if (rc < 0) {
			log_error("prune: %s", strerror(-rc));
		} else {
			printf("pruned %llu rows older than %s from %llu sessions; deleted %llu sessions whole; %llu "
			       "sessions being written kept\n",
			       (unsigned long long)ps.rows, older, (unsigned long long)ps.sessions_pruned,
			       (unsigned long long)ps.sessions_deleted, (unsigned long long)ps.sessions_kept_live);
			status = 0;
		}
	}
	store_close(st);
out:
	query_opts_free(&qo);
	return status;
}
