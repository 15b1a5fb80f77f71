/* The attacks of issue #25 at full size against a real collector on loopback
 * (tests/lib/attack.h), one scenario per run; the collector is BIN/collector, so
 * the same run can measure two builds side by side (scripts/bench-attacks.sh).
 * Each prints one line of key=value figures.
 *   attacks http BIN WINDOWS CLIENTS SECONDS
 *     a session of WINDOWS trace windows of 10,000 instructions (written into the
 *     store as agent trace uploads them); one page alone (the analysis' cost); then
 *     CLIENTS clients request /session/N in a loop for SECONDS while the session's
 *     agent adds a record every 200 ms (so its analysis is redone), and a new agent
 *     sends a Hello every 200 ms: its Hello -> Ack latency, vs with no page load.
 *   attacks squat BIN N
 *     N Hellos with distinct agent ids and no record from 127.0.0.1 (--max-conns N),
 *     then a real agent (another id) tries 5 times in 5 s to send 21 records: how
 *     many are acked; the session rows the Hellos left.
 *   attacks memory BIN N FRAME_KB
 *     N connections (4 addresses; --max-conns N + 64, --sync normal, --idle-timeout 0) each send a
 *     Hello, a record and all but 1 KiB of a FRAME_KB frame: the collector's peak
 *     resident memory 3 s later; then an agent beside them sends 21 records.
 *   attacks flood BIN SECONDS
 *     3 threads open silent connections from 127.0.0.2-4 as fast as they can for
 *     SECONDS; a new agent from 127.0.0.1 sends a Hello every 100 ms: how many get
 *     their Ack, and how fast. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "attack.h"
#include "log.h"
#include "loadgen.h"
#include "net.h"
#include "report_fixture.h"
#include "store/store.h"
#include "testproc.h"

static const char *const src4[] = {"127.0.0.2", "127.0.0.3", "127.0.0.4", "127.0.0.5"};

struct world {
	char dir[256], db[300], log[300];
	pid_t collector;
	int port, http_port;
};

static int start(struct world *w, const char *tag)
{
	if (tp_tmpdir(w->dir, sizeof(w->dir), tag) < 0)
		return -1;
	snprintf(w->db, sizeof(w->db), "%s/profile.db", w->dir);
	snprintf(w->log, sizeof(w->log), "%s/collector.log", w->dir);
	return 0;
}

static int run_collector(struct world *w, const char *const *extra)
{
	w->collector = tp_start_collector_args(w->dir, w->db, 0, &w->port, w->log, extra);
	return w->collector > 0 ? 0 : -1;
}

static void finish(struct world *w)
{
	if (w->collector > 0)
		tp_stop(w->collector, 10000);
	if (!getenv("PROF_KEEP_TMP"))
		tp_rm_rf(w->dir);
	else
		fprintf(stderr, "kept %s\n", w->dir);
}

static int bench_http(unsigned windows, unsigned clients, double seconds)
{
	struct world w = {0};
	if (start(&w, "bench-http") < 0)
		return 1;
	struct store *st;
	int64_t sid;
	if (store_open(w.db, 0, &st) < 0 || rf_make_trace_session(st, "big", windows, 10000, &sid) < 0)
		return 1;
	store_close(st);
	w.http_port = tp_free_port();
	char http[64], path[64], why[256], id[48];
	snprintf(http, sizeof(http), "127.0.0.1:%d", w.http_port);
	const char *extra[] = {"--http", http, "--http-timeout", "60", NULL};
	if (run_collector(&w, extra) < 0)
		return 1;
	snprintf(path, sizeof(path), "/session/%lld", (long long)sid);
	/* with no page load */
	double idle[20];
	size_t nidle = 0;
	for (int i = 0; i < 20; i++) {
		snprintf(id, sizeof(id), "idle-%d", i);
		double t = atk_hello_ack(NULL, w.port, id, 1, 30000, why, sizeof(why), NULL);
		if (t >= 0)
			idle[nidle++] = t;
	}
	uint64_t t0 = clock_mono_ns();
	int code = atk_http_get(w.http_port, path, 600000, NULL, 0);
	double page_ms = (double)(clock_mono_ns() - t0) / 1e6;
	int live = -1;
	if (code != 200 || atk_hello_ack(NULL, w.port, "big", 1, 30000, why, sizeof(why), &live) < 0) {
		fprintf(stderr, "attacks http: page %d, live agent: %s\n", code, why);
		finish(&w);
		return 1;
	}
	struct atk_http_load load;
	if (atk_http_load_start(&load, w.http_port, path, clients) < 0)
		return 1;
	size_t cap = (size_t)(seconds * 5) + 8, n = 0, tries = 0;
	double *ms = calloc(cap, sizeof(*ms));
	uint64_t end = clock_mono_ns() + (uint64_t)(seconds * 1e9), seq = (uint64_t)windows + 1;
	while (clock_mono_ns() < end && tries < cap) {
		atk_send_records(live, seq, seq, 60000); /* waits for its ack: it goes through the loop too */
		seq++;
		snprintf(id, sizeof(id), "new-%zu", tries++);
		double t = atk_hello_ack(NULL, w.port, id, 1, 60000, why, sizeof(why), NULL);
		if (t >= 0)
			ms[n++] = t;
		tp_sleep_ms(200);
	}
	atk_http_load_stop(&load);
	close(live);
	printf("instructions=%u page_alone_ms=%.0f clients=%u pages=%llu pages_ok=%llu page_p50_ms=%.0f "
	       "ack_idle_p50_ms=%.2f hellos=%zu acked=%zu ack_p50_ms=%.2f ack_p95_ms=%.2f ack_max_ms=%.2f\n",
	       windows * 9999u, page_ms, clients, load.requests, load.ok, atk_quantile(load.ms, load.nms, 0.5),
	       atk_quantile(idle, nidle, 0.5), tries, n, atk_quantile(ms, n, 0.5), atk_quantile(ms, n, 0.95),
	       atk_quantile(ms, n, 1));
	atk_http_load_free(&load);
	free(ms);
	finish(&w);
	return 0;
}

static int bench_squat(unsigned n)
{
	struct world w = {0};
	char conns[16], id[48], why[256];
	snprintf(conns, sizeof(conns), "%u", n);
	const char *extra[] = {"--max-conns", conns, NULL};
	if (start(&w, "bench-squat") < 0 || run_collector(&w, extra) < 0)
		return 1;
	int *fd = calloc(n, sizeof(*fd));
	unsigned acked = 0;
	for (unsigned i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "squatter-%u", i);
		if (atk_hello_ack("127.0.0.1", w.port, id, 1, 5000, why, sizeof(why), &fd[i]) >= 0)
			acked++;
	}
	tp_sleep_ms(300);
	int real = -1, attempts = 0;
	uint64_t t0 = clock_mono_ns();
	while (real < 0 && attempts < 5) {
		attempts++;
		if (atk_hello_ack("127.0.0.1", w.port, "real-agent", 1, 1000, why, sizeof(why), &real) < 0)
			tp_sleep_ms(1000);
	}
	int records = real >= 0 && atk_send_records(real, 1, 21, 5000) == 0 ? 21 : 0;
	double admit_ms = (double)(clock_mono_ns() - t0) / 1e6;
	if (real >= 0)
		close(real);
	for (unsigned i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(fd);
	tp_sleep_ms(300);
	tp_stop(w.collector, 10000);
	w.collector = 0;
	long long rows = (long long)tp_db_int(w.db, "SELECT COUNT(*) FROM sessions");
	long long empty = (long long)tp_db_int(w.db, "SELECT COUNT(*) FROM sessions WHERE records = 0");
	printf("hellos=%u hellos_acked=%u real_attempts=%d real_acked=%d/21 real_ms=%.0f session_rows=%lld "
	       "empty_rows=%lld last_refusal=\"%.80s\"\n",
	       n, acked, attempts, records, admit_ms, rows, empty, records ? "-" : why);
	finish(&w);
	return 0;
}

static int bench_memory(unsigned n, unsigned frame_kb)
{
	struct world w = {0};
	char conns[16], id[48], why[256];
	snprintf(conns, sizeof(conns), "%u", n + 64);
	/* no fsync per holder's record; no idle close of the first holders while the last connect */
	const char *extra[] = {"--max-conns", conns, "--sync", "normal", "--idle-timeout", "0", NULL};
	if (loadgen_raise_nofile((long)n + 256) < (long)n + 64)
		return 1;
	if (start(&w, "bench-mem") < 0 || run_collector(&w, extra) < 0)
		return 1;
	tp_sleep_ms(200);
	long base = tp_peak_rss_kib(w.collector);
	int *fd = calloc(n, sizeof(*fd));
	size_t sent = 0;
	unsigned holding = 0;
	uint64_t t0 = clock_mono_ns();
	for (unsigned i = 0; i < n; i++) {
		snprintf(id, sizeof(id), "holder-%u", i);
		fd[i] = -1;
		if (atk_hello_ack(src4[i % 4], w.port, id, 1, 5000, why, sizeof(why), &fd[i]) < 0 ||
		    atk_send_records(fd[i], 1, 1, 5000) < 0)
			continue;
		sent += atk_partial_frame(fd[i], 2, (size_t)frame_kb * 1024u, 1024);
		holding++;
	}
	tp_sleep_ms(3000); /* what it will read of them, it has */
	long peak = tp_peak_rss_kib(w.collector);
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	/* an agent beside them */
	int real = -1, ok = 0;
	if (atk_hello_ack("127.0.0.1", w.port, "beside", 1, 5000, why, sizeof(why), &real) >= 0)
		ok = atk_send_records(real, 1, 21, 5000) == 0;
	if (real >= 0)
		close(real);
	for (unsigned i = 0; i < n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(fd);
	printf("connections=%u holding=%u sent_mib=%zu seconds=%.1f rss_before_mib=%.1f rss_peak_mib=%.1f "
	       "agent_beside_acked=%s\n",
	       n, holding, sent >> 20, secs, base / 1024.0, peak / 1024.0, ok ? "21/21" : "no");
	finish(&w);
	return 0;
}

static int bench_flood(double seconds)
{
	struct world w = {0};
	char why[256] = "", last[256] = "-", id[48];
	if (loadgen_raise_nofile(8192) < 4096)
		return 1;
	if (start(&w, "bench-flood") < 0 || run_collector(&w, NULL) < 0)
		return 1;
	struct atk_flood fl;
	if (atk_flood_start(&fl, w.port, src4, 3, 2000, 1000) < 0)
		return 1;
	uint64_t t0 = clock_mono_ns();
	tp_sleep_ms(500);
	size_t cap = (size_t)(seconds * 10) + 8, n = 0, probes = 0;
	double *ms = calloc(cap, sizeof(*ms));
	uint64_t end = t0 + (uint64_t)(seconds * 1e9);
	while (clock_mono_ns() < end && probes < cap) {
		snprintf(id, sizeof(id), "probe-%zu", probes++);
		double t = atk_hello_ack("127.0.0.1", w.port, id, 1, 3000, why, sizeof(why), NULL);
		if (t >= 0)
			ms[n++] = t;
		else
			snprintf(last, sizeof(last), "%s", why);
		tp_sleep_ms(100);
	}
	unsigned long long opened = atk_flood_stop(&fl);
	double secs = (double)(clock_mono_ns() - t0) / 1e9;
	printf("flood_conns=%llu seconds=%.1f conns_per_s=%.0f probes=%zu admitted=%zu refused_pct=%.1f "
	       "ack_p50_ms=%.2f ack_max_ms=%.2f last_refusal=\"%.80s\"\n",
	       opened, secs, (double)opened / secs, probes, n, probes ? 100.0 * (double)(probes - n) / (double)probes : 0,
	       atk_quantile(ms, n, 0.5), atk_quantile(ms, n, 1), last);
	free(ms);
	finish(&w);
	return 0;
}

int main(int argc, char **argv)
{
	log_init("attacks", LOG_LEVEL_WARN);
	signal(SIGPIPE, SIG_IGN);
	if (argc < 3) {
		fputs("usage: attacks http|squat|memory|flood BIN_DIR ARGS... (see bench/attacks.c)\n", stderr);
		return 2;
	}
	setenv("PROF_BIN_DIR", argv[2], 1);
	const char *s = argv[1];
	if (strcmp(s, "http") == 0 && argc == 6)
		return bench_http((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]), atof(argv[5]));
	if (strcmp(s, "squat") == 0 && argc == 4)
		return bench_squat((unsigned)atoi(argv[3]));
	if (strcmp(s, "memory") == 0 && argc == 5)
		return bench_memory((unsigned)atoi(argv[3]), (unsigned)atoi(argv[4]));
	if (strcmp(s, "flood") == 0 && argc == 4)
		return bench_flood(atof(argv[3]));
	fputs("usage: attacks http BIN WINDOWS CLIENTS SECONDS | squat BIN N | memory BIN N FRAME_KB | flood BIN "
	      "SECONDS\n",
	      stderr);
	return 2;
}
