/* Fleet load: N simulated agents (one process, one socket each) at R
 * records/s each for S seconds against a real collector on 127.0.0.1 with a
 * fresh SQLite store. Prints a markdown table: records/s stored, ack latency
 * p50/p99/max, collector peak RSS, and whether every record sent is in the
 * store exactly once. Exit 1 when an acked record is missing or a record is
 * stored twice; records never acked (the store could not keep up within the
 * drain) are reported as a capacity shortfall, exit 2.
 * usage: load [--agents N] [--rate R] [--seconds S] [--token-file F] [--keep]
 *             [--pg [--collectors K]]
 * --pg: the store is a throwaway PostgreSQL server (tests/lib/pgserver) and K
 * collectors write it together, agent k talking to collector k % K.
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
#include "pgserver.h"
#include "testproc.h"

#define MAX_COLL 8

int main(int argc, char **argv)
{
	log_init("load", LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	unsigned agents = 1000, rate = 100;
	double seconds = 60;
	const char *token_file = NULL;
	int keep = 0, use_pg = 0;
	unsigned ncoll = 1;
	static const struct option opts[] = {{"agents", required_argument, NULL, 'n'},
					     {"rate", required_argument, NULL, 'r'},
					     {"seconds", required_argument, NULL, 's'},
					     {"token-file", required_argument, NULL, 't'},
					     {"keep", no_argument, NULL, 'k'},
					     {"pg", no_argument, NULL, 'p'},
					     {"collectors", required_argument, NULL, 'c'},
					     {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': agents = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'r': rate = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': seconds = strtod(optarg, NULL); break;
		case 't': token_file = optarg; break;
		case 'k': keep = 1; break;
		case 'p': use_pg = 1; break;
		case 'c': ncoll = (unsigned)strtoul(optarg, NULL, 10); break;
		default:
			fprintf(stderr, "usage: load [--agents N] [--rate R] [--seconds S] [--token-file F] [--keep] "
					"[--pg [--collectors K]]\n");
			return 2;
		}
	}
	if (agents == 0 || agents > 20000 || rate == 0 || seconds <= 0 || seconds > 600 || ncoll == 0 ||
	    ncoll > MAX_COLL || (ncoll > 1 && !use_pg)) {
		fprintf(stderr, "load: agents 1..20000, rate >= 1, seconds 0..600, collectors 1..%d (more than one "
				"needs --pg)\n",
			MAX_COLL);
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
	struct pgserver pg = {0};
	if (use_pg) {
		char why[256];
		if (pg_start(&pg, why, sizeof(why)) < 0 || pg_new_db(&pg, "load", db, sizeof(db)) < 0) {
			fprintf(stderr, "load: no PostgreSQL server: %s\n", why);
			pg_stop(&pg);
			return 1;
		}
	}
	snprintf(conns, sizeof(conns), "%u", agents + 16);
	const char *extra[] = {"--max-conns", conns, "-q", token_file ? "--token-file" : NULL, token_file, NULL};
	loadgen_raise_nofile((long)agents + 256); /* the collector inherits it too */
	pid_t coll[MAX_COLL];
	int ports[MAX_COLL];
	for (unsigned k = 0; k < ncoll; k++) {
		snprintf(clog, sizeof(clog), "%s/collector%u.log", dir, k);
		coll[k] = tp_start_collector_args(dir, db, 0, &ports[k], clog, extra);
		if (coll[k] < 0) {
			fprintf(stderr, "load: collector %u did not start (%s); log in %s\n", k,
				strerror((int)-coll[k]), clog);
			while (k-- > 0)
				tp_stop(coll[k], 5000);
			pg_stop(&pg);
			return 1;
		}
	}
	struct loadgen_opts o = {.ports = ports,
				 .nports = ncoll,
				 .agents = agents,
				 .rate = rate,
				 .seconds = seconds,
				 .drain_s = 30,
				 .prefix = "load",
				 .token = token_file ? &token : NULL};
	struct loadgen_result r;
	int rc = loadgen_run(&o, &r);
	long rss = 0;
	int status = 0;
	for (unsigned k = 0; k < ncoll; k++) {
		long kib = tp_peak_rss_kib(coll[k]);
		rss = kib > rss ? kib : rss;
		int st = tp_stop(coll[k], 20000);
		if (!WIFEXITED(st) || WEXITSTATUS(st) != 0)
			status = st;
	}
	if (rc < 0) {
		fprintf(stderr, "load: %s\n", strerror(-rc));
		pg_stop(&pg);
		return 1;
	}
	static const char *const q[] = {"SELECT COUNT(*) FROM records",
					"SELECT COUNT(*) FROM (SELECT DISTINCT session_id, seq FROM records) AS d",
					"SELECT COUNT(*) FROM counter_samples", "SELECT COUNT(*) FROM sessions"};
	int64_t v[4];
	for (int i = 0; i < 4; i++)
		v[i] = use_pg ? pg_int(db, q[i]) : tp_db_int(db, "%s", q[i]);
	pg_stop(&pg);
	int64_t stored = v[0], distinct = v[1], samples = v[2], sessions = v[3];
	/* acked records must all be there, each once; beyond that, unacked ones are capacity, not loss */
	int lost = distinct != stored || samples != stored || stored < (int64_t)r.acked;
	int behind = !lost && stored != (int64_t)r.generated;
	char verdict[160];
	if (lost)
		snprintf(verdict, sizeof(verdict), "**ACKED RECORDS LOST OR DUPLICATED** (acked %llu)",
			 (unsigned long long)r.acked);
	else if (behind)
		snprintf(verdict, sizeof(verdict),
			 "over capacity: %lld of the records sent not acked by the end of the drain; every acked "
			 "record stored once",
			 (long long)r.generated - (long long)stored);
	else
		snprintf(verdict, sizeof(verdict), "count in store = count sent, no duplicates");
	printf("Store: %s, %u collector(s).\n\n", use_pg ? "PostgreSQL (throwaway server on 127.0.0.1, fsync off)" : "SQLite",
	       ncoll);
	printf("| agents | records/s per agent | seconds | records sent | stored | stored records/s | ack p50 | ack p99 "
	       "| ack max | collector peak RSS | reconnects | result |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
	printf("| %u (%u connected, %lld sessions) | %u | %.0f | %llu | %lld | %.0f | %.1f ms | %.1f ms | %.1f ms | "
	       "%.1f MiB | %llu | %s |\n",
	       agents, r.agents_connected, (long long)sessions, rate, seconds, (unsigned long long)r.generated,
	       (long long)stored, (double)stored / r.gen_s, r.p50_ms, r.p99_ms, r.max_ms, rss / 1024.0,
	       (unsigned long long)(r.connects > agents ? r.connects - agents : 0),
	       verdict);
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		fprintf(stderr, "load: a collector exit status %d (logs in %s)\n", status, dir);
	if (keep || lost || behind)
		fprintf(stderr, "load: kept %s\n", dir);
	else
		tp_rm_rf(dir);
	return lost ? 1 : behind ? 2 : 0;
}
