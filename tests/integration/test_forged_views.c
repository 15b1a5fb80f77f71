/* Issue #40: one agent must not break the others' views. A store holding the
 * two honest agents of tests/lib/profile_fixture.h, plus sessions written as
 * an older collector stored what forged agents sent, unchecked (the checks at
 * decode now refuse each of them: test_ksyms, test_frame), each a bounded-size
 * version of the case:
 *   forged-ksyms   16 kernel-table chunks whose front-coded names expand from
 *                  1.3 MB to 128 MiB (the 5.3 MB -> 1.16 GB, scaled down);
 *   forged-ktable  12 well-formed 2 MiB chunks: 24 MiB of names, over the table limit;
 *   forged-total   a chunk declaring a table over KSYMS_MAX_TABLE_SYMS;
 *   forged-lost    two records with lost = 2^63-1 (SQLite's SUM(lost) overflowed);
 *   forged-count   keys with count 2^63 (sums wrapped: shares over 100 %);
 *   forged-rows    a session without packed blocks whose rows overflow SUM(count)
 *                  per interval (the series /profile draws): it is left out.
 * `collector report`, `flame` and `diff` over all of them exit 0 with the honest
 * agents' functions and counts, no share over 100 %, each warning said once,
 * and peak RSS under FORGED_RSS_MAX_KIB; `collector sessions` lists them all
 * without an error; the live /profile answers 200 twice
 * (B's CPU line, the flame graph) with one warning per forged subject in the collector's log and its peak RSS
 * under the same bound. A later table of the same (agent, boot) that differs
 * is dropped with one warning, the first kept. Over loopback, each forged
 * kind is refused at decode with an Error naming its limit, nothing stored. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>
#include <sqlite3.h>

#include "block_keys.h"
#include "frame.h"
#include "ksyms.h"
#include "profile_fixture.h"
#include "profiler.pb-c.h"
#include "store/store.h"
#include "testproc.h"
#include "validate.h"

/* Peak RSS of a query command or the live collector over this store, ASan build (its shadow memory and
 * quarantine included): measured 70-76 MiB for report/flame/diff, 103 MiB for the collector after two
 * /profile, 142 MiB after the forged frames too. Before the limits one report loaded the 128 MiB of
 * forged names twice (1.16 GB per report for the 5.3 MB table). */
#define FORGED_RSS_MAX_KIB (256L * 1024)

struct env {
	struct tp_env t;
	struct pf_fixture f;
	char coll[512];
	const char *skip_reason;
	int64_t sid_rows;
};

#define KADDR 0xffffffff81000000ull

/* One Samples record of one key (pid 300 + k, its count), declaring event 1 in the first. */
static int put_samples(struct store *s, int64_t sid, uint64_t seq, int32_t pid, uint64_t ip, uint64_t kip,
		       const uint64_t *counts, size_t nkeys, uint64_t lost)
{
	Prof__EventDesc ev = PROF__EVENT_DESC__INIT, *evp[1] = {&ev};
	ev.id = 1;
	ev.name = "cpu-clock";
	Prof__TaskName tn = PROF__TASK_NAME__INIT, *tnp[1] = {&tn};
	tn.pid = tn.tid = pid;
	tn.comm = tn.thread = "forged";
	Prof__Samples sm = PROF__SAMPLES__INIT;
	int32_t pids[2] = {pid, pid}, tids[2] = {pid, pid};
	uint64_t ips[2] = {ip, ip}, kips[2] = {kip, kip};
	uint32_t stacks[2] = {0, 0};
	sm.backend = 2;
	sm.event_id = 1;
	sm.freq_hz = 99;
	sm.t_ns = seq * 1000000000ull;
	sm.interval_ns = 1000000000ull;
	sm.lost = lost;
	if (seq == 1) {
		sm.n_new_events = 1;
		sm.new_events = evp;
		sm.n_new_tasks = 1;
		sm.new_tasks = tnp;
	}
	sm.n_pid = sm.n_tid = sm.n_ip = sm.n_kip = sm.n_stack_id = sm.n_count = nkeys;
	sm.pid = pids;
	sm.tid = tids;
	sm.ip = ips;
	sm.kip = kips;
	sm.stack_id = stacks;
	sm.count = (uint64_t *)counts;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_SAMPLES;
	env.samples = &sm;
	int rc = store_put_record(s, sid, &env, 200);
	return rc < 0 ? rc : 0;
}

static int64_t forged_session(struct store *s, const char *agent, uint64_t boot, int64_t realtime_s)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = 1;
	h.agent_id = (char *)agent;
	h.boot_id = boot;
	h.board = "forged";
	h.realtime_ns = (uint64_t)realtime_s * 1000000000ull;
	int64_t id = 0;
	uint64_t max_seq = 0;
	bool created = false;
	int rc = store_session_open(s, &h, "127.0.0.1:1", &id, &max_seq, &created);
	return rc < 0 ? rc : id;
}

/* Chunk c of a kernel table: nsyms names of 511 bytes, each sharing 510 with the one before. */
static int put_ksyms_chunk(struct store *s, int64_t sid, uint64_t seq, const char *boot, uint32_t c,
			   uint32_t chunks, uint32_t total, size_t nsyms)
{
	int64_t *d = calloc(nsyms, sizeof(*d));
	uint32_t *sh = calloc(nsyms, sizeof(*sh));
	size_t slen = KSYMS_NAME_MAX + 1 + 2 * (nsyms - 1);
	uint8_t *suf = malloc(slen);
	if (!d || !sh || !suf) {
		free(d);
		free(sh);
		free(suf);
		return -ENOMEM;
	}
	memset(suf, 'k', KSYMS_NAME_MAX);
	suf[KSYMS_NAME_MAX] = 0;
	d[0] = (int64_t)(KADDR + (uint64_t)c * 0x100000);
	for (size_t i = 1; i < nsyms; i++) {
		d[i] = 16;
		sh[i] = KSYMS_NAME_MAX - 1;
		suf[KSYMS_NAME_MAX + 1 + 2 * (i - 1)] = (uint8_t)('a' + i % 26);
		suf[KSYMS_NAME_MAX + 2 + 2 * (i - 1)] = 0;
	}
	Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
	m.kernel_boot_id = (char *)boot;
	m.chunk = c;
	m.chunks = chunks;
	m.total = total;
	m.n_addr_delta = m.n_shared = nsyms;
	m.addr_delta = d;
	m.shared = sh;
	m.suffixes.data = suf;
	m.suffixes.len = slen;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = seq;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = &m;
	int rc = store_put_record(s, sid, &env, 200);
	rc = rc < 0 ? rc : 0;
	free(d);
	free(sh);
	free(suf);
	return rc;
}

/* A forged agent with a kernel table and one kernel sample that makes the query load it. */
static int ksyms_agent(struct store *s, const char *agent, uint64_t boot_n, int64_t t0, uint32_t chunks,
		       uint32_t stored, uint32_t total, size_t nsyms)
{
	int64_t sid = forged_session(s, agent, boot_n, t0);
	if (sid < 0)
		return (int)sid;
	char boot[40];
	snprintf(boot, sizeof(boot), "forged-boot-%llu", (unsigned long long)boot_n);
	uint64_t seq = 1;
	uint64_t one[1] = {5};
	int rc = put_samples(s, sid, seq++, 300, 0, KADDR + 0x10, one, 1, 0);
	for (uint32_t c = 0; rc >= 0 && c < stored; c++)
		rc = put_ksyms_chunk(s, sid, seq++, boot, c, chunks, total, nsyms);
	return rc < 0 ? rc : 0;
}

static int build_forged(struct env *e)
{
	struct store *s;
	int rc = store_open(e->f.db, 0, &s);
	if (rc < 0)
		return rc;
	int64_t t0 = (int64_t)time(NULL) - 120;
	/* 16 chunks x 16384 names of 511 bytes: 128 MiB decoded */
	rc = ksyms_agent(s, "forged-ksyms", 1, t0, 16, 16, 16 * KSYMS_MAX_CHUNK_SYMS, KSYMS_MAX_CHUNK_SYMS);
	/* 12 chunks x 4096 names of 511 bytes: 2 MiB each (the chunk limit), 24 MiB in all */
	if (rc == 0)
		rc = ksyms_agent(s, "forged-ktable", 2, t0, 12, 12, 12 * KSYMS_CHUNK_SYMS, KSYMS_CHUNK_SYMS);
	/* one chunk of a table declaring KSYMS_MAX_TABLE_SYMS + 1 symbols */
	if (rc == 0)
		rc = ksyms_agent(s, "forged-total", 3, t0, KSYMS_MAX_TABLE_SYMS / KSYMS_MAX_CHUNK_SYMS + 1, 1,
				 KSYMS_MAX_TABLE_SYMS + 1, 3);
	int64_t sid = rc == 0 ? forged_session(s, "forged-lost", 4, t0) : rc;
	uint64_t c1[1] = {7}, big[2] = {1ull << 63, 1ull << 63}, rows[2] = {1ull << 62, 1ull << 62};
	for (uint64_t q = 1; sid > 0 && rc == 0 && q <= 2; q++)
		rc = put_samples(s, sid, q, 300, 0x400000, 0, c1, 1, (uint64_t)INT64_MAX);
	sid = rc == 0 ? forged_session(s, "forged-count", 5, t0) : rc;
	for (uint64_t q = 1; sid > 0 && rc == 0 && q <= 2; q++)
		rc = put_samples(s, sid, q, 300, 0x400000, 0, big, 1, 0);
	sid = rc == 0 ? forged_session(s, "forged-rows", 6, t0) : rc;
	e->sid_rows = sid;
	if (sid > 0 && rc == 0)
		rc = put_samples(s, sid, 1, 300, 0x400000, 0, rows, 2, 0);
	if (sid < 0)
		rc = (int)sid;
	if (rc == 0)
		rc = store_commit(s);
	store_close(s);
	if (rc < 0)
		return rc;
	/* forged-rows as a store written before sample_blocks: its rows only (this collector writes none) */
	sqlite3 *h;
	rc = sqlite3_open(e->f.db, &h) == SQLITE_OK &&
		     tp_rows_from_blocks(h, (long long)e->sid_rows) == SQLITE_OK
		 ? 0
		 : -EIO;
	sqlite3_close(h);
	return rc;
}

static int setup(void **state)
{
	if (tp_env_new(state, sizeof(struct env), "forged", false) < 0)
		return -1;
	struct env *e = *state;
	tp_bin("collector", e->coll, sizeof(e->coll));
	int rc = pf_build(&e->f, e->t.dir);
	if (rc == -ENOENT) {
		e->skip_reason = "g++ not installed (apt-get install g++): no C++ program to profile";
		return 0;
	}
	if (rc == 0)
		rc = build_forged(e);
	if (rc < 0)
		fprintf(stderr, "forged store: %s\n", strerror(-rc));
	return rc < 0 ? -1 : 0;
}

#define SKIP_IF_NEEDED(e)                                                                                    \
	do {                                                                                                 \
		if ((e)->skip_reason) {                                                                      \
			fprintf(stderr, "skipped: %s\n", (e)->skip_reason);                                  \
			skip();                                                                              \
		}                                                                                            \
	} while (0)

/* Run the collector with args (NULL-terminated), stdout and stderr to files; its exit status and
 * peak RSS (KiB). */
static int run_collector(struct env *e, const char *out, const char *err, long *rss_kib, ...)
{
	char *argv[32];
	int n = 0;
	argv[n++] = e->coll;
	va_list ap;
	va_start(ap, rss_kib);
	for (const char *a; n < 31 && (a = va_arg(ap, const char *));)
		argv[n++] = (char *)a;
	va_end(ap);
	argv[n] = NULL;
	pid_t pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0600),
		    x = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (o < 0 || x < 0 || dup2(o, 1) < 0 || dup2(x, 2) < 0)
			_exit(127);
		execv(argv[0], argv);
		_exit(127);
	}
	int st = 0;
	struct rusage ru;
	assert_int_equal(wait4(pid, &st, 0, &ru), pid);
	*rss_kib = ru.ru_maxrss;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* Every "total" in a JSON top table is at most its "samples". */
static void assert_shares_within(const char *json)
{
	const char *p = strstr(json, "\"samples\":");
	assert_non_null(p);
	unsigned long long samples = strtoull(p + 10, NULL, 10);
	int rows = 0;
	for (p = strstr(json, "\"total\":"); p; p = strstr(p + 1, "\"total\":"), rows++)
		assert_true(strtoull(p + 8, NULL, 10) <= samples);
	assert_true(rows > 0);
}

static void test_forged_views_cli_report_flame_diff(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400], err[400], svg[400];
	tp_env_path(&e->t, "report.json", out, sizeof(out));
	tp_env_path(&e->t, "report.err", err, sizeof(err));
	long rss = 0;
	assert_int_equal(run_collector(e, out, err, &rss, "report", "--store", e->f.db, "--since", "1h",
				       "--json", "--limit", "50", NULL),
			 0);
	char *t = tp_slurp(out);
	assert_non_null(t);
	fprintf(stderr, "# report: peak RSS %ld KiB\n%s", rss, t);
	if (getenv("FORGED_KEEP")) /* the store, for a look by hand */
		fprintf(stderr, "# store: %s\n", e->f.db);
	tp_dump_file(err);
	/* the honest agents: B's hot<int> 10 x 20, A's cold 10 x 30 + 10 x 5 */
	assert_non_null(strstr(t, "\"name\":\"int demo::hot\\u003cint\\u003e(int)\""));
	assert_non_null(strstr(t, "\"agent_id\":\"board-b\",\"self\":200,\"total\":200}"));
	assert_non_null(strstr(t, "\"agent_id\":\"board-a\",\"self\":350,\"total\":350}"));
	/* every forged session is read within the record limits: lost 2 x (2^32-1), no share over 100 % */
	assert_non_null(strstr(t, "\"lost\":8589934590,"));
	assert_non_null(strstr(t, "\"skipped\":0,"));
	assert_shares_within(t);
	free(t);
	/* each forged kernel table: one warning, naming the limit */
	assert_int_equal(tp_file_count(err, "kernel symbols of forged-ksyms boot"), 1);
	assert_int_equal(tp_file_count(err, "kernel symbols of forged-ktable boot"), 1);
	assert_int_equal(tp_file_count(err, "KSYMS_MAX_TABLE_NAME_BYTES"), 1);
	assert_int_equal(tp_file_count(err, "kernel symbols of forged-total boot forged-boot-3: 1 damaged"),
			 1);
	assert_true(rss < FORGED_RSS_MAX_KIB);

	/* --comm reads every session and keeps the honest process (forged-count's 2^33 claimed samples would
	 * leave it too narrow to draw) */
	tp_env_path(&e->t, "flame.svg", svg, sizeof(svg));
	tp_env_path(&e->t, "flame.out", out, sizeof(out));
	assert_int_equal(run_collector(e, out, err, &rss, "flame", "--store", e->f.db, "--since", "1h",
				       "--comm", "demo", "-o", svg, NULL),
			 0);
	fprintf(stderr, "# flame: peak RSS %ld KiB\n", rss);
	assert_true(tp_file_count(svg, "demo::hot&lt;int&gt;(int)") >= 1);
	assert_true(rss < FORGED_RSS_MAX_KIB);

	/* a diff of every session before B's start against every one after it (the forged among them) */
	char since_b[32];
	snprintf(since_b, sizeof(since_b), "%lld", (long long)e->f.t0_b_s);
	tp_env_path(&e->t, "diff.json", out, sizeof(out));
	assert_int_equal(run_collector(e, out, err, &rss, "diff", "--store", e->f.db, "--since", "1h",
				       "--until", since_b, "--since", since_b, "--json", NULL),
			 0);
	t = tp_slurp(out);
	assert_non_null(t);
	fprintf(stderr, "# diff: peak RSS %ld KiB\n%.300s\n", rss, t);
	assert_non_null(strstr(t, "\"samples_a\":880,"));
	assert_non_null(strstr(t, "int demo::hot\\u003cint\\u003e(int)"));
	free(t);
	assert_true(rss < FORGED_RSS_MAX_KIB);
}

/* The session list over the same store: forged-rows' counts overflowed SUM(count) and logged one error per
 * session per listing; now each row's count is taken within the record limit. `--session 2^63` was
 * clamped to 2^63-1 without a word: now refused. */
static void test_forged_views_sessions_and_session_ids(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	char out[400], err[400];
	tp_env_path(&e->t, "sessions.out", out, sizeof(out));
	tp_env_path(&e->t, "sessions.err", err, sizeof(err));
	long rss = 0;
	assert_int_equal(run_collector(e, out, err, &rss, "sessions", "--store", e->f.db, "--json", NULL), 0);
	tp_dump_file(err);
	assert_int_equal(tp_file_count(err, "error"), 0);
	assert_int_equal(tp_file_count(out, "\"counts_unreadable\":true"), 0);
	assert_int_equal(tp_file_count(out, "\"agent_id\":\"forged-rows\""), 1);
	assert_int_equal(run_collector(e, out, err, &rss, "report", "--store", e->f.db, "--session",
				       "9223372036854775808", NULL),
			 2);
	assert_int_equal(tp_file_count(err, "a positive --session N"), 1);
	assert_int_equal(
	    run_collector(e, out, err, &rss, "report", "--store", e->f.db, "--since", "0x10", NULL), 2);
	assert_int_equal(tp_file_count(err, "--since wants"), 1);
}

/* The live page over the same store: /profile (the series too: forged-rows is left out there) answers
 * 200 twice; each forged subject warned once in the collector's log; its peak RSS bounded. */
static void test_forged_views_live_profile(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	assert_true(strlen(e->f.db) < sizeof(e->t.db));
	memcpy(e->t.db, e->f.db, strlen(e->f.db) + 1);
	int port = 0;
	assert_int_equal(tp_env_start_collector_http(&e->t, &port), 0);
	for (int i = 0; i < 2; i++) {
		char *body = NULL;
		assert_int_equal(tp_http_get(port, "/profile", &body), 200);
		/* B's line in the CPU chart, the flame graph (where forged-count's 2^33 claimed samples leave
		 * the honest functions too narrow to draw: the page shows what the store holds) */
		bool ok =
		    strstr(body, ">demo (board-b)</text>") && strstr(body, "class=\"pf-flame\" id=\"flame\"");
		free(body);
		assert_true(ok);
	}
	long rss = tp_peak_rss_kib(e->t.collector);
	fprintf(stderr, "# collector --http: peak RSS %ld KiB after two /profile\n", rss);
	assert_true(rss > 0 && rss < FORGED_RSS_MAX_KIB);
	char needle[96];
	snprintf(needle, sizeof(needle), "query: session %lld of agent forged-rows left out",
		 (long long)e->sid_rows);
	assert_int_equal(tp_file_count(e->t.clog, needle), 1);
	assert_int_equal(tp_file_count(e->t.clog, "kernel symbols of forged-ksyms boot"), 1);
	assert_int_equal(tp_file_count(e->t.clog, "kernel symbols of forged-ktable boot"), 1);
}

/* Loopback: a forged agent sends each kind to the running collector; each is refused at decode with an
 * Error naming its limit, nothing of it stored, and the others' /profile still answers, the collector's
 * peak RSS under the bound. */
static int connect_port(int port)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	struct timeval tv = {.tv_sec = 10};
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

static void send_env(int fd, Prof__Envelope *env)
{
	uint8_t *f;
	size_t len;
	assert_int_equal(frame_encode(env, 1 << 20, &f, &len), 0);
	assert_int_equal(send(fd, f, len, MSG_NOSIGNAL), (ssize_t)len);
	free(f);
}

/* The collector's replies until it closes: whether an Error holding text came. */
static bool error_said(int fd, const char *text)
{
	struct frame_decoder d;
	assert_int_equal(frame_decoder_init(&d, 1 << 20), 0);
	bool found = false;
	for (int guard = 0; guard < 64; guard++) {
		const uint8_t *p;
		size_t len;
		if (frame_decoder_next(&d, &p, &len) == 1) {
			char err[160];
			Prof__Envelope *env = envelope_decode(p, len, err, sizeof(err));
			if (env && env->body_case == PROF__ENVELOPE__BODY_ERROR) {
				fprintf(stderr, "# collector said: %s\n", env->error->message);
				found |= strstr(env->error->message, text) != NULL;
			}
			if (env)
				prof__envelope__free_unpacked(env, NULL);
			continue;
		}
		size_t avail;
		uint8_t *dst = frame_decoder_space(&d, &avail);
		ssize_t n = dst ? recv(fd, dst, avail, 0) : -1;
		if (n <= 0)
			break; /* closed (or the 10 s timeout: then no Error came) */
		frame_decoder_commit(&d, (size_t)n);
	}
	frame_decoder_free(&d);
	return found;
}

static void forged_hello(int fd, const char *agent)
{
	Prof__Hello h = PROF__HELLO__INIT;
	h.schema_version = PROF_SCHEMA_VERSION;
	h.agent_id = (char *)agent;
	h.boot_id = 77;
	h.board = "forged";
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.body_case = PROF__ENVELOPE__BODY_HELLO;
	env.hello = &h;
	send_env(fd, &env);
}

static void test_forged_views_wire_refused_at_decode(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	int http = 0;
	if (e->t.collector <= 0) {
		memcpy(e->t.db, e->f.db, strlen(e->f.db) + 1);
		assert_int_equal(tp_env_start_collector_http(&e->t, &http), 0);
	}
	/* 1. a kernel-table chunk of 82 KB whose names decode to 8 MiB */
	int fd = connect_port(e->t.port);
	assert_true(fd >= 0);
	forged_hello(fd, "wire-ksyms");
	size_t n = KSYMS_MAX_CHUNK_SYMS;
	int64_t *d = calloc(n, sizeof(*d));
	uint32_t *sh = calloc(n, sizeof(*sh));
	size_t slen = KSYMS_NAME_MAX + 1 + 2 * (n - 1);
	uint8_t *suf = malloc(slen);
	assert_true(d && sh && suf);
	memset(suf, 'w', KSYMS_NAME_MAX);
	suf[KSYMS_NAME_MAX] = 0;
	for (size_t i = 1; i < n; i++) {
		d[i] = 16;
		sh[i] = KSYMS_NAME_MAX - 1;
		suf[KSYMS_NAME_MAX + 1 + 2 * (i - 1)] = (uint8_t)('a' + i % 26);
		suf[KSYMS_NAME_MAX + 2 + 2 * (i - 1)] = 0;
	}
	Prof__KernelSymbols m = PROF__KERNEL_SYMBOLS__INIT;
	m.kernel_boot_id = "wire-boot";
	m.chunks = 1;
	m.total = (uint32_t)n;
	m.n_addr_delta = m.n_shared = n;
	m.addr_delta = d;
	m.shared = sh;
	m.suffixes.data = suf;
	m.suffixes.len = slen;
	Prof__Envelope env = PROF__ENVELOPE__INIT;
	env.seq = 1;
	env.body_case = PROF__ENVELOPE__BODY_KERNEL_SYMBOLS;
	env.kernel_symbols = &m;
	send_env(fd, &env);
	assert_true(error_said(fd, "KSYMS_MAX_CHUNK_NAME_BYTES"));
	close(fd);
	free(d);
	free(sh);
	free(suf);
	/* 2. a Samples record with lost = 2^63-1, 3. one with a count of 2^63 */
	for (int k = 0; k < 2; k++) {
		fd = connect_port(e->t.port);
		assert_true(fd >= 0);
		forged_hello(fd, k ? "wire-count" : "wire-lost");
		int32_t pid[1] = {300};
		uint64_t ip[1] = {0x400000}, count[1] = {k ? 1ull << 63 : 1};
		uint32_t stk[1] = {0};
		Prof__Samples sm = PROF__SAMPLES__INIT;
		sm.backend = 2;
		sm.event_id = 1;
		sm.t_ns = 1000000000;
		sm.interval_ns = 1000000000;
		sm.lost = k ? 0 : (uint64_t)INT64_MAX;
		sm.n_pid = sm.n_tid = sm.n_ip = sm.n_stack_id = sm.n_count = 1;
		sm.pid = sm.tid = pid;
		sm.ip = ip;
		sm.stack_id = stk;
		sm.count = count;
		Prof__Envelope se = PROF__ENVELOPE__INIT;
		se.seq = 1;
		se.body_case = PROF__ENVELOPE__BODY_SAMPLES;
		se.samples = &sm;
		send_env(fd, &se);
		assert_true(error_said(fd, k ? "VALIDATE_MAX_SAMPLE_COUNT" : "VALIDATE_MAX_SAMPLE_LOST"));
		close(fd);
	}
	assert_int_equal(tp_db_int(e->f.db, "SELECT COUNT(*) FROM sessions WHERE agent_id LIKE 'wire-%%'"),
			 0);
	char *body = NULL;
	int port = http;
	if (!port) { /* the live test's collector: its --http port is in its command line */
		char path[64], cmd[4096] = "";
		snprintf(path, sizeof(path), "/proc/%d/cmdline", (int)e->t.collector);
		FILE *f = fopen(path, "r");
		size_t got = f ? fread(cmd, 1, sizeof(cmd) - 1, f) : 0;
		if (f)
			fclose(f);
		for (size_t i = 0; i + 1 < got; i += strlen(cmd + i) + 1)
			if (strcmp(cmd + i, "--http") == 0)
				port = atoi(strrchr(cmd + i + 7, ':') + 1);
	}
	assert_true(port > 0);
	assert_int_equal(tp_http_get(port, "/profile", &body), 200);
	bool ok = strstr(body, ">demo (board-b)</text>") != NULL;
	free(body);
	assert_true(ok);
	long rss = tp_peak_rss_kib(e->t.collector);
	fprintf(stderr, "# collector: peak RSS %ld KiB after the forged frames\n", rss);
	assert_true(rss > 0 && rss < FORGED_RSS_MAX_KIB);
}

/* A later table for the same (agent, kernel boot) that differs from the stored one: the first is kept
 * and the difference said once (it was dropped without a word). Runs last: it adds a session. */
static void test_forged_views_later_table_differs_kept_first(void **state)
{
	struct env *e = *state;
	SKIP_IF_NEEDED(e);
	const char *q =
	    "SELECT LENGTH(data) FROM kernel_symbols WHERE agent_id = 'forged-ktable' AND chunk = 0";
	int64_t before = tp_db_int(e->f.db, q);
	assert_true(before > 0);
	char errpath[400];
	tp_env_path(&e->t, "differs.err", errpath, sizeof(errpath));
	fflush(stderr);
	int saved = dup(2), fd = open(errpath, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	assert_true(saved >= 0 && fd >= 0);
	dup2(fd, 2);
	close(fd);
	struct store *s;
	int rc = store_open(e->f.db, 0, &s);
	int64_t sid = rc == 0 ? forged_session(s, "forged-ktable", 20, (int64_t)time(NULL) - 60) : rc;
	/* the same boot's chunks 0 and 1 again, each of 100 symbols: not what was stored */
	for (uint32_t c = 0; sid > 0 && rc == 0 && c < 2; c++)
		rc = put_ksyms_chunk(s, sid, 1 + c, "forged-boot-2", c, 12, 12 * KSYMS_CHUNK_SYMS, 100);
	if (rc == 0)
		rc = store_commit(s);
	if (s)
		store_close(s);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	tp_dump_file(errpath);
	assert_true(sid > 0);
	assert_int_equal(rc, 0);
	assert_int_equal(tp_file_count(errpath, "differ from the table its agent sent before for that boot"),
			 1);
	assert_int_equal(tp_db_int(e->f.db, q), before);
	assert_int_equal(
	    tp_db_int(e->f.db, "SELECT COUNT(*) FROM kernel_symbols WHERE agent_id = 'forged-ktable'"), 12);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forged_views_cli_report_flame_diff),
	    cmocka_unit_test(test_forged_views_sessions_and_session_ids),
	    cmocka_unit_test(test_forged_views_live_profile),
	    cmocka_unit_test(test_forged_views_wire_refused_at_decode),
	    cmocka_unit_test(test_forged_views_later_table_differs_kept_first),
	};
	return cmocka_run_group_tests(tests, setup, tp_env_free);
}
