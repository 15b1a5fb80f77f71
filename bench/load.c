/* Fleet load: N simulated agents (one process, one socket each) at R
 * records/s each for S seconds against a real collector on 127.0.0.1 with a
 * fresh SQLite store. Prints a markdown table: records/s stored, ack latency
 * p50/p99/max, collector peak RSS, and whether every record sent is in the
 * store exactly once. Exit 1 when records were lost.
 * usage: load [--agents N] [--rate R] [--seconds S] [--token-file F] [--keep]
 * (PROF_BIN_DIR names the build with the collector; scripts/bench-load.sh). */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "auth.h"
#include "loadgen.h"
#include "log.h"
#include "testproc.h"

int main(int argc, char **argv)
{
	log_init("load", LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	unsigned agents = 1000, rate = 100;
	double seconds = 60;
	const char *token_file = NULL;
	int keep = 0;
	static const struct option opts[] = {{"agents", required_argument, NULL, 'n'},
					     {"rate", required_argument, NULL, 'r'},
					     {"seconds", required_argument, NULL, 's'},
					     {"token-file", required_argument, NULL, 't'},
					     {"keep", no_argument, NULL, 'k'},
					     {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': agents = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': rate = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 't': token_file = optarg; break;
		case 'k': keep = 1; break;
		default:
			fprintf(stderr, "usage: load [--agents N] [--rate R] [--seconds S] [--token-file F] [--keep]\n");
			return 2;
		}
	}
	if (agents == 0 || agents > 20000 || rate == 0 || seconds <= 0 || seconds > 600) {
		fprintf(stderr, "load: agents 1..20000, rate >= 1, seconds 0..600\n");
		return 2;
	}
	static struct auth_token token;
	if (token_file) {
		char err[256];
		if (auth_token_load(token_file, &token, err, sizeof(err)) < 0) {
			fprintf(stderr, "load: %s\n", err);
			return 2;
		}
	}
	char dir[256], db[300], clog[300], conns[32];
	if (tp_tmpdir(dir, sizeof(dir), "load") < 0) {
		perror("load: mkdtemp");
		return 1;
	}
	snprintf(db, sizeof(db), "%s/load.db", dir);
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	snprintf(conns, sizeof(conns), "%u", agents + 16);
	const char *extra[] = {"--max-conns", conns, "-q", token_file ? "--token-file" : NULL, token_file, NULL};
	loadgen_raise_nofile((long)agents + 256); /* the collector inherits it too */
	int port = 0;
	pid_t coll = tp_start_collector_args(dir, db, 0, &port, clog, extra);
	if (coll < 0) {
		fprintf(stderr, "load: the collector did not start (%s); log in %s\n", strerror((int)-coll), clog);
		return 1;
	}
	struct loadgen_opts o = {.port = port,
				 .agents = agents,
				 .rate = rate,
				 .seconds = seconds,
				 .drain_s = 30,
				 .prefix = "load",
				 .token = token_file ? &token : NULL};
	struct loadgen_result r;
	int rc = loadgen_run(&o, &r);
	long rss = tp_peak_rss_kib(coll);
	int status = tp_stop(coll, 20000);
	if (rc < 0) {
		fprintf(stderr, "load: %s\n", strerror(-rc));
		return 1;
	}
	int64_t stored = tp_db_int(db, "SELECT COUNT(*) FROM records");
	int64_t distinct = tp_db_int(db, "SELECT COUNT(*) FROM (SELECT DISTINCT session_id, seq FROM records)");
	int64_t samples = tp_db_int(db, "SELECT COUNT(*) FROM counter_samples");
	int64_t sessions = tp_db_int(db, "SELECT COUNT(*) FROM sessions");
	int lost = stored != (int64_t)r.generated || distinct != stored || samples != stored;
	printf("| agents | records/s per agent | seconds | records sent | stored | stored records/s | ack p50 | ack p99 "
	       "| ack max | collector peak RSS | reconnects | result |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	printf("| %u (%u connected, %lld sessions) | %u | %.0f | %llu | %lld | %.0f | %.1f ms | %.1f ms | %.1f ms | "
	       "%.1f MiB | %llu | %s |\n",
	       agents, r.agents_connected, (long long)sessions, rate, seconds, (unsigned long long)r.generated,
	       (long long)stored, (double)stored / r.gen_s, r.p50_ms, r.p99_ms, r.max_ms, rss / 1024.0,
	       (unsigned long long)(r.connects > agents ? r.connects - agents : 0),
	       lost ? "**RECORDS LOST OR DUPLICATED**" : "count in store = count sent, no duplicates");
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "load: collector exit status %d (log %s)\n", status, clog);
	if (keep || lost)
		fprintf(stderr, "load: kept %s\n", dir);
	else
		tp_rm_rf(dir);
	return lost ? 1 : 0;
}
