/* A PostgreSQL store that stops answering (issue 31): N simulated agents
 * (tests/lib/loadgen) at R records/s for S seconds against a real collector on
 * a throwaway PostgreSQL server (tests/lib/pgserver); one run healthy, one with
 * the collector's backend stopped (SIGSTOP) for O seconds from 5 s in, one with
 * the collector's INSERT privilege revoked for O seconds from 5 s in. Prints a
 * markdown table: ack latency p50/p99/max, records acked of generated, frames
 * sent per record, connections per agent, and the collector's log lines naming
 * the store (outage, reconnect and error lines). Exit 1 when an acked record is missing from the store.
 * usage: pg_outage [--agents N] [--rate R] [--seconds S] [--outage O] [--plain] [--healthy-only]
 *                  [--sync-normal]
 * --plain: no --store-timeout argument (a collector from before issue 31).
 * PROF_BIN_DIR names the build with the collector. */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "loadgen.h"
#include "log.h"
#include "pgserver.h"
#include "testproc.h"

enum fault { HEALTHY, STOPPED, REVOKED };
static int sync_normal; /* --sync-normal: the collector's --sync normal */
static const char *const fault_name[] = {"healthy", "backend stopped", "INSERT revoked"};

static int backend_pid(const char *uri, const char *db)
{
	char sql[256];
	snprintf(sql, sizeof(sql),
		 "SELECT pid FROM pg_stat_activity WHERE datname = '%s' AND pid <> pg_backend_pid() AND backend_type ="
		 " 'client backend' ORDER BY backend_start LIMIT 1",
		 db);
	return (int)pg_int(uri, sql);
}

static int run(struct pgserver *pg, enum fault f, unsigned agents, unsigned rate, double seconds, double outage,
	       int plain)
{
	static int n;
	char db[32], uri[512], wuri[512], dir[256], clog[320];
	snprintf(db, sizeof(db), "outage%d", n++);
	if (pg_new_db(pg, db, uri, sizeof(uri)) < 0 || tp_tmpdir(dir, sizeof(dir), "pgo") < 0)
		return -EIO;
	snprintf(clog, sizeof(clog), "%s/collector.log", dir);
	/* The collector runs as a non-superuser (REVOKE does not bind a superuser). */
	snprintf(wuri, sizeof(wuri), "postgresql://w%s@127.0.0.1:%d/%s", db, pg->port, db);
	char role[128];
	snprintf(role, sizeof(role), "CREATE ROLE w%s LOGIN; GRANT CREATE ON SCHEMA public TO w%s", db, db);
	if (pg_exec(uri, role) < 0)
		return -EIO;
	const char *extra[] = {"--max-rate", "0", "--sync", sync_normal ? "normal" : "full",
			       plain ? NULL : "--store-timeout", "1000", NULL};
	int port;
	pid_t coll = tp_start_collector_args(dir, wuri, 0, &port, clog, extra);
	if (coll < 0) {
		tp_dump_file(clog);
		return -EIO;
	}
	pid_t child = -1;
	if (f != HEALTHY) {
		child = fork();
		if (child == 0) {
			tp_sleep_ms(5000);
			char sql[128];
			int pid = backend_pid(uri, db);
			if (f == STOPPED && pid > 0)
				kill(pid, SIGSTOP);
			snprintf(sql, sizeof(sql), "%s INSERT ON records %s w%s", "REVOKE", "FROM", db);
			if (f == REVOKED)
				pg_exec(uri, sql);
			tp_sleep_ms((int)(outage * 1000));
			if (f == STOPPED && pid > 0)
				kill(pid, SIGCONT);
			snprintf(sql, sizeof(sql), "GRANT INSERT ON records TO w%s", db);
			if (f == REVOKED)
				pg_exec(uri, sql);
			_exit(pid > 0 ? 0 : 1);
		}
	}
	struct loadgen_opts o = {.port = port, .agents = agents, .rate = rate, .seconds = seconds,
				 .drain_s = outage + 30, .prefix = "pgo", .quiet = 1};
	struct loadgen_result r;
	int rc = loadgen_run(&o, &r);
	if (child > 0)
		waitpid(child, NULL, 0);
	tp_stop(coll, 5000);
	int64_t stored = pg_int(uri, "SELECT COUNT(*) FROM records");
	int lost = tp_file_count(clog, "agents are told to retry after"), back = tp_file_count(clog, " back after ");
	int lines = tp_file_count(clog, "store postgresql://");
	printf("| %s | %.1f | %.1f | %.0f | %llu / %llu | %llu | %.2f | %.1f | %d / %d | %d |\n", fault_name[f],
	       r.p50_ms, r.p99_ms, r.max_ms, (unsigned long long)r.acked, (unsigned long long)r.generated,
	       (unsigned long long)stored, r.generated ? (double)r.frames_out / (double)r.generated : 0,
	       agents ? (double)r.connects / agents : 0, lost, back, lines);
	fflush(stdout);
	if (getenv("PG_OUTAGE_LOG"))
		tp_dump_file(clog);
	tp_rm_rf(dir);
	if (rc < 0)
		return rc;
	return (uint64_t)stored < r.acked ? 1 : 0;
}

int main(int argc, char **argv)
{
	log_init("pg_outage", LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	unsigned agents = 6, rate = 20;
	double seconds = 35, outage = 20;
	int plain = 0, healthy_only = 0;
	static const struct option opts[] = {{"healthy-only", no_argument, NULL, 'H'},
					     {"sync-normal", no_argument, NULL, 'N'},{"agents", required_argument, NULL, 'n'},
					     {"rate", required_argument, NULL, 'r'},
					     {"seconds", required_argument, NULL, 's'},
					     {"outage", required_argument, NULL, 'o'},
					     {"plain", no_argument, NULL, 'p'},
					     {NULL, 0, NULL, 0}};
	int ch;
	while ((ch = getopt_long(argc, argv, "", opts, NULL)) != -1) {
		switch (ch) {
		case 'n': agents = (unsigned)atoi(optarg); break;
		case 'r': rate = (unsigned)atoi(optarg); break;
		case 's': seconds = atof(optarg); break;
		case 'o': outage = atof(optarg); break;
		case 'p': plain = 1; break;
		case 'H': healthy_only = 1; break;
		case 'N': sync_normal = 1; break;
		default:
			fprintf(stderr, "usage: pg_outage [--agents N] [--rate R] [--seconds S] [--outage O] [--plain] "
					"[--healthy-only]\n");
			return 2;
		}
	}
	struct pgserver pg;
	char why[512];
	if (pg_start(&pg, why, sizeof(why)) < 0) {
		fprintf(stderr, "pg_outage: %s\n", why);
		return 2;
	}
	printf("%u agents x %u records/s for %.0f s; faults from 5 s in, for %.0f s%s\n\n", agents, rate, seconds,
	       outage, plain ? " (collector without --store-timeout)" : "");
	printf("| run | ack p50 ms | ack p99 ms | ack max ms | acked / generated | stored | frames per record | "
	       "connections per agent | 'unavailable' / 'back' lines | log lines naming the store |\n");
	printf("|---|---|---|---|---|---|---|---|---|---|\n");
	int bad = 0;
	for (int f = HEALTHY; f <= (healthy_only ? HEALTHY : REVOKED); f++)
		bad |= run(&pg, (enum fault)f, agents, rate, seconds, outage, plain) != 0;
	pg_stop(&pg);
	return bad;
}
