/* Store write benchmark, below the network: AGENTS sessions, each gets
 * RECORDS Counters records (ROWS rows x 4 events, events declared in the
 * first record), written through store_put_record in batches of BATCH
 * records per COMMIT, round robin over the sessions like the collector's
 * batch loop. Then the same records again (replay: all duplicates).
 * Prints one line per phase: back end, records, seconds, records/s.
 * Usage: store STORE|pg AGENTS RECORDS ROWS BATCH
 *   STORE: an SQLite path or a postgresql:// URI; "pg" starts a throwaway
 *   PostgreSQL server (tests/lib/pgserver) for the run. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "log.h"
#include "pgserver.h"
#include "store/store.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int put_counters(struct store *s, int64_t sid, uint64_t seq, int rows, int declare)
{
	enum { EVENTS = 4 };
	static const char *names[EVENTS] = {"task-clock", "page-faults", "context-switches", "cpu-migrations"};
	Prof__EventDesc d[EVENTS], *dp[EVENTS];
	uint32_t ids[EVENTS];
	uint64_t t[64], v[64 * EVENTS];
	for (int e = 0; e < EVENTS; e++) {
		prof__event_desc__init(&d[e]);
		d[e].id = ids[e] = (uint32_t)e + 1;
		d[e].name = (char *)names[e];
		dp[e] = &d[e];
	}
	for (int r = 0; r < rows; r++) {
		t[r] = r == 0 ? seq * 10000000ull : 10000000ull / (unsigned)rows;
		for (int e = 0; e < EVENTS; e++)
			v[r * EVENTS + e] = seq * 1000u + (uint64_t)(r * EVENTS + e);
	}
	Prof__Counters c = PROF__COUNTERS__INIT;
	c.n_new_events = declare ? EVENTS : 0;
	c.new_events = dp;
	c.n_event_ids = EVENTS;
	c.event_ids = ids;
	c.n_t_ns = (size_t)rows;
	c.t_ns = t;
	c.n_values = (size_t)rows * EVENTS;
	c.values = v;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_COUNTERS;
	env.counters = &c;
	return store_put_record(s, sid, &env, 60);
}

/* One pass over every (session, seq); returns records stored or -errno. */
static long pass(struct store *s, const int64_t *sids, int agents, int records, int rows, int batch)
{
	long stored = 0;
	int inbatch = 0;
	for (int k = 1; k <= records; k++)
		for (int a = 0; a < agents; a++) {
			int rc = put_counters(s, sids[a], (uint64_t)k, rows, k == 1);
			if (rc < 0)
				return rc;
			stored += rc;
			if (++inbatch == batch) {
				if ((rc = store_commit(s)) < 0)
					return rc;
				inbatch = 0;
			}
		}
	int rc = store_commit(s);
	return rc < 0 ? rc : stored;
}

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: %s STORE|pg AGENTS RECORDS ROWS BATCH\n", argv[0]);
		return 2;
	}
	log_init("bench-store", LOG_LEVEL_WARN);
	int agents = atoi(argv[2]), records = atoi(argv[3]), rows = atoi(argv[4]), batch = atoi(argv[5]);
	if (agents < 1 || agents > 10000 || records < 1 || rows < 1 || rows > 64 || batch < 1) {
		fprintf(stderr, "AGENTS 1..10000, RECORDS >= 1, ROWS 1..64, BATCH >= 1\n");
		return 2;
	}
	struct pgserver pg = {0};
	char uri[512];
	snprintf(uri, sizeof(uri), "%s", argv[1]);
	if (strcmp(argv[1], "pg") == 0) {
		char why[512];
		if (pg_start(&pg, why, sizeof(why)) < 0 || pg_new_db(&pg, "bench", uri, sizeof(uri)) < 0) {
			fprintf(stderr, "cannot start PostgreSQL: %s\n", why);
			pg_stop(&pg);
			return 1;
		}
	}
	struct store *s = NULL;
	int64_t *sids = calloc((size_t)agents, sizeof(*sids));
	int rc = sids ? store_open(uri, 0, &s) : -ENOMEM;
	for (int a = 0; rc == 0 && a < agents; a++) {
		char id[32];
		snprintf(id, sizeof(id), "bench-%d", a);
		Prof__Hello h = PROF__HELLO__INIT;
		h.schema_version = 1;
		h.agent_id = id;
		h.boot_id = 1;
		uint64_t max = 0;
		rc = store_session_open(s, &h, "127.0.0.1:1", &sids[a], &max, NULL);
	}
	if (rc == 0)
		rc = store_commit(s);
	const char *backend = strncmp(uri, "postgres", 8) == 0 ? "postgresql" : "sqlite";
	for (int phase = 0; rc == 0 && phase < 2; phase++) {
		double t0 = now_s();
		long n = pass(s, sids, agents, records, rows, batch);
		double dt = now_s() - t0;
		if (n < 0) {
			rc = (int)n;
			break;
		}
		long total = (long)agents * records;
		printf("%s %s: agents %d, records %ld (stored %ld), rows/record %d, batch %d: %.3f s, %.0f records/s\n",
		       backend, phase ? "replay (all duplicates)" : "new records", agents, total, n, rows, batch, dt,
		       (double)total / dt);
	}
	if (rc < 0)
		fprintf(stderr, "bench-store: %s\n", strerror(-rc));
	store_close(s);
	free(sids);
	pg_stop(&pg);
	return rc < 0 ? 1 : 0;
}
